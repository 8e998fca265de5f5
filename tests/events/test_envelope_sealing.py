"""Sealing writes envelopes with orjson where it writes the canonical bytes: every text and hash
must be exactly what ``canonical_json`` + sha256 (the reference, written out here) gives, on the
envelopes of whole games, the stored golden export and the edge cases; what the canonical encoder
refuses still raises ``InvalidBatch`` with its message."""

from __future__ import annotations

import dataclasses
import enum
import hashlib
import json
import uuid
from collections import OrderedDict
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import orjson
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from bots import arena
from engine.state import canonical_json
from events.envelope import _orjson_canonical
from events.store import GENESIS_HASH, Envelope, InvalidBatch, seal_batch, verify_chain

TS = "2026-01-02T03:04:05.678901Z"
GOLDEN_EXPORT = Path(__file__).resolve().parents[1] / "golden" / "export-rules2-2p.jsonl"


# -- the reference: how envelopes were sealed before orjson -----------------------------------
def ref_body(env: Envelope) -> dict[str, Any]:
    return {
        "type": env.type,
        "schema_version": env.schema_version,
        "game_id": env.game_id,
        "seq": env.seq,
        "visibility": env.visibility,
        "command_id": env.command_id,
        "actor": env.actor,
        "ts": env.ts,
        "payload": env.payload,
        "prev_hash": env.prev_hash,
    }


def ref_hash(env: Envelope) -> str:
    return hashlib.sha256(canonical_json(ref_body(env)).encode("utf-8")).hexdigest()


def ref_text(env: Envelope) -> str:
    return canonical_json({**ref_body(env), "hash": env.hash})


def assert_sealed_as_before(env: Envelope) -> None:
    expected_hash = ref_hash(env)
    assert env.hash == expected_hash
    assert env.compute_hash() == expected_hash
    text = ref_text(env)
    assert env.checked_json() == text
    assert env.to_json() == text
    again = env.sealed()
    assert again.hash == expected_hash and again.checked_json() == text
    # json.loads: orjson.loads (from_json) reads integers past 64 bits as floats
    read = Envelope.from_dict(json.loads(text))
    assert read.hash == expected_hash
    assert read.compute_hash() == expected_hash
    assert read.checked_json() == text and read.to_json() == text


def seal_one(payload: dict[str, Any], **fields: Any) -> Envelope:
    return Envelope.from_event(
        {"type": "Probe", "v": 1, **payload},
        game_id=fields.get("game_id", "g-1"),
        seq=fields.get("seq", 1),
        visibility=fields.get("visibility", "public"),
        command_id=fields.get("command_id", "c-1"),
        actor=fields.get("actor", "seat:0"),
        ts=fields.get("ts", TS),
        prev_hash=fields.get("prev_hash", GENESIS_HASH),
    )


# -- whole games ------------------------------------------------------------------------------
def _batches(events: list[dict[str, Any]]) -> list[list[dict[str, Any]]]:
    """One batch per command, as the service seals them (a command's events follow it)."""
    out: list[list[dict[str, Any]]] = []
    for event in events:
        if event["type"] == "CommandSubmitted" or not out:
            out.append([])
        out[-1].append(event)
    return out


def _visibility(event: dict[str, Any]) -> str:
    return f"seat:{event['seat']}" if event["type"] == "DiceRolled" else "public"


@pytest.mark.parametrize(
    ("players", "bots"),
    [(2, ["random"]), (3, ["heuristic", "random"]), (4, ["random"]), (5, ["heuristic"])],
)
def test_envelopes_of_whole_games_are_sealed_byte_for_byte_as_before(
    players: int, bots: list[str]
) -> None:
    rec = arena.play_game(f"sealing-{players}", players, bots)
    link, version, sealed = GENESIS_HASH, 0, []
    for i, batch in enumerate(_batches(rec.events)):
        envs = seal_batch(
            batch,
            game_id="g-sealing-ü",  # non-ASCII in a top-level field too
            expected_version=version,
            prev_hash=link,
            command_id=f"cmd-{i}",
            actor="seat:0" if i % 2 else "system",
            ts=TS,
            visibility=_visibility,
        )
        for env in envs:
            assert env.prev_hash == link
            assert _orjson_canonical(ref_body(env)) is not None  # the fast path was taken
            assert_sealed_as_before(env)
            read = Envelope.from_json(env.checked_json())
            assert read == env and read.compute_hash() == env.hash
            link = env.hash
        version += len(envs)
        sealed.extend(envs)
    assert version == len(rec.events) > 300
    assert verify_chain(sealed) == link


