"""The ismcts bot: legal, deterministic for a seed, and blind to everything but its view."""

from __future__ import annotations

from typing import Any

import pytest

import engine
from bots import get_bot
from bots.arena import play_game
from bots.base import Bot, bot_names
from bots.heuristic import HeuristicBot
from bots.ismcts import IsmctsBot, heuristic_view
from engine.catalogue import DIE_FACES, PHASES
from engine.rng import Rng
from engine.sampler import Sampler
from engine.state import GameState


def _decision_state(seed: str, players: int, kind: str, seat: int = 0) -> GameState:
    """A state of a heuristic game where ``seat`` owes a ``kind`` decision."""
    found: list[GameState] = []

    def keep(state: GameState, e: dict[str, Any]) -> None:
        if not found and state.round >= 2 and engine.pending(state).get(seat) == kind:
            found.append(state.copy())

    play_game(seed, players, ["heuristic"], on_event=keep)
    assert found, f"no {kind} decision for seat {seat}"
    return found[0]


def test_registered_for_seats_ladders_and_timeouts() -> None:
    assert "ismcts" in bot_names()
    bot = get_bot("ismcts")
    assert bot.name == "ismcts" and bot.needs_view


def test_plays_whole_games_with_legal_commands() -> None:
    seats: list[Bot] = [IsmctsBot(iterations=4), HeuristicBot()]
    rec = play_game("ismcts:legal", 2, seats)
    assert rec.finished and rec.state.winners
    seats = [IsmctsBot(iterations=2, rollout="random"), HeuristicBot()]
    rec = play_game("ismcts:legal4", 4, seats)
    assert rec.finished


@pytest.mark.parametrize("kind", ["assign", "ship", "manage"])
def test_deterministic_for_a_seed(kind: str) -> None:
    state = _decision_state("ismcts:det", 3, kind)
    view, decision = engine.observe(state, 0), engine.legal(state, 0)
    assert decision is not None
    bot = IsmctsBot(iterations=12)
    a = bot.act(decision, view, Rng.from_seed("r"))
    assert bot.last_iterations >= 12 or a == bot._candidates(decision, view, Rng.from_seed("r"))[0]
    assert IsmctsBot(iterations=12).act(decision, view, Rng.from_seed("r")) == a
    seeded = IsmctsBot(iterations=12, seed="s")
    b = seeded.act(decision, view, Rng.from_seed("one"))
    assert IsmctsBot(iterations=12, seed="s").act(decision, view, Rng.from_seed("two")) == b
    engine.play(state, 0, a)  # and the command is legal


def test_a_time_budget_reads_the_clock_it_is_given() -> None:
    state = _decision_state("ismcts:clock", 2, "assign")
    view, decision = engine.observe(state, 0), engine.legal(state, 0)
    assert decision is not None
    ticks = iter(range(1000))
    bot = IsmctsBot(iterations=None, millis=5000, prune=None, clock=lambda: float(next(ticks)))
    bot.act(decision, view, Rng.from_seed("c"))
    # the deadline is 5 ticks after the start: 5 determinizations, every candidate on each
    candidates = len(bot._candidates(decision, view, Rng.from_seed("c")))
    assert candidates > 1 and bot.last_iterations == 5 * candidates
    with pytest.raises(ValueError, match="clock"):
        IsmctsBot(millis=100)


def test_the_search_changes_with_the_seed() -> None:
    """Determinism is not constancy: other seeds search other determinizations."""
    state = _decision_state("ismcts:seeds", 2, "assign")
    view, decision = engine.observe(state, 0), engine.legal(state, 0)
    assert decision is not None
    picks = set()
    for i in range(8):
        # no margin: the best mean wins, whichever determinizations the seed drew
        bot = IsmctsBot(iterations=12, seed=f"s{i}", margin=0, z=0)
        picks.add(engine.canonical_json(bot.act(decision, view, Rng.from_seed("r"))))
    assert len(picks) > 1


class _Poison(list[Any]):
    """A list that fails on any read: a hidden part of the real state."""

    def _fail(self, *a: Any, **k: Any) -> Any:
        raise AssertionError("the bot read hidden state")

    __getitem__ = __iter__ = __len__ = __contains__ = __eq__ = _fail


