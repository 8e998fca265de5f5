"""Resigning and abandoning (house rules, engine/leaving.py): either ends the game at once,
whatever decisions are owed; a resigned seat never wins, even when it leads; an abandoned game has
no winner; both replay to the same state from their events."""

from __future__ import annotations

import pytest

import engine
from bots import get_bot
from engine.rng import Rng


def _midgame(players: int = 3, moves: int = 40) -> engine.GameState:
    """A game some rounds in, played by random bots."""
    state, _events = engine.new_game("leaving", players)
    bot = get_bot("random")
    rng = Rng(7)
    for _ in range(moves):
        pending = engine.pending(state)
        if not pending:
            break
        seat = min(pending)
        decision = engine.legal(state, seat)
        assert decision is not None
        engine.play(state, seat, bot.act(decision, None, rng))
    return state


def test_resigning_ends_the_game_at_once_and_the_best_of_the_others_wins() -> None:
    state = _midgame()
    assert engine.pending(state), "someone owes a decision: resigning does not wait for it"
    leader = max(engine.score(p)["total"] for p in state.players)
    quitter = next(p.seat for p in state.players if engine.score(p)["total"] == leader)
    events = engine.play(state, quitter, {"kind": "resign"})
    assert [e["type"] for e in events] == ["SeatResigned", "GameEnded"]
    assert state.step == "over" and state.end_reason == "resigned"
    assert state.winners and quitter not in state.winners  # the leader resigned: it does not win
    others = [s for s in state.scores if s["seat"] != quitter]
    best = max((s["total"], s["tiebreak"]) for s in others)
    assert all((s["total"], s["tiebreak"]) == best for s in others if s["seat"] in state.winners)
    assert engine.pending(state) == {}


def test_abandoning_ends_the_game_with_no_winner_and_the_scores_as_they_stand() -> None:
    state = _midgame()
    standing = [engine.score(p) for p in state.players]
    events = engine.play(state, 0, {"kind": "abandon"})
    assert [e["type"] for e in events] == ["GameAbandoned", "GameEnded"]
    assert (state.end_reason, state.winners, state.scores) == ("abandoned", [], standing)


@pytest.mark.parametrize("kind", ["resign", "abandon"])
def test_a_finished_game_refuses_them_and_extra_fields_are_refused(kind: str) -> None:
    state = _midgame()
    with pytest.raises(engine.IllegalCommand) as bad:
        engine.decide(state, 1, {"kind": kind, "seat": 2})
    assert bad.value.code == "fields"
    engine.play(state, 1, {"kind": kind})
    with pytest.raises(engine.IllegalCommand) as over:
        engine.decide(state, 0, {"kind": kind})
    assert over.value.code == "game_over"


@pytest.mark.parametrize("kind", ["resign", "abandon"])
def test_the_events_fold_to_the_same_ended_game(kind: str) -> None:
    state, log = engine.new_game("leaving-replay", 2)
    log += engine.play(state, 1, {"kind": kind})
    again = engine.replay(log)
    assert engine.state_hash(again) == engine.state_hash(state)
