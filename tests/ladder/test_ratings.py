"""Ratings, head-to-head statistics and pairing of the ladder."""

from __future__ import annotations

import pytest

from bots.arena import play_game
from engine.rng import Rng
from ladder.pairing import choose_table, seatings
from ladder.ratings import RatingTable, Result, rebuild
from ladder.stats import head_to_head, wilson


def test_ties_share_a_rank() -> None:
    r = Result("g", ("a", "b", "c", "d"), (30, 30, 25, 30), (5, 5, 9, 4))
    assert r.ranks() == [1, 1, 4, 3]


def test_winner_gains_and_a_tie_moves_nobody_apart() -> None:
    t = RatingTable()
    t.apply(Result("g1", ("a", "b"), (40, 20), (0, 0)))
    assert t.entries["a"].mu > t.entries["b"].mu
    assert t.entries["a"].wins == 1 and t.entries["b"].wins == 0
    u = RatingTable()
    u.apply(Result("g2", ("a", "b"), (30, 30), (3, 3)))
    assert u.entries["a"].mu == pytest.approx(u.entries["b"].mu)
    assert u.entries["a"].wins == 0.5


def test_an_entrant_cannot_hold_two_seats() -> None:
    with pytest.raises(ValueError, match="two seats"):
        RatingTable().apply(Result("g", ("a", "a"), (1, 2), (0, 0)))


def test_heuristic_rates_above_random_and_rebuild_is_equal() -> None:
    results = []
    names = ["heuristic", "random-a", "random-b"]
    for i in range(30):
        order = names[i % 3 :] + names[: i % 3]
        bots = ["heuristic" if n == "heuristic" else "random" for n in order]
        rec = play_game(f"ladder-test:{i}", 3, bots)
        results.append(Result.from_game(f"g{i}", order, rec.state.scores))
    live = RatingTable()
    for r in results:
        live.apply(r)
    board = live.leaderboard()
    assert board[0]["entrant"] == "heuristic"
    assert rebuild(results).to_dict() == live.to_dict()
    assert len(live.entries["heuristic"].history) == 30


def test_wilson_interval() -> None:
    lo, hi = wilson(10, 10)
    assert hi == pytest.approx(1.0) and 0.69 < lo < 0.73
    lo, hi = wilson(5, 10)
    assert lo < 0.5 < hi
    assert wilson(0, 0) == (0.0, 1.0)


def test_head_to_head_counts_each_pair_both_ways() -> None:
    rows = head_to_head([Result("g", ("a", "b", "c"), (10, 20, 20), (0, 1, 1))])
    by = {(r["a"], r["b"]): r for r in rows}
    assert by[("b", "a")]["wins"] == 1 and by[("a", "b")]["losses"] == 1
    assert by[("b", "c")]["ties"] == 1 and by[("b", "c")]["win_rate"] == 0.5


def test_pairing_prefers_close_ratings_and_fresh_opponents() -> None:
    ratings = {"a": 10.0, "b": 9.5, "c": 0.0, "d": -5.0}
    games = {"a": 0, "b": 5, "c": 5, "d": 5}
    assert choose_table(list(ratings), 2, ratings, games, {}, Rng(1)) == ["a", "b"]
    met = {("a", "b"): 10}
    assert choose_table(list(ratings), 2, ratings, games, met, Rng(1)) == ["a", "c"]
    with pytest.raises(ValueError, match="needs 5 entrants"):
        choose_table(list(ratings), 5, ratings, games, {}, Rng(1))


def test_duplicate_seatings_rotate_every_seat() -> None:
    rows = seatings(["a", "b", "c"], True, Rng(3))
    assert len(rows) == 3
    for seat in range(3):
        assert {r[seat] for r in rows} == {"a", "b", "c"}
    assert len(seatings(["a", "b"], False, Rng(3))) == 1
