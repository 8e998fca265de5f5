"""Ambition play-outs: the built-in bots play whole Ambition games with the synthetic components
(made-up faces and objectives, tests/data/ambition-synthetic.yaml), with and without objectives,
at 2-5 seats, and the invariants (tests/engine/invariants.py) are checked after every event.

2,000 games in the whole suite (``slow``: 250 per seat count and objectives setting, the seats
played in turn by the random bot alone, the heuristic bot alone, and the two mixed); the quick
tier plays a few of each kind. A game that raises is a crash, a failed invariant a violation;
both are counted over the whole run and listed with their seeds, so one bad game does not hide
the others. Every game must finish with scores, and every 25th replays to the same state.
"""

from __future__ import annotations

import time
from collections.abc import Sequence
from typing import Any

import pytest

import engine
from bots.arena import play_game

from .invariants import check

#: the seats' bots, cycled over the games (each line-up cycled over the seats)
LINEUPS: tuple[tuple[str, ...], ...] = (("random",), ("heuristic",), ("random", "heuristic"))
#: the whole suite's play-out: 250 games per (seat count, objectives) = 2,000 games
WHOLE_GAMES = 250
QUICK_GAMES = 3


def _play(
    tag: str, players: int, objectives: bool, games: int
) -> tuple[dict[str, list[str]], float]:
    """Play ``games`` Ambition games; the seeds of the crashed, violating and unfinished ones."""
    bad: dict[str, list[str]] = {"crashes": [], "violations": [], "unfinished": []}
    options = {"ambition": True, "objectives": objectives}
    started = time.perf_counter()
    for i in range(games):
        seed = f"{tag}:{players}:{int(objectives)}:{i}"
        bots: Sequence[str] = LINEUPS[i % len(LINEUPS)]
        try:
            rec = play_game(seed, players, bots, options=options, on_event=check)
        except AssertionError as exc:
            bad["violations"].append(f"{seed} {bots}: {str(exc).splitlines()[0]}")
            continue
        except Exception as exc:  # a crash: counted, listed, the run goes on
            bad["crashes"].append(f"{seed} {bots}: {type(exc).__name__}: {exc}")
            continue
        if not rec.finished or not (rec.state.scores and rec.state.winners):
            bad["unfinished"].append(seed)
        elif i % 25 == 0:
            replayed = engine.state_hash(engine.replay(rec.events))
            if replayed != engine.state_hash(rec.state):
                bad["violations"].append(f"{seed} {bots}: the log replays to another state")
    return bad, time.perf_counter() - started


def _report(
    players: int, objectives: bool, games: int, bad: dict[str, list[str]], secs: float
) -> None:
    print(
        f"\nAmbition play-outs, {players} seats, objectives {objectives}: {games} games, "
        f"{len(bad['crashes'])} crashes, {len(bad['violations'])} invariant violations, "
        f"{len(bad['unfinished'])} unfinished, {secs:.1f} s"
    )
    assert not any(bad.values()), bad


@pytest.mark.parametrize(("players", "objectives"), [(2, False), (3, True), (4, False), (5, True)])
def test_ambition_games_keep_the_invariants(ambition: Any, players: int, objectives: bool) -> None:
    bad, secs = _play("ambition-quick", players, objectives, QUICK_GAMES)
    _report(players, objectives, QUICK_GAMES, bad, secs)


@pytest.mark.slow
@pytest.mark.parametrize("objectives", [False, True])
@pytest.mark.parametrize("players", [2, 3, 4, 5])
def test_two_thousand_ambition_games_keep_the_invariants(
    ambition: Any, players: int, objectives: bool
) -> None:
    bad, secs = _play("ambition-playout", players, objectives, WHOLE_GAMES)
    _report(players, objectives, WHOLE_GAMES, bad, secs)
