"""Resigning, abandoning and aborting (house rules, engine/leaving.py): each ends the game at once,
whatever decisions are owed; a resigned seat never wins, even when it leads; an abandoned or
aborted game has no winner; an abort is refused once the first round ended; all replay to the same
state from their events."""

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


def _to_round(state: engine.GameState, target: int) -> list[engine.Event]:
    """Play random decisions until the game reaches round ``target``; the events played."""
    bot = get_bot("random")
    rng = Rng(3)
    log: list[engine.Event] = []
    while state.round < target:
        seat = min(engine.pending(state))
        decision = engine.legal(state, seat)
        assert decision is not None
        cmd = bot.act(decision, None, rng)
        record = engine.command_submitted(seat, cmd)
        engine.evolve(state, record)
        log += [record, *engine.play(state, seat, cmd)]
    return log


@pytest.mark.parametrize("first_game", [False, True])
def test_aborting_in_the_first_round_ends_the_game_with_no_winner(first_game: bool) -> None:
    """From the setup decisions (round 0) to the last decision of round 1, any seat may abort."""
    state, _ = engine.new_game("abort", 3, {"first_game": first_game})
    assert state.round == (1 if first_game else 0)
    _to_round(state, 1)
    while True:  # the last moment: one decision before round 1 ends
        seat = min(engine.pending(state))
        decision = engine.legal(state, seat)
        assert decision is not None
        cmd = get_bot("random").act(decision, None, Rng(5))
        if any(e["type"] == "RoundEnded" for e in engine.decide(state, seat, cmd)):
            break
        engine.play(state, seat, cmd)
    standing = [engine.score(p) for p in state.players]
    events = engine.play(state, 2, {"kind": "abort"})
    assert [e["type"] for e in events] == ["GameAborted", "GameEnded"]
    assert events[0]["seat"] == 2 and events[0]["round"] == 1
    assert events[1]["reason"] == "aborted" and events[1]["winners"] == []
    assert (state.end_reason, state.winners, state.scores) == ("aborted", [], standing)
    assert engine.pending(state) == {}


def test_aborting_during_the_setup_decisions_is_round_0() -> None:
    state, _ = engine.new_game("abort-setup", 2)
    assert state.round == 0 and engine.pending(state)
    events = engine.play(state, 0, {"kind": "abort"})
    assert events[0] == {"type": "GameAborted", "v": events[0]["v"], "seat": 0, "round": 0}


def test_an_abort_after_the_first_round_is_refused_and_says_to_resign() -> None:
    state, _ = engine.new_game("abort-late", 2)
    _to_round(state, 2)
    before = engine.state_hash(state)
    with pytest.raises(engine.IllegalCommand) as late:
        engine.decide(state, 0, {"kind": "abort"})
    assert late.value.code == "too_late"
    assert "round 2" in late.value.message and "resign" in late.value.message
    assert engine.state_hash(state) == before


@pytest.mark.parametrize("kind", ["resign", "abandon", "abort"])
def test_a_finished_game_refuses_them_and_extra_fields_are_refused(kind: str) -> None:
    state = engine.new_game("leaving", 3)[0] if kind == "abort" else _midgame()
    with pytest.raises(engine.IllegalCommand) as bad:
        engine.decide(state, 1, {"kind": kind, "seat": 2})
    assert bad.value.code == "fields"
    engine.play(state, 1, {"kind": kind})
    with pytest.raises(engine.IllegalCommand) as over:
        engine.decide(state, 0, {"kind": kind})
    assert over.value.code == "game_over"


@pytest.mark.parametrize("kind", ["resign", "abandon", "abort"])
def test_the_events_fold_to_the_same_ended_game(kind: str) -> None:
    state, log = engine.new_game("leaving-replay", 2)
    log += engine.play(state, 1, {"kind": kind})
    again = engine.replay(log)
    assert engine.state_hash(again) == engine.state_hash(state)
