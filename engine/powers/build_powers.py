"""Develop and Settle powers: cost discounts, returning builders to the cup, credits on completion.

Every handler here is generic and data-driven: it is registered for each power id whose catalogue
effect (engine/data/tiles.yaml) has the matching type and reads its numbers from that effect, so one
rule has one home. The 3 immediate-effect developments (Conscription, Information Tech, Space
Marines) need no handler: engine/phases/develop_settle.py applies every card's ``immediate`` effect.

Hooks served (called by engine/phases/develop_settle.py):
  tile_cost        (state, p, card, cost) -> cost                 ``cost_discount``
  return_workers   (state, p, card) -> rule dict or None           ``return_workers_to_cup``
  completed        (state, p, card, dice, ctx)                     ``credits_on_complete``
  develop_end / settle_end (state, p, ctx)                         phase-end credits

Readings (where sources disagree or are silent; see the shared data README):
  * Discounts are mandatory and read live from the tableau, so one completed earlier in the same
    phase (or in Develop, for Settle) applies at once; none applies to the tile that carries it,
    because a tile joins the tableau only once it is complete. The engine floors every cost at 1.
  * Biological Adaptation discounts developments with a Reassign power. Following the BGA reading
    (the data's), Backup Planning and Galactic Mandate count as such (``dev_kind: reassign`` in our
    catalogue); Biological Adaptation itself is not a Reassign power (rulebook clarification).
  * Free Trade Zone: -2 on gray worlds, but never below 2 (below 1 with Replicant Robots, whose
    own -1 then stacks), and never above the current cost: a 1-cost gray world stays 1, a 2-cost
    one stays 2 (BGA bug #8774 fix, kept by the data). The rulebook example holds: a 3- or 4-cost
    gray world costs 2, and 1 with Replicant Robots. The handler is order-independent with
    Replicant Robots (same result whichever of the two is first in the tableau).
  * Galactic Federation / Galactic Exchange: for each development / world completed once the power
    is in the tableau (never the tile that brings it), the owner may send 0-2 of the completing
    dice to the cup instead of the Citizenry (the ``returns`` field of the develop/settle command).
  * New Galactic Order: every Military die among a completed world's dice goes to the cup,
    automatically; with Galactic Exchange the Exchange picks come first (BGA), then the Military
    dice left among the completing dice.
  * Public Works, Galactic Recycling: +$1 per tile of their kinds completed after them, never for
    themselves (a Public Works built then 2 more developments in the same phase = $2, rulebook).
  * Terraforming Robots: +$1 per world completed, +$1 more for a Rare world (the data's
    ``bonus_by_world_color``). Uplift Gene Engineers (Ambition): $2 per world of printed cost 3
    or more (``condition: world_cost_at_least``), $1 more for a Genes world.
  * Galactic Investors pays $2 at the end of each Develop phase, including the one in which it was
    completed (it is in the tableau when the phase ends); Robot Surveyors $2 at the end of each
    Settle; Galactic Religion $1 per Novelty (blue) die in the Citizenry when Develop ends. Phase-end
    powers pay even when their owner had no worker in the phase (rulebook FAQ).
"""

from __future__ import annotations

from typing import Any

from ..catalogue import Card, color_of
from ..fold import Ctx
from ..state import GameState, PlayerState
from . import registry
from .effects import pay
from .registry import power

#: phases whose end-of-phase powers live here (the hooks are "<phase>_end")
PHASE_END_PHASES = ("develop", "settle")
REPLICANT_ROBOTS = "replicant_robots"


def _matches(spec: Any, value: Any) -> bool:
    """Whether a value passes an effect's colour filter (None/"any" or a list)."""
    return spec is None or spec == "any" or value in spec


def _applies(applies_to: dict[str, Any], card: Card) -> bool:
    """Whether a ``cost_discount`` effect's ``applies_to`` covers this card."""
    kind = applies_to.get("tile")
    if kind == "development" and card.is_world:
        return False
    if kind == "world" and not card.is_world:
        return False
    if "world_colors" in applies_to and card.color not in applies_to["world_colors"]:
        return False
    return not (
        "has_reassign_power" in applies_to
        and (card.has_reassign_power != bool(applies_to["has_reassign_power"]))
    )


