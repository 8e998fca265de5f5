"""Explore powers: stock bonuses, phantom explorers, Alien Research Team, Technology Unions.

Handlers are data-driven: each is registered for every power id whose catalogue effect has the
matching type, so one rule has one home. The Explore phase module (engine/phases/explore.py) owns
the tasks these hooks plug into, and also implements the two powers that change the decision
itself: Improved Reconnaissance (``on_top`` in ``place_tiles``) and Advanced Logistics (the
``rearrange`` and ``finish`` tasks of ``explore``).

Readings where sources disagree or are silent:
- Alien Archaeology: an Alien (yellow) explorer Stocks for $4 in total (not $2 + $4); phantom Alien
  explorers (Alien Research Ship) count. kfodex files it under Ship; the rulebook, BGA, Jonas and
  kp put it in Explore, which is kept.
- Alien Research Team: 1 tile (every data source; the rulebook Fine Points say "tile(s)"), drawn
  after every seat finished its Explore tasks and before the abandoned tiles return to the bag
  (which refill an empty bag), every Explore phase, explorers or not. Its $1 comes once per phase,
  paid at the owner's first Scout by an Alien explorer, phantom included (BGA's timing; credits only
  grow during Explore, so paying then or at the phase end gives the same total under the $10 cap).
- Technology Unions: $1 at the end of each Explore and each Produce phase to an owner with strictly
  more developments in the tableau than every other player; a tie pays nothing (kfodex text,
  consistent with BGA; the rulebook is silent). Faction development halves count as developments
  (BGA; data/README open question 14).
"""

from __future__ import annotations

from typing import Any

from ..catalogue import color_of
from ..fold import Ctx
from ..phases import explore
from ..state import GameState, PlayerState
from . import registry
from .effects import pay

# The Explore power events (ConstructionRearranged, ExtraTilesDrawn) name hidden tiles: they are
# seat-private in engine/observe.py's VISIBILITY table; others get their ``public`` part.


def _ids_with(effect_type: str) -> list[tuple[str, dict[str, Any]]]:
    """(power id, effect) for every catalogue effect of this type."""
    out = []
    for pid in registry.all_power_ids():
        for eff in registry.effects(pid):
            if eff.get("type") == effect_type:
                out.append((pid, eff))
    return out


# --- stock_bonus: Alien Archaeology ---------------------------------------------------------


def _stock_bonus(eff: dict[str, Any]) -> registry.Handler:
    colors = set(eff["explorer_die_colors"])
    total = int(eff["stock_total"])

    def handler(state: GameState, p: PlayerState, explorer: int, value: int) -> int:
        # the effect's total replaces the usual $2 (never lowers a larger value)
        return max(value, total) if color_of(explorer) in colors else value

    return handler


@registry.registrar
def _register_stock_bonus() -> None:
    for pid, eff in _ids_with("stock_bonus"):
        registry.power(pid, "stock_value")(_stock_bonus(eff))


# --- virtual_workers in Explore: Major Research Labs, Alien Research Ship --------------------


def _phantom_explorers(eff: dict[str, Any]) -> registry.Handler:
    colors = list(eff["dice"])
    phase = eff["phase"]

    def handler(state: GameState, p: PlayerState, for_phase: str) -> list[str]:
        return colors[:] if for_phase == phase else []

    return handler


@registry.registrar
def _register_phantom_explorers() -> None:
    for pid, eff in _ids_with("virtual_workers"):
        if eff.get("phase") == "explore":  # Space Docks / Organic Shipyards are Ship powers
            registry.power(pid, "virtual_workers")(_phantom_explorers(eff))


# --- draw_tile_end_of_phase + credits_if: Alien Research Team --------------------------------


def _end_draw(pid: str, eff: dict[str, Any]) -> registry.Handler:
    count = int(eff.get("count", 1))

    def handler(state: GameState, p: PlayerState, ctx: Ctx) -> None:
        explore.draw_extra(state, p, pid, count, ctx)  # once per phase (checks its own mark)

    return handler


@registry.registrar
def _register_end_draw() -> None:
    for pid, eff in _ids_with("draw_tile_end_of_phase"):
        if eff.get("phase") == "explore":
            registry.power(pid, "explore_draw")(_end_draw(pid, eff))


def _alien_scout_credit(pid: str, amount: int) -> registry.Handler:
    def handler(state: GameState, p: PlayerState, explorer: int, ctx: Ctx) -> None:
        # the TilesScouted fold counted this Scout: pay only at the first Alien Scout of the phase
        if color_of(explorer) == "yellow" and p.marks.get(explore.ALIEN_SCOUTS) == 1:
            pay(ctx, p, pid, credits=amount, why="a Scout by an Alien explorer this Explore phase")

    return handler


@registry.registrar
def _register_alien_scout_credit() -> None:
    for pid, eff in _ids_with("credits_if"):
        # the only credits_if effect of the catalogue; its condition is free text, checked here
        if eff.get("phase") == "explore" and "Alien" in str(eff.get("condition", "")):
            registry.power(pid, "scouted")(_alien_scout_credit(pid, int(eff["amount"])))


# --- credits_if_most: Technology Unions -------------------------------------------------------


def _count(p: PlayerState, counter: str) -> int:
    if counter == "developments_in_tableau":
        return len(p.devs)  # faction development halves included (BGA)
    raise ValueError(f"credits_if_most: unknown counter {counter!r}")


def _most(pid: str, eff: dict[str, Any]) -> registry.Handler:
    counter = eff["counter"]
    amount = int(eff["amount"])
    ties_pay = eff.get("ties") != "no_credit"

    def handler(state: GameState, p: PlayerState, ctx: Ctx) -> None:
        mine = _count(p, counter)
        best_other = max(_count(q, counter) for q in state.players if q.seat != p.seat)
        if mine > best_other or (ties_pay and mine == best_other):
            pay(ctx, p, pid, credits=amount, why=f"most {counter.replace('_', ' ')}")

    return handler


@registry.registrar
def _register_most() -> None:
    for pid, eff in _ids_with("credits_if_most"):
        for phase in eff["phases"]:  # explore_end: explore.finish; produce_end: produce.finish
            registry.power(pid, f"{phase}_end")(_most(pid, eff))
