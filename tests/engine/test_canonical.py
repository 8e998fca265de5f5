"""``canonical_bytes`` (orjson when it writes the same) gives exactly ``canonical_json``'s bytes, or
the same error, for every event of whole games and for the values orjson writes its own way."""

from __future__ import annotations

import dataclasses
import datetime
import enum
import math
from typing import Any

import pytest

from bots import arena
from engine.state import canonical_bytes, canonical_json


def test_every_event_of_whole_games() -> None:
    for players in (2, 3, 4, 5):
        rec = arena.play_game(f"canonical-bytes-{players}", players, ["random", "heuristic"])
        for event in rec.events:
            assert canonical_bytes(event) == canonical_json(event).encode("utf-8"), event["type"]


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
        {"text": "caf\u00e9 \U0001f600 \u2028 \x7f \x00 \n \t \u001f"},
        {"enum": Colour.RED, "tuple": (1, 2)},
        {"seed": "1e5", "name": "v2.0"},  # text that looks like a float
        [None, True, False, -(2**63), 2**64 - 1],
    ],
)
def test_the_same_bytes(value: Any) -> None:
    assert canonical_bytes(value) == canonical_json(value).encode("utf-8")


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
        canonical_json(value).encode("utf-8")
    with pytest.raises(want.type):
        canonical_bytes(value)