# --- cost discounts ------------------------------------------------------------------------------
def _discount(pid: str, effs: list[dict[str, Any]]) -> registry.Handler:
    def handler(state: GameState, p: PlayerState, card: Card, cost: int) -> int:
        if card.power_id == pid:  # excludes_self (a tile never discounts itself)
            return cost
        for e in effs:
            if not _applies(e.get("applies_to") or {}, card):
                continue
            amount = int(e["amount"])
            floor = int(e.get("minimum", 1))
            if e.get("never_above_printed"):
                # Free Trade Zone: its floor of 2 drops to 1 with Replicant Robots, and it never
                # raises a cost already at or below its floor.
                if registry.has_power(p, REPLICANT_ROBOTS):
                    floor = 1
                if cost <= floor:
                    continue
            cost = max(floor, cost - amount)
        return cost

    return handler


# --- builders back to the cup (Galactic Federation, Galactic Exchange, New Galactic Order) -------
_TRIGGER_KIND = {"complete_world": True, "complete_development": False}


def _returns(pid: str, effs: list[dict[str, Any]]) -> registry.Handler:
    def handler(state: GameState, p: PlayerState, card: Card) -> dict[str, Any] | None:
        if card.power_id == pid:
            return None
        for e in effs:
            if _TRIGGER_KIND[e["trigger"]] != card.is_world:
                continue
            mx = e.get("max", "all")
            return {
                "power": pid,
                "optional": bool(e.get("optional")),
                "max": None if mx == "all" else int(mx),
                "colors": None if e.get("die_colors") in (None, "any") else list(e["die_colors"]),
            }
        return None

    return handler


# --- credits on completion (Public Works, Galactic Recycling, Terraforming Robots) ---------------
def _on_complete(pid: str, effs: list[dict[str, Any]]) -> registry.Handler:
    def handler(state: GameState, p: PlayerState, card: Card, dice: list[int], ctx: Ctx) -> None:
        credits = 0
        for e in effs:
            if e.get("excludes_self") and card.power_id == pid:
                continue
            if ("world" if card.is_world else "development") not in e["tiles"]:
                continue
            least = (e.get("condition") or {}).get("world_cost_at_least")
            if least is not None and card.cost < int(least):  # printed cost (Uplift Gene Eng.)
                continue
            credits += int(e["amount"])
            credits += int((e.get("bonus_by_world_color") or {}).get(card.color, 0))
        pay(ctx, p, pid, credits=credits, why=f"completed {card.name} ({card.key})")

    return handler


# --- phase-end payments (Galactic Investors, Robot Surveyors, Galactic Religion) -----------------
def _count(p: PlayerState, per: dict[str, Any]) -> int:
    counter = per["counter"]
    if counter == "dice_in_citizenry":
        return sum(1 for d in p.citizenry if _matches(per.get("die_colors"), color_of(d)))
    raise ValueError(f"unknown counter {counter!r} in a Develop/Settle phase-end power")


def _phase_end(pid: str, phase: str, effs: list[dict[str, Any]]) -> registry.Handler:
    def handler(state: GameState, p: PlayerState, ctx: Ctx) -> None:
        credits = 0
        why: list[str] = []
        for e in effs:
            amount = int(e.get("amount", 0))
            if e["type"] == "credits_at_phase_end":
                credits += amount
                why.append(f"${amount}")
            else:  # credits_per_count_at_phase_end
                per = e["per"]
                x = _count(p, per)
                div = int(per.get("divisor", 1))
                units = -(-x // div) if per.get("round", "up") == "up" else x // div
                credits += amount * units
                why.append(f"${amount * units} ({per['counter']}: {x})")
        pay(ctx, p, pid, credits=credits, why=f"end of {phase}: " + ", ".join(why))

    return handler


@registry.registrar
def _register() -> None:
    for pid in registry.all_power_ids():
        effs = registry.effects(pid)
        discounts = [e for e in effs if e.get("type") == "cost_discount"]
        if discounts:
            power(pid, "tile_cost")(_discount(pid, discounts))
        returns = [e for e in effs if e.get("type") == "return_workers_to_cup"]
        if returns:
            power(pid, "return_workers")(_returns(pid, returns))
        credits = [e for e in effs if e.get("type") == "credits_on_complete"]
        if credits:
            power(pid, "completed")(_on_complete(pid, credits))
        for phase in PHASE_END_PHASES:
            ends = [
                e
                for e in effs
                if e.get("phase") == phase
                and e.get("type") in ("credits_at_phase_end", "credits_per_count_at_phase_end")
            ]
            if ends:
                power(pid, f"{phase}_end")(_phase_end(pid, phase, ends))