def test_the_stored_golden_export_reads_back_and_rewrites_byte_for_byte() -> None:
    lines = GOLDEN_EXPORT.read_text(encoding="utf-8").splitlines()
    envs = [Envelope.from_json(line) for line in lines]
    for line, env in zip(lines, envs, strict=True):
        assert env.compute_hash() == env.hash == ref_hash(env)
        assert env.to_json() == line == env.checked_json()
        assert Envelope.from_dict(orjson.loads(line)) == env
    verify_chain(envs)


# -- edge cases -------------------------------------------------------------------------------
class Colour(enum.Enum):
    RED = 1


class Level(enum.IntEnum):
    HIGH = 3


class Name(str, enum.Enum):  # noqa: UP042 - the mixin form on purpose
    ALICE = "alice"


class Text(str):
    pass


class Number(int):
    pass


@dataclasses.dataclass
class Point:
    x: int


ALL_CHARACTERS = "".join(chr(c) for c in range(0x110000) if not 0xD800 <= c <= 0xDFFF)
EDGE_PAYLOADS: list[Any] = [
    {},
    {"none": None, "t": True, "f": False, "empty": [], "nested": {"": {}}},
    {"floats": [1.5, 0.1, -0.0, 2.0, 1e16, 1e-7, 123456789.125, 5e-324, 1.7976931348623157e308]},
    {"float": 3.0},
    {"ints": [0, -1, 2**31, 2**53 + 1, 2**63 - 1, 2**63, 2**64 - 1, -(2**63)]},
    {"big": 2**64},
    {"big": -(2**63) - 1},
    {"big": 10**40, "small": 1},
    {"text": 'é ü ß 中文 🎲 \u2028\u2029 \x7f " \\ / \t\n\r\b\f\x00\x01\x1f'},
    {"controls": "".join(chr(c) for c in range(0x20))},
    {"all": ALL_CHARACTERS},
    {"\uffff": 1, "\U00010000": 2, "é": 3, "e": 4, "E": 5, "": 6, "\x00": 7, "z\U0001f3b2": 8},
    {"looks": "null 1.5 1e5 true NaN Infinity"},
    {"tuple": (1, "a", (None, [True])), "list": [(), []]},
    {"int_keys": {1: "a", 2: "b"}},
    {"bool_key": {True: 1}},
    {"none_key": {None: 1}},
    {"float_key": {1.5: 1}},
    {"subclasses": [Text("x"), Number(7), Level.HIGH, Name.ALICE]},
    {"ordered": OrderedDict([("b", 1), ("a", 2)])},
    {"deep": [[[[[[[[[[[[[[[[[[[[1]]]]]]]]]]]]]]]]]]]]},
    {"shared": [[1, 2]] * 3},
]
DEEP_LIST: list[Any] = [0]
for _ in range(400):  # deeper than orjson (and the walk) go; canonical_json writes it
    DEEP_LIST = [DEEP_LIST]
EDGE_PAYLOADS.append({"very_deep": DEEP_LIST})


@pytest.mark.parametrize("payload", EDGE_PAYLOADS, ids=range(len(EDGE_PAYLOADS)))
def test_edge_case_payloads_are_sealed_as_before(payload: dict[str, Any]) -> None:
    assert_sealed_as_before(seal_one(payload))


@pytest.mark.parametrize(
    "fields",
    [
        {"game_id": "jeu-ü-🎲"},
        {"seq": 2**70},
        {"command_id": None},
        {"actor": Text("seat:1")},
        {"game_id": 7},
        {"seq": 3.0},
        {"seq": True},
    ],
    ids=str,
)
def test_unusual_top_level_fields_are_sealed_as_before(fields: dict[str, Any]) -> None:
    assert_sealed_as_before(seal_one({"x": 1}, **fields))


def _circular() -> list[Any]:
    loop: list[Any] = [1]
    loop.append(loop)
    return loop


def _circular_dict() -> dict[str, Any]:
    loop: dict[str, Any] = {}
    loop["me"] = [loop, loop]
    return loop


NOT_SERIALISABLE: list[Any] = [
    float("nan"),
    float("inf"),
    -float("inf"),
    [1, float("nan")],
    object(),
    {1, 2},
    b"bytes",
    bytearray(b"x"),
    uuid.UUID(int=5),
    Colour.RED,
    orjson.Fragment(b"[1,2]"),
    datetime(2026, 1, 1, tzinfo=UTC),
    datetime(2026, 1, 1, tzinfo=UTC).date(),
    Point(1),
    1 + 2j,
    {"mixed": "keys", 1: 2},
    {(1, 2): "tuple key"},
    _circular(),
    _circular_dict(),
]


