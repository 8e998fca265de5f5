"""The determinization sampler: every sample fits the seat's view, and leaks nothing hidden.

Views come from random games of 2-5 players (every third event, every seat). For each:
* consistency: ``observe(sample, seat)`` is the view again (only the seed differs: a sample has a
  seed of its own), the dice and tiles are all there once each, and a sample can be played on;
* secrecy: across all views, the other seats' real hidden values (tiles below their stack tops, the
  bag, faces behind screens, the phase a sealed seat selected) turn up in the samples at the rate
  chance gives, and a sampler that peeks at the real state fails the same test.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Iterator
from typing import Any

import pytest

import engine
from bots.random_bot import RandomBot
from engine.catalogue import DIE_COLOR, PHASES
from engine.rng import Rng
from engine.sampler import Sampler, SamplerError, sample
from engine.state import GameState

from .invariants import check


def _games(games: int) -> Iterator[GameState]:
    """The states of random games between commands (what a seat can be shown), in order."""
    bot = RandomBot()
    for g in range(games):
        state, _ = engine.new_game(f"sampler:{g}", 2 + g % 4)
        r = Rng.from_seed(f"sampler-bots:{g}")
        while not state.over and state.round <= 100:
            yield state
            seat = min(engine.pending(state))
            decision = engine.legal(state, seat)
            assert decision is not None
            engine.play(state, seat, bot.act(decision, None, r))


def _views(games: int, every: int = 2) -> list[tuple[GameState, int, dict[str, Any]]]:
    out: list[tuple[GameState, int, dict[str, Any]]] = []
    for i, state in enumerate(_games(games)):
        if i % every or state.shortfall:
            continue  # the very rare Explore shortfall is not sampled (test below)
        for seat in range(len(state.players)):
            out.append((state.copy(), seat, engine.observe(state, seat)))
    return out


@pytest.fixture(scope="module")
def views() -> list[tuple[GameState, int, dict[str, Any]]]:
    return _views(8)


def _public(view: dict[str, Any]) -> dict[str, Any]:
    return {k: v for k, v in view.items() if k not in ("seed_commitment", "seed")}


def test_every_sample_shows_the_seat_its_view(views: list[Any]) -> None:
    assert len(views) > 3000
    steps = set()
    for i, (_, seat, view) in enumerate(views):
        s = Sampler(view, Rng.from_seed(f"consistency:{i}")).draw()
        assert _public(engine.observe(s, seat)) == _public(view), f"view {i} (seat {seat})"
        check(s, {"type": "Sampled", "seat": seat})  # every die and tile exactly once, VP chips
        assert s.seed != "" and s.seed.startswith("sample:")
        steps.add(view["step"])
    assert {"assign", "explore", "develop", "settle", "produce", "ship", "manage"} <= steps


def test_samples_can_be_played_to_the_end(views: list[Any]) -> None:
    bot = RandomBot()
    for i, (_, _seat, view) in enumerate(views[::60]):
        s = Sampler(view, Rng.from_seed(f"play:{i}")).draw()
        r = Rng.from_seed(f"bot:{i}")
        while not s.over and s.round < 100:
            who = min(engine.pending(s))
            d = engine.legal(s, who)
            assert d is not None
            engine.play(s, who, bot.act(d, None, r))
        assert s.over, f"view {i}: the sample did not play to an end"


def test_deterministic_for_a_seed(views: list[Any]) -> None:
    _, _, view = views[len(views) // 2]
    a = [engine.state_hash(s) for s in sample(view, 5, "seed-a")]
    b = [engine.state_hash(s) for s in sample(view, 5, "seed-a")]
    c = [engine.state_hash(s) for s in sample(view, 5, "seed-b")]
    assert a == b
    assert a != c
    assert len(set(a)) > 1  # the hidden parts are dealt anew for each sample


def test_the_sampler_never_uses_the_games_generator(views: list[Any]) -> None:
    real, seat, view = views[100]
    s = Sampler(view, Rng.from_seed("gen")).draw()
    assert s.seed != real.seed and s.rng != real.rng


def test_a_shortfall_is_refused() -> None:
    for state in _games(60):
        if state.shortfall.get("open"):
            with pytest.raises(SamplerError, match="shortfall"):
                Sampler(engine.observe(state, 0), Rng.from_seed("x"))
            return
    raise AssertionError("no Explore shortfall in 60 random games: seed games that make one")


def test_a_view_it_cannot_model_is_refused(views: list[Any]) -> None:
    _, _, view = views[10]
    broken = dict(view, bag=view["bag"] + 5)
    with pytest.raises(SamplerError):
        Sampler(broken, Rng.from_seed("x"))
    with pytest.raises(SamplerError):
        Sampler({"players": []}, Rng.from_seed("x"))


def test_an_opponent_model_seals_the_other_seats_assignments(views: list[Any]) -> None:
    """``draw(sealed=...)`` asks the model for each seat sealed behind its screen, on a sample
    whose dice and tiles are all dealt, and the sample still shows the seat its view."""
    asked: list[tuple[int, int]] = []

    def explore_with_the_lowest_die(
        s: GameState, seat: int, decision: dict[str, Any], r: Rng
    ) -> dict[str, Any]:
        assert engine.pending(s).get(seat) is None  # sealed: it owes nothing more
        check(s, {"type": "Sampled", "seat": seat})  # dealt: every die and tile once
        asked.append((seat, len(decision["dice"])))
        die = min(x["die"] for x in decision["dice"])
        wild = [{"die": d, "to": "explore"} for d in decision["wild_dice"]]
        return {"kind": "assign", "select": {"die": die, "phase": "explore"}, "wild": wild}

    sealed_views = 0
    for i, (real, seat, view) in enumerate(views):
        if view["step"] != "assign":
            continue
        others = [q for q in real.players if q.seat != seat and not q.waiting and any(q.columns)]
        asked.clear()
        s = Sampler(view, Rng.from_seed(f"sealed:{i}")).draw(sealed=explore_with_the_lowest_die)
        assert _public(engine.observe(s, seat)) == _public(view), f"view {i} (seat {seat})"
        assert sorted(a for a, _ in asked) == sorted(q.seat for q in others)
        for q in others:
            sq = s.players[q.seat]
            assert PHASES[sq.selected] == "explore" and sq.selector == min(sq.faces)
        sealed_views += bool(others)
    assert sealed_views > 50


# --- secrecy ------------------------------------------------------------------------------------


class Tally:
    """Observed matches with the real hidden values, and what chance predicts (mean, variance)."""

    def __init__(self) -> None:
        self.observed = 0
        self.expected = 0.0
        self.variance = 0.0
        self.trials = 0

    def add(self, hit: bool, p: float) -> None:
        self.observed += hit
        self.expected += p
        self.variance += p * (1 - p)
        self.trials += 1

    def z(self) -> float:
        return (self.observed - self.expected) / math.sqrt(self.variance)


def _secrecy(
    views: list[Any], draw: Callable[[GameState, int, dict[str, Any], int], GameState]
) -> dict[str, Tally]:
    tallies = {k: Tally() for k in ("stack", "bag", "face", "selected")}
    for i, (real, seat, view) in enumerate(views):
        s = draw(real, seat, view, i)
        unseen = len(Sampler(view, Rng.from_seed("n")).unseen_tiles)
        for rp, sp in zip(real.players, s.players, strict=True):
            if rp.seat == seat:
                continue
            for real_stack, s_stack in (
                (rp.dev_stack, sp.dev_stack),
                (rp.world_stack, sp.world_stack),
            ):
                for a, b in zip(real_stack[1:], s_stack[1:], strict=True):
                    tallies["stack"].add(a == b, 1 / unseen)
            if real.step == "assign" and rp.faces:
                # pair each colour's dice in id order: sampled faces are uniform, so 1/6 a die
                for color in sorted({DIE_COLOR[d] for d in rp.faces}):
                    rd = sorted(d for d in rp.faces if DIE_COLOR[d] == color)
                    sd = sorted(d for d in sp.faces if DIE_COLOR[d] == color)
                    for a, b in zip(rd, sd, strict=True):
                        tallies["face"].add(rp.faces[a] == sp.faces[b], 1 / 6)
                if rp.selected >= 0:
                    tallies["selected"].add(rp.selected == sp.selected, 1 / len(PHASES))
        if real.bag and unseen:
            # hypergeometric: each real bag tile is in the sampled bag with probability |bag|/unseen
            for t in real.bag:
                tallies["bag"].add(t in s.bag, len(real.bag) / unseen)
    return tallies


def test_other_seats_hidden_values_appear_only_at_chance_rate(views: list[Any]) -> None:
    tallies = _secrecy(
        views, lambda real, seat, view, i: Sampler(view, Rng.from_seed(f"s{i}")).draw()
    )
    for name, t in tallies.items():
        assert t.trials > 200, f"{name}: too few trials ({t.trials})"
        assert abs(t.z()) < 4.5, f"{name}: {t.observed} matches, chance gives {t.expected:.1f}"


def test_a_peeking_sampler_fails_the_secrecy_test(views: list[Any]) -> None:
    """The statistical test can fail: a sampler that copies the real state is caught."""
    tallies = _secrecy(views, lambda real, seat, view, i: real.copy())
    assert all(t.z() > 10 for t in tallies.values())
