"""Resigning, abandoning and aborting (house rules, engine/leaving.py): with three or more seats a
resigning seat leaves and the others play on to a normal end; with two seats (or one left, or under
rules 1-4) resigning ends the game at once, whatever decisions are owed; a resigned seat never
wins, even when it leads; an abandoned or aborted game has no winner; an abort is refused once the
first round ended; all replay to the same state from their events."""

from __future__ import annotations

import pytest

import engine
from bots import get_bot
from engine.rng import Rng


def _midgame(players: int = 3, moves: int = 40, rules: int | None = None) -> engine.GameState:
    """A game some rounds in, played by random bots."""
    state, _events = engine.new_game("leaving", players, rules=rules)
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


def _leader(state: engine.GameState) -> int:
    leader = max(engine.score(p)["total"] for p in state.players)
    return next(p.seat for p in state.players if engine.score(p)["total"] == leader)


@pytest.mark.parametrize(("players", "rules"), [(2, None), (3, 4)])
def test_resigning_ends_the_game_at_once_and_the_best_of_the_others_wins(
    players: int, rules: int | None
) -> None:
    """Two seats (any rules), or three under rules 1-4: the game ends at once, as it always did."""
    state = _midgame(players, rules=rules)
    assert engine.pending(state), "someone owes a decision: resigning does not wait for it"
    quitter = _leader(state)
    events = engine.play(state, quitter, {"kind": "resign"})
    assert [e["type"] for e in events] == ["SeatResigned", "GameEnded"]
    assert ("step" in events[0]) is (rules is None)  # rules 5 name the step, older rules none
    assert state.step == "over" and state.end_reason == "resigned"
    assert state.winners and quitter not in state.winners  # the leader resigned: it does not win
    others = [s for s in state.scores if s["seat"] != quitter]
    best = max((s["total"], s["tiebreak"]) for s in others)
    assert all((s["total"], s["tiebreak"]) == best for s in others if s["seat"] in state.winners)
    assert engine.pending(state) == {}
    assert state.players[quitter].resigned["round"] == state.round


def _record(state: engine.GameState, log: list[engine.Event], seat: int, cmd: dict) -> list:
    """Play one command as the service records it (CommandSubmitted first); its events."""
    record = engine.command_submitted(seat, cmd)
    engine.evolve(state, record)
    events = engine.play(state, seat, cmd)
    log += [record, *events]
    return events


def _play_out(state: engine.GameState, log: list[engine.Event], seed: int) -> None:
    """Random bots play every pending decision until the game ends."""
    bot = get_bot("random")
    rng = Rng(seed)
    while not state.over:
        pending = engine.pending(state)
        assert pending, f"nobody owes a decision in round {state.round}, step {state.step}"
        assert not any(state.players[s].resigned for s in pending), "a resigned seat is asked"
        seat = min(pending)
        decision = engine.legal(state, seat)
        assert decision is not None
        _record(state, log, seat, bot.act(decision, None, rng))


def _resign_and_check(state: engine.GameState, log: list[engine.Event], seat: int) -> None:
    """The seat resigns mid-game and the others play on: it leaves the board and owes nothing."""
    round_, step = state.round, state.step
    events = _record(state, log, seat, {"kind": "resign"})
    assert events[0] == {
        "type": "SeatResigned",
        "v": events[0]["v"],
        "seat": seat,
        "round": round_,
        "step": step,
    }
    assert not state.over and "GameEnded" not in [e["type"] for e in events]
    p = state.players[seat]
    assert p.resigned == {"round": round_, "step": step}
    assert p.waiting == "" and seat not in engine.pending(state)
    assert not any(p.columns) and not p.dictate and not p.drawn and p.selected == -1
    assert engine.legal(state, seat) is None
    assert engine.observe(state, "public")["players"][seat]["resigned"] == p.resigned


@pytest.mark.parametrize(("players", "quitters"), [(3, [1]), (4, [2]), (4, [0, 3]), (5, [4, 1])])
def test_with_three_or_more_seats_a_resigning_seat_leaves_and_the_others_finish(
    players: int, quitters: list[int]
) -> None:
    """The others play on to a normal end; the resigned seat rolls no more, is never asked,
    keeps its tableau, is scored and never wins; the log replays to the same state."""
    state, log = engine.new_game(f"play-on-{players}-{quitters}", players)
    _to_round(state, 2, log)
    kept: dict[int, tuple[list[str], list[str], int]] = {}
    for seat in quitters:
        _resign_and_check(state, log, seat)
        p = state.players[seat]
        kept[seat] = (p.devs[:], p.worlds[:], p.vp)
        _to_round(state, state.round + 1, log)
    mark = len(log)
    _play_out(state, log, 11)
    assert state.end_reason in ("vp_pool_exhausted", "twelve_tile_squares")
    assert state.winners and not set(state.winners) & set(quitters)
    assert [s["seat"] for s in state.scores] == list(range(players))  # every seat is scored
    later = log[mark:]
    for seat in quitters:
        p = state.players[seat]
        assert (p.devs, p.worlds, p.vp) == kept[seat]  # its tableau stays as it was
        assert not [e for e in later if e.get("seat") == seat], "a resigned seat took part"
    assert any(e["type"] == "DiceRolled" for e in later)
    again = engine.replay(log)
    assert engine.state_hash(again) == engine.state_hash(state)