def test_reads_only_its_view_and_the_sampler() -> None:
    state = _decision_state("ismcts:blind", 3, "assign", seat=1)
    view, decision = engine.observe(state, 1), engine.legal(state, 1)
    assert decision is not None
    # the real state's secrets fail on any access from now on
    state.bag = _Poison(state.bag)
    state.abandoned = _Poison(state.abandoned)
    state.seed = "poisoned"
    for p in state.players:
        if p.seat != 1:
            p.dev_stack = _Poison(p.dev_stack)
            p.world_stack = _Poison(p.world_stack)
            p.columns = _Poison(p.columns)
            p.drawn = _Poison(p.drawn)
    given: list[Any] = []

    def sampler(v: dict[str, Any], r: Rng) -> Sampler:
        given.append(v)
        return Sampler(v, r)

    cmd = IsmctsBot(iterations=10, sampler=sampler).act(decision, view, Rng.from_seed("b"))
    assert given == [view]  # the sampler got the seat's view and nothing else
    assert cmd["kind"] == "assign"


def test_same_view_same_command_whatever_the_hidden_state() -> None:
    """Two games that differ only in what seat 0 cannot see get the same command from it."""
    state = _decision_state("ismcts:hidden", 2, "assign")
    other = state.copy()
    # change what seat 0 cannot see: the opponent's roll behind its screen, its generator state
    q = other.players[1]
    dice = [d for col in q.columns for d in col]
    q.columns = [[] for _ in PHASES]
    for die in dice:
        q.faces[die] = (q.faces[die] + 1) % 6
        face = DIE_FACES[die][q.faces[die]]
        q.columns[PHASES.index(face) if face in PHASES else 0].append(die)
    other.rng = Rng.keyed(bytes(32)).state
    assert engine.state_hash(other) != engine.state_hash(state)
    view = engine.observe(state, 0)
    assert engine.observe(other, 0) == view
    d = engine.legal(state, 0)
    assert d is not None
    a = IsmctsBot(iterations=10).act(d, view, Rng.from_seed("x"))
    b = IsmctsBot(iterations=10).act(d, engine.observe(other, 0), Rng.from_seed("x"))
    assert a == b


def test_the_heuristic_reads_the_same_in_the_roll_out_view() -> None:
    """Roll-outs give the heuristic ``heuristic_view`` (cheap) instead of a full view: it must
    choose exactly as with the full view, at every decision of whole games of 2 to 5 seats."""
    h, r = HeuristicBot(), Rng.from_seed("hv")
    kinds = set()
    for g in range(8):
        state, _ = engine.new_game(f"ismcts:view:{g}", 2 + g % 4)
        while not state.over:
            for seat in sorted(engine.pending(state)):
                d = engine.legal(state, seat)
                assert d is not None
                cmd = h.act(d, engine.observe(state, seat), r)
                assert h.act(d, heuristic_view(state, seat), r) == cmd, d["kind"]
                kinds.add(d["kind"])
                engine.play(state, seat, cmd)
                if state.over:
                    break
    assert {"assign", "explore", "place_tiles", "develop", "settle", "produce", "ship"} <= kinds


def test_it_keeps_the_heuristics_command_without_evidence() -> None:
    """Policy improvement: another candidate replaces the heuristic's (candidate 0) only when its
    paired mean is ahead by the margin and by z standard errors."""
    bot = IsmctsBot(margin=0.05, z=1.0)
    base = [1.0, 0.0, 1.0, 0.0, 1.0, 0.0, 1.0, 0.0]
    noisy = [1.0, 1.0, 0.0, 0.0, 1.0, 1.0, 1.0, 0.0]  # +0.125 on average, but paired SE ~0.23
    assert bot._choose([base, noisy]) == 0
    better = [1.0, 0.2, 1.0, 0.2, 1.0, 0.2, 1.0, 0.2]  # +0.1 on every determinization
    assert bot._choose([base, noisy, better]) == 2
    slightly = [x + 0.01 for x in base]  # consistently ahead, but by less than the margin
    assert bot._choose([base, slightly]) == 0
