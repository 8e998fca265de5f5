"""Scoring takes its numbers from the tile data (``engine/data/tiles.yaml``): Galactic Renaissance's
thresholds as printed, going on as triangular numbers past the last one (the tile's rule)."""

from __future__ import annotations

import dataclasses

from engine.catalogue import CARDS
from engine.scoring import bonus_value
from engine.state import PlayerState

RENAISSANCE = next(c for c in CARDS.values() if c.name == "Galactic Renaissance")


def _triangular_rule(chips: int) -> int:
    """The tile's rule: the largest n with n(n+1)/2 <= chips."""
    n = 0
    while (n + 1) * (n + 2) // 2 <= chips:
        n += 1
    return n


def test_renaissance_scores_the_printed_thresholds_and_the_rule_past_them() -> None:
    assert RENAISSANCE.endgame_bonus is not None
    assert RENAISSANCE.endgame_bonus["thresholds"][-1] == 55
    for chips in range(0, 200):
        player = PlayerState(seat=0, faction=0, home=0, vp=chips)
        assert bonus_value(player, RENAISSANCE) == _triangular_rule(chips), chips


def test_renaissance_reads_its_thresholds_from_the_data() -> None:
    assert RENAISSANCE.endgame_bonus is not None
    other = dataclasses.replace(
        RENAISSANCE, endgame_bonus={**RENAISSANCE.endgame_bonus, "thresholds": [2, 5, 9]}
    )
    scores = [bonus_value(PlayerState(seat=0, faction=0, home=0, vp=v), other) for v in range(16)]
    #          0  1  2  3  4  5  6  7  8  9 10 11 12 13 14 15  (next thresholds: 14, 20 ...)
    assert scores == [0, 0, 1, 1, 1, 2, 2, 2, 2, 3, 3, 3, 3, 3, 4, 4]
