"""Random play-outs over 2-5 players, checking the invariants after every event.

1,000 games in all (250 per player count): dice conserved, tiles neither duplicated nor lost,
credits within $0-10 (and $1-10 after Manage), VP chips accounted for, every game ends with scores,
and replaying the log reproduces the final state.
"""

from __future__ import annotations

import pytest

import engine
from bots.arena import play_game

from .invariants import check

GAMES_PER_COUNT = 250


@pytest.mark.parametrize("players", [2, 3, 4, 5])
def test_random_playouts_keep_invariants(players: int) -> None:
    unfinished = []
    for i in range(GAMES_PER_COUNT):
        rec = play_game(f"playout:{players}:{i}", players, on_event=check)
        if not rec.finished:
            unfinished.append(rec.seed)
            continue
        assert rec.state.scores and rec.state.winners
        if i % 25 == 0:
            assert engine.state_hash(engine.replay(rec.events)) == engine.state_hash(rec.state)
    assert not unfinished, f"games hit the round cap: {unfinished}"


def test_first_game_setup_playouts() -> None:
    for i in range(20):
        rec = play_game(f"first:{i}", 3, options={"first_game": True}, on_event=check)
        assert rec.finished
        assert rec.events[1]["type"] == "StartTilesChosen" and rec.events[1]["auto"] is True
