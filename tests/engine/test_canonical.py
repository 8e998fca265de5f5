"""``engine.canonical`` (orjson when it writes the same) gives exactly the standard library's bytes
(the format's definition, written out here), or the same error, for every event of whole games,
for the values orjson writes its own way, and for any JSON value."""

from __future__ import annotations

import dataclasses
import datetime
import enum
import json
import math
from typing import Any

import orjson
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from bots import arena
from engine.canonical import canonical_bytes, canonical_json

_REFERENCE = json.JSONEncoder(
    sort_keys=True, separators=(",", ":"), ensure_ascii=False, allow_nan=False
)


def reference(value: Any) -> bytes:
    return _REFERENCE.encode(value).encode("utf-8")


def test_every_event_of_whole_games() -> None:
    for players in (2, 3, 4, 5):
        rec = arena.play_game(f"canonical-bytes-{players}", players, ["random", "heuristic"])
        for event in rec.events:
            assert canonical_bytes(event) == reference(event), event["type"]
            assert canonical_json(event) == reference(event).decode("utf-8")


class Colour(enum.StrEnum):
    RED = "red"


@dataclasses.dataclass
class Point:
    x: int


@pytest.mark.parametrize(
    "value",
    [
        {"rng": 2**320 + 5, "seq": 3},  # past 64 bits
        {1: "a", 2: "b"},  # integer keys
        {"f": 1e16, "g": 1e-7, "h": 0.1, "i": 3.0},  # floats written otherwise by orjson
        [1e-05, {"deep": [[2.5e-300]]}, None],  # a float next to null, deep inside
        1e-05,  # a float on its own
        {"x": None, "v": "3.5e+7", "w": "null."},  # float marks in text: the same bytes still
        {"text": "caf\u00e9 \U0001f600 \u2028 \x7f \x00 \n \t \u001f"},
        {"enum": Colour.RED, "tuple": (1, 2)},
        {"seed": "1e5", "name": "v2.0"},  # text that looks like a float
        [None, True, False, -(2**63), 2**64 - 1],
    ],
)
def test_the_same_bytes(value: Any) -> None:
    assert canonical_bytes(value) == reference(value)
    assert canonical_json(value) == reference(value).decode("utf-8")


@pytest.mark.parametrize(
    "value",
    [
        {"x": math.nan},
        {"x": math.inf},
        {"p": Point(1)},
        {"t": datetime.date(2026, 1, 1)},
        {"s": "\ud800"},  # a lone surrogate is no UTF-8
    ],
)
def test_the_same_refusal(value: Any) -> None:
    with pytest.raises((ValueError, TypeError)) as want:
        reference(value)
    with pytest.raises(want.type):
        canonical_bytes(value)
    with pytest.raises(want.type):
        canonical_json(value)


def test_a_fragment_is_written_as_it_is_and_as_its_value_where_orjson_is_not_used() -> None:
    part = orjson.Fragment(canonical_bytes({"b": [1, None], "a": "x.y"}))
    assert canonical_bytes({"side": part, "n": 1}) == b'{"n":1,"side":{"a":"x.y","b":[1,null]}}'
    assert canonical_bytes({"side": part, "big": 2**70}) == reference(
        {"side": {"a": "x.y", "b": [1, None]}, "big": 2**70}
    )


json_values = st.recursive(
    st.none()
    | st.booleans()
    | st.integers()
    | st.floats(allow_nan=True, allow_infinity=True)
    | st.text(),
    lambda children: (
        st.lists(children, max_size=4) | st.dictionaries(st.text(max_size=6), children, max_size=4)
    ),
    max_leaves=20,
)


@settings(max_examples=300, deadline=None)
@given(json_values)
def test_any_json_value_gives_the_reference_bytes_or_its_error(value: Any) -> None:
    try:
        want: bytes | type[Exception] = reference(value)
    except (TypeError, ValueError) as exc:
        want = type(exc)
    if isinstance(want, bytes):
        assert canonical_bytes(value) == want
    else:
        with pytest.raises(want):
            canonical_bytes(value)
