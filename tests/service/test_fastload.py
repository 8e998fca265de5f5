"""The compiled loader of a command's body (``service.fastload``) gives exactly what the schema
gives - same keys in the same order, same values - for every command bots play, and for any other
body either the same or ``MISS`` (then the schema answers, with its errors): it never accepts what
the schema refuses."""

from __future__ import annotations

import copy
import json
from functools import cache
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from marshmallow import Schema, ValidationError, fields

import engine
from bots import get_bot
from engine.rng import Rng
from service.fastload import MISS, Uncompilable, compile_schema, loader_for
from service.schemas.commands import COMMAND_SCHEMAS
from service.schemas.requests import CommandRequestSchema

SCHEMA = CommandRequestSchema()
LOAD = loader_for(SCHEMA)
REFUSED = object()


def _same(a: Any, b: Any) -> bool:
    """Equal, keys in the same order (the stdlib encoder: integers past 64 bits too)."""
    return json.dumps(a) == json.dumps(b)


def schema_load(body: Any) -> Any:
    try:
        return SCHEMA.load(body)
    except ValidationError:
        return REFUSED


@cache
def played_bodies() -> list[dict[str, Any]]:
    """The command bodies of bot games (random and heuristic, 2 to 5 players)."""
    out = []
    for i, (players, bot) in enumerate(
        [(2, "random"), (3, "heuristic"), (4, "random"), (5, "heuristic"), (2, "heuristic")]
    ):
        state = engine.replay(engine.create(f"fastload:{i}", players, {}, None))
        b, rng = get_bot(bot), Rng(i)
        n = 0
        while not state.over:
            seat = min(engine.pending(state))
            decision = engine.legal(state, seat)
            assert decision is not None
            view = engine.observe(state, seat) if b.needs_view else None
            cmd = b.act(decision, view, rng)
            body: dict[str, Any] = {"command_id": f"c{n}", "command": cmd}
            body["expected_version" if n % 2 else "decision_id"] = state.seq
            out.append(body)
            engine.evolve(state, engine.command_submitted(seat, cmd))
            engine.play(state, seat, cmd)
            n += 1
    return out


def test_every_played_command_loads_the_same_through_the_compiled_loader() -> None:
    assert LOAD is not None
    bodies = played_bodies()
    kinds = {b["command"]["kind"] for b in bodies}
    assert len(bodies) > 1000 and len(kinds) >= 8, kinds
    for body in bodies:
        quick = LOAD(body)
        assert quick is not MISS, body  # the lighter path is the one taken
        assert _same(quick, SCHEMA.load(body)), body


JSON_VALUES = st.recursive(
    st.none()
    | st.booleans()
    | st.integers(min_value=-(2**70), max_value=2**70)
    | st.sampled_from([0, 1, 3.0, 2.5, -1, 2**53, 1000, 55, 56])
    | st.text(max_size=8)
    | st.sampled_from(["assign", "explore", "develop", "trade", "world", "x" * 129, "a\n"]),
    lambda inner: st.lists(inner, max_size=3) | st.dictionaries(st.text(max_size=6), inner),
    max_leaves=6,
)


def _paths(value: Any, path: tuple[Any, ...] = ()) -> list[tuple[Any, ...]]:
    out = [path]
    if isinstance(value, dict):
        for k, v in value.items():
            out += _paths(v, (*path, k))
    elif isinstance(value, list):
        for i, v in enumerate(value):
            out += _paths(v, (*path, i))
    return out


@st.composite
def mutated_bodies(draw: st.DrawFn) -> Any:
    body = copy.deepcopy(draw(st.sampled_from(played_bodies())))
    for _ in range(draw(st.integers(1, 3))):
        paths = _paths(body)
        path = draw(st.sampled_from(paths))
        action = draw(st.sampled_from(["replace", "drop", "add"]))
        if not path:
            if action == "replace":
                body = draw(JSON_VALUES)
            continue
        parent = body
        for step in path[:-1]:
            parent = parent[step]
        last = path[-1]
        if action == "replace":
            parent[last] = draw(JSON_VALUES)
        elif action == "drop":
            del parent[last]
        elif isinstance(parent, dict):
            parent[draw(st.text(max_size=6))] = draw(JSON_VALUES)
        else:
            parent.insert(last, draw(JSON_VALUES))
    return body


@settings(max_examples=1500, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(mutated_bodies())
def test_any_other_body_is_loaded_the_same_or_left_to_the_schema(body: Any) -> None:
    assert LOAD is not None
    quick = LOAD(body)
    if quick is MISS:
        return
    full = schema_load(body)
    assert full is not REFUSED, f"the compiled loader accepted what the schema refuses: {body!r}"
    assert _same(quick, full)


def test_every_command_kind_is_compiled() -> None:
    for kind, schema in COMMAND_SCHEMAS.items():
        compile_schema(schema())  # raises Uncompilable if a field type is not mirrored
        assert kind


class _Defaulted(Schema):
    n = fields.Integer(load_default=3)


def test_a_schema_it_cannot_mirror_is_left_to_marshmallow() -> None:
    with pytest.raises(Uncompilable):
        compile_schema(_Defaulted())
    assert loader_for(_Defaulted()) is None