def test_the_game_ends_when_one_seat_is_left_and_that_seat_wins() -> None:
    """Four seats, three resign: the third resignation ends the game and the seat left wins,
    whatever it scores."""
    state, log = engine.new_game("last-one-standing", 4)
    _to_round(state, 3, log)
    standing = sorted(state.players, key=lambda p: engine.score(p)["total"])
    last = standing[0].seat  # the lowest score stays and wins
    quitters = [p.seat for p in standing[1:]]
    for seat in quitters[:2]:
        _resign_and_check(state, log, seat)
    events = _record(state, log, quitters[2], {"kind": "resign"})
    assert [e["type"] for e in events] == ["SeatResigned", "GameEnded"]
    assert (state.end_reason, state.winners) == ("resigned", [last])
    assert engine.state_hash(engine.replay(log)) == engine.state_hash(state)


def test_a_resignation_that_was_the_last_decision_owed_moves_the_game_on() -> None:
    """When every other seat has sealed its Assign, the resigning seat was all the game waited
    for: the phases are revealed at once."""
    state, log = engine.new_game("last-owed", 3)
    _to_round(state, 2, log)
    bot, rng = get_bot("random"), Rng(9)
    while state.step != "assign" or len(engine.pending(state)) != 3:
        seat = min(engine.pending(state))
        _record(state, log, seat, bot.act(engine.legal(state, seat), None, rng))
    for seat in (0, 1):
        _record(state, log, seat, bot.act(engine.legal(state, seat), None, rng))
    assert list(engine.pending(state)) == [2]
    events = _record(state, log, 2, {"kind": "resign"})
    assert events[1]["type"] == "PhasesRevealed"
    assert events[1]["seats"][2]["selected"] is None  # it selects no phase
    assert 2 not in engine.pending(state)


def test_a_resigned_seat_s_commands_are_refused_but_abandon() -> None:
    state, log = engine.new_game("resigned-refused", 3)
    _to_round(state, 2, log)
    _resign_and_check(state, log, 0)
    for cmd in ({"kind": "resign"}, {"kind": "abort"}, {"kind": "assign"}):
        with pytest.raises(engine.IllegalCommand) as refused:
            engine.decide(state, 0, cmd)
        assert refused.value.code == "resigned"
        assert "round 2" in refused.value.message and "the others play on" in refused.value.message
    events = engine.play(state, 0, {"kind": "abandon"})
    assert events[-1]["type"] == "GameEnded" and events[-1]["winners"] == []


def test_tiles_a_resigning_scout_drew_go_back_to_the_bag() -> None:
    """A seat that resigns holding tiles it drew (Explore, before placing them) abandons them:
    they return to the bag when Explore ends."""
    state, log = engine.new_game("scout-resigns", 3)
    _to_round(state, 1, log)
    bot, rng = get_bot("random"), Rng(4)
    while True:
        placing = [s for s, k in engine.pending(state).items() if k == "place_tiles"]
        if placing:
            break
        seat = min(engine.pending(state))
        _record(state, log, seat, bot.act(engine.legal(state, seat), None, rng))
        assert not state.over
    seat = placing[0]
    drawn = state.players[seat].drawn[:]
    _resign_and_check(state, log, seat)
    assert drawn and set(drawn) <= set(state.abandoned)
    _to_round(state, state.round + 1, log)
    held = {t for p in state.players for t in p.dev_stack + p.world_stack + p.drawn}
    assert set(drawn) <= set(state.bag) | held and not state.abandoned
    assert engine.state_hash(engine.replay(log)) == engine.state_hash(state)


def test_abandoning_ends_the_game_with_no_winner_and_the_scores_as_they_stand() -> None:
    state = _midgame()
    standing = [engine.score(p) for p in state.players]
    events = engine.play(state, 0, {"kind": "abandon"})
    assert [e["type"] for e in events] == ["GameAbandoned", "GameEnded"]
    assert (state.end_reason, state.winners, state.scores) == ("abandoned", [], standing)


def _to_round(
    state: engine.GameState, target: int, log: list[engine.Event] | None = None
) -> list[engine.Event]:
    """Play random decisions until the game reaches round ``target``; the events played (added
    to ``log`` when given)."""
    bot = get_bot("random")
    rng = Rng(3)
    log = [] if log is None else log
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
    # (two seats: a resignation ends the game)
    state = engine.new_game("leaving", 3)[0] if kind == "abort" else _midgame(2)
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