@pytest.mark.parametrize("value", NOT_SERIALISABLE, ids=range(len(NOT_SERIALISABLE)))
def test_what_the_canonical_encoder_refuses_still_raises_invalid_batch(value: Any) -> None:
    env = Envelope(
        type="Probe",
        schema_version=1,
        game_id="g-1",
        seq=4,
        visibility="public",
        command_id="c",
        actor="a",
        ts=TS,
        payload={"bad": value},
    )
    with pytest.raises((TypeError, ValueError)) as reference:
        canonical_json(ref_body(env))
    expected = (
        f"event Probe (seq 4) is not JSON-serialisable ({reference.value}); events must hold "
        f"only dicts, lists, str, int, float (finite), bool and None"
    )
    with pytest.raises(InvalidBatch) as raised:
        seal_one({"bad": value}, seq=4)
    assert str(raised.value) == expected
    for call in (env.compute_hash, env.sealed, env.checked_json):
        with pytest.raises(InvalidBatch) as raised:
            call()
        assert str(raised.value) == expected
    with pytest.raises((TypeError, ValueError)) as reference:
        canonical_json(env.to_dict())
    with pytest.raises(type(reference.value)) as direct:
        env.to_json()
    assert str(direct.value) == str(reference.value)


def test_a_lone_surrogate_fails_as_before() -> None:
    """The canonical encoder writes it; UTF-8 cannot (UnicodeEncodeError, not InvalidBatch)."""
    with pytest.raises(UnicodeEncodeError):
        seal_one({"text": "a\ud800b"})
    env = Envelope("Probe", 1, "g", 1, "public", "c", "a", TS, {"text": "\udfff"})
    with pytest.raises(UnicodeEncodeError):
        env.compute_hash()
    assert env.to_json() == canonical_json(env.to_dict())  # text, so no encoding needed


json_values = st.recursive(
    st.none()
    | st.booleans()
    | st.integers()
    | st.integers(min_value=-(2**63), max_value=2**64 - 1)
    | st.floats(allow_nan=False, allow_infinity=False)
    | st.text(),
    lambda children: (
        st.lists(children, max_size=4)
        | st.dictionaries(st.text(max_size=8), children, max_size=4)
        | st.tuples(children, children)
    ),
    max_leaves=20,
)


@settings(max_examples=400, deadline=None)
@given(
    st.dictionaries(
        st.text(max_size=10).filter(lambda k: k not in ("type", "v")), json_values, max_size=6
    )
)
def test_any_json_payload_is_sealed_as_before(payload: dict[str, Any]) -> None:
    try:
        env = seal_one(payload)
    except UnicodeEncodeError:  # a lone surrogate, as before (test above)
        return
    assert_sealed_as_before(env)


# -- reading back -----------------------------------------------------------------------------
def test_from_dict_builds_what_the_constructor_builds() -> None:
    env = seal_one({"x": [1, 2]})
    d = env.to_dict()
    read = Envelope.from_dict(d)
    assert read == Envelope(**d)
    assert read._json is None  # re-encoded and checked on append
    assert read.checked_json() == env.checked_json()
    stale = Envelope.from_dict({**d, "hash": "0" * 64})
    with pytest.raises(InvalidBatch, match="stale or missing hash"):
        stale.checked_json()


@pytest.mark.parametrize(
    "change",
    [
        lambda d: d.pop("ts"),
        lambda d: d.update(extra=1),
        lambda d: (d.pop("ts"), d.update(extra=1)),
        lambda d: d.update(_json="{}"),
        lambda d: (d.pop("hash"), d.update(_json="{}")),
    ],
)
def test_from_dict_refuses_missing_or_unknown_fields_as_before(change: Any) -> None:
    d = seal_one({"x": 1}).to_dict()
    change(d)
    missing = [f for f in ("type", "ts", "hash") if f not in d]
    with pytest.raises(ValueError, match="missing fields") as raised:
        Envelope.from_dict(d)
    assert f"missing fields {missing}" in str(raised.value)


def test_from_dict_accepts_any_mapping_and_subclasses_use_their_constructor() -> None:
    d = seal_one({"x": 1}).to_dict()
    assert Envelope.from_dict(OrderedDict(d)) == Envelope(**d)

    @dataclasses.dataclass(frozen=True, slots=True)
    class Checked(Envelope):
        def __post_init__(self) -> None:
            object.__setattr__(self, "actor", self.actor.upper())

    assert Checked.from_dict(d).actor == "SEAT:0"
