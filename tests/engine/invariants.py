"""Invariants that hold after every event of every game (used by the play-out tests)."""

from __future__ import annotations

from typing import Any

from engine.ambition.objectives import TALENT_COUNTERS
from engine.catalogue import PHASES, TALENT_BASE, die_ids, is_ambition, tile_ids
from engine.economy import VP_PER_PLAYER
from engine.state import GameState


def check(state: GameState, event: dict[str, Any]) -> None:
    where = f"after event {state.seq} ({event['type']}, round {state.round})"
    ambition = is_ambition(state.options)
    # dice: every die is in exactly one place, and none is created or lost (an Ambition game:
    # the base dice and the Ambition box's 38; talent counters and phantoms are not dice)
    seen: list[int] = [d for pile in state.supply for d in pile]
    for p in state.players:
        seen += [d for d in p.owned_dice() if d < 1000]
    assert sorted(seen) == die_ids(ambition), f"dice not conserved {where}"
    # tiles: bag + abandoned + construction zones + tableaux + drawn + start tiles = all tiles
    tiles = state.bag + state.abandoned
    for p in state.players:
        tiles += p.dev_stack + p.world_stack + p.drawn + p.start_tiles
        tiles += [int(k[1:-1]) for k in p.devs + p.worlds if k[0] == "T"]
    assert sorted(tiles) == tile_ids(ambition), f"tiles duplicated or lost {where}"
    # Reveal: no worker stays under a phase that does not occur (Ambition: a two-phase worker
    # shifted to its other phase, or went to the cup)
    if event["type"] == "PhasesRevealed":
        happening = set(event["phases"])
        for p in state.players:
            for i, ph in enumerate(PHASES):
                assert ph in happening or not p.columns[i], (
                    f"seat {p.seat} has workers under {ph}, which does not occur {where}"
                )
    # credits (Ambition: $0 becomes $1 at once, so a seat always has at least $1)
    for p in state.players:
        assert (1 if ambition else 0) <= p.credits <= 10, f"seat {p.seat} has ${p.credits} {where}"
        if event["type"] == "EmpireManaged" and event["seat"] == p.seat:
            assert 1 <= p.credits <= 10, f"seat {p.seat} has ${p.credits} after Manage {where}"
    # VP chips: earned chips = chips taken from the pool + from the 10-VP reserve
    assert state.vp_pool >= 0
    earned = sum(p.vp for p in state.players)
    initial = VP_PER_PLAYER * len(state.players)
    assert earned == initial - state.vp_pool + state.vp_reserve_used, (
        f"VP chips not accounted for {where}"
    )
    # goods only on the owner's non-gray worlds in the tableau
    for p in state.players:
        for w, g in p.goods.items():
            assert w in p.worlds and g, f"seat {p.seat} has goods on {w} {where}"
    # Ambition talent counters: each held once at most, never in a cup, Citizenry or Dictate
    # area, and none at work when a round's dice are rolled
    talents: list[int] = []
    for p in state.players:
        talents += p.talents + [d for d in p.owned_dice() if d >= TALENT_BASE]
        assert not [d for d in p.cup + p.citizenry + p.dictate if d >= TALENT_BASE], (
            f"seat {p.seat} has a talent counter in its cup, Citizenry or Dictate area {where}"
        )
        if event["type"] == "RoundStarted":
            assert not [d for c in p.columns for d in c if d >= TALENT_BASE], (
                f"seat {p.seat} has a talent worker left from last round {where}"
            )
    assert len(talents) == len(set(talents)), f"a talent counter is held twice {where}"
    assert all(TALENT_BASE <= t < TALENT_BASE + TALENT_COUNTERS for t in talents)
    if event["type"] == "GameEnded":
        assert state.scores and len(state.scores) == len(state.players)
        assert state.winners
