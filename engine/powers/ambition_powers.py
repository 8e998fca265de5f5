"""Ambition's development powers that the generic handlers of the other power modules do not cover.

Most Ambition powers reuse the base game's effect types and so the generic, data-driven handlers
(``build_powers``, ``economy_powers``, ``reassign``): Genetic Algorithm, Mining Robots (credits per
die in the Citizenry when a phase ends), Imperium Warmongers (per good on Rare worlds), Galactic
Advertising (per two goods shipped), Alien Artifact Hunters (a Consume bonus), Uplift Gene
Engineers (credits on completing a world), Planetary Surveyors, Starry Rift Explorers and
Terraforming Unlimited (Reassign powers). This module holds the effect types Ambition adds:

  credits_per_task (Subdimensional Exploration: scout; Economic Factors, Alien Tech Institute:
      produce)                          hooks ``scouted`` (explore) and ``produced`` (produce)
  start_credits_bonus (Interstellar Bank)  hook ``start_credits`` (setup)
  pay_to_discount (Terraforming Specialists), remove_die_to_discount (Contact Specialist)
      the ``discounts`` of the develop / settle command (engine/phases/develop_settle.py reads
      ``discount_rule``)
  buy_vp_at_phase_end (Deficit Spending)   the ``buy_vp`` decision at the end of Ship
      (engine/phases/ship.py)
  change_selected_phase_after_reveal (Psi-Crystal Forecasters)  the ``forecast`` decision at
      Reveal (engine/phases/assign.py)
and the rulebook's readings of two powers whose data alone would be read otherwise:

  Market Pioneers (Ambition rulebook, Fine Points): "These dice need not be in "pairs" in any way.
      Round up an odd total. For example, you would get $3 for having one Entrepreneur and four
      Consumption dice in your Citizenry." The rulebook wins over a component file's rounding
      (one source writes floor(X/2)): the total is always rounded up.
  Uplift Mercenaries (Fine Points): "To earn this bonus, each pair of Military and Genes dice must
      be used to complete a *single* world. Several such pairs can complete the same world or
      different worlds." -> $2 per (Military, Genes) pair among the dice that completed one world.
      A Military die that Contact Specialist took off that world is not one of them (Fine Points:
      "it does not count as a settler towards completing that world"); Alien Booby Trap's lost
      settler did complete its world and counts.

Worlds' special effects (``immediate.special`` in the data) are read where they act, through
``effects.special``: Alien Refinery's goods cannot be Traded (engine/phases/ship.py), Rebel
Stronghold's cost cannot be modified (engine/phases/develop_settle.py), Alien Booby Trap loses the
settler that completes it (engine/phases/develop_settle.py).

Readings where the sources are silent (data README, open questions 9 and 11):
  * "cost 3 or more" (Uplift Gene Engineers) and "cost 4 or more" (Terraforming Unlimited) are
    printed costs, the numbers the rulebook calls a tile's cost (discounts change the workers a
    tile needs, not its cost).
  * Interstellar Bank adds $2 to whatever the player would start with (its "+$2"), capped at $10.
"""

from __future__ import annotations

from typing import Any

from ..catalogue import CARDS, Card, color_of
from ..economy import CREDIT_CAP
from ..fold import Ctx
from ..state import GameState, PlayerState
from . import build_powers, economy_powers, registry  # noqa: F401  (their handlers first)
from .effects import pay

MARKET_PIONEERS = "market_pioneers"
UPLIFT_MERCENARIES = "uplift_mercenaries"


def _ids_with(effect_type: str) -> list[tuple[str, dict[str, Any]]]:
    """(power id, effect) for every catalogue effect of this type."""
    return [
        (pid, eff)
        for pid in registry.all_power_ids()
        for eff in registry.effects(pid)
        if eff.get("type") == effect_type
    ]


def _matches(spec: Any, value: Any) -> bool:
    return spec is None or spec == "any" or value in spec


# --- credits_per_task: Subdimensional Exploration, Economic Factors, Alien Tech Institute -------
def _per_scout(pid: str, eff: dict[str, Any]) -> registry.Handler:
    amount = int(eff["amount"])

    def handler(state: GameState, p: PlayerState, explorer: int, ctx: Ctx) -> None:
        pay(ctx, p, pid, credits=amount, why="a Scout task")

    return handler


def _per_good(pid: str, eff: dict[str, Any]) -> registry.Handler:
    amount = int(eff["amount"])
    colors = (eff.get("condition") or {}).get("world_colors")

    def handler(state: GameState, p: PlayerState, goods: list[dict[str, Any]], ctx: Ctx) -> None:
        n = sum(1 for g in goods if _matches(colors, CARDS[g["world"]].color))
        where = "" if colors is None else " on " + " or ".join(colors) + " worlds"
        pay(ctx, p, pid, credits=amount * n, why=f"{n} good(s) produced{where}")

    return handler


@registry.registrar
def _register_per_task() -> None:
    for pid, eff in _ids_with("credits_per_task"):
        if eff["task"] == "scout":
            registry.power(pid, "scouted")(_per_scout(pid, eff))
        elif eff["task"] == "produce":
            registry.power(pid, "produced")(_per_good(pid, eff))
        else:
            raise ValueError(f"{pid}: credits_per_task for an unknown task {eff['task']!r}")


# --- start_credits_bonus: Interstellar Bank -----------------------------------------------------
def _start_bonus(eff: dict[str, Any]) -> registry.Handler:
    amount = int(eff["amount"])

    def handler(state: GameState, p: PlayerState, credits: int) -> int:
        return min(CREDIT_CAP, credits + amount)

    return handler


@registry.registrar
def _register_start_bonus() -> None:
    for pid, eff in _ids_with("start_credits_bonus"):
        registry.power(pid, "start_credits")(_start_bonus(eff))


# --- Market Pioneers: the rulebook's rounding ---------------------------------------------------
def _market_pioneers(state: GameState, p: PlayerState, ctx: Ctx) -> None:
    eff = next(
        e
        for e in registry.effects(MARKET_PIONEERS)
        if e.get("type") == "credits_per_count_at_phase_end"
    )
    colors = eff["per"].get("die_colors")
    x = sum(1 for d in p.citizenry if _matches(colors, color_of(d)))
    div = int(eff["per"].get("divisor", 2))
    units = -(-x // div)  # Fine Points: "Round up an odd total" (whatever the data says)
    amount = int(eff["amount"])
    pay(
        ctx,
        p,
        MARKET_PIONEERS,
        credits=amount * units,
        why=f"end of {eff['phase']}: {x} Consumption / Entrepreneur dice in the Citizenry, "
        f"${amount} per {div} rounded up",
    )


# --- Uplift Mercenaries: $2 per Military + Genes pair completing one world ----------------------
def military_genes_pairs(dice: list[int]) -> int:
    """Pairs of one Military (red) and one Genes (green) die among the dice completing a world."""
    colors = [color_of(d) for d in dice]
    return min(colors.count("red"), colors.count("green"))


def _dice_matter(state: GameState, p: PlayerState) -> bool:
    return True


def _uplift_mercenaries(
    state: GameState, p: PlayerState, card: Card, dice: list[int], ctx: Ctx
) -> None:
    if not card.is_world:
        return
    eff = next(
        e for e in registry.effects(UPLIFT_MERCENARIES) if e["type"] == "credits_on_complete"
    )
    pairs = military_genes_pairs(dice)
    amount = int(eff["amount"])
    pay(
        ctx,
        p,
        UPLIFT_MERCENARIES,
        credits=amount * pairs,
        why=f"{pairs} Military + Genes pair(s) completed {card.name} ({card.key})",
    )


@registry.registrar
def _register_rulebook_readings() -> None:
    # registered after the generic handlers of the same power ids (this module imports their
    # modules first, and registrars re-run in the same order), so these readings replace them
    for pid, eff in _ids_with("credits_per_count_at_phase_end"):
        if pid == MARKET_PIONEERS:
            registry.power(pid, f"{eff['phase']}_end")(_market_pioneers)
    if UPLIFT_MERCENARIES in registry.all_power_ids():
        registry.power(UPLIFT_MERCENARIES, "completed")(_uplift_mercenaries)
        # which settlers complete which world is then the owner's choice (develop_settle asks)
        registry.power(UPLIFT_MERCENARIES, "completing_dice_matter")(_dice_matter)


# --- pay_to_discount / remove_die_to_discount: Terraforming Specialists, Contact Specialist -----
def _discount_option(pid: str, eff: dict[str, Any]) -> registry.Handler:
    kinds = set(eff.get("tiles") or ("development", "world"))
    remove = eff.get("remove")
    colors = list(remove["die_colors"]) if remove else None

    def handler(state: GameState, p: PlayerState, card: Card) -> dict[str, Any] | None:
        if ("world" if card.is_world else "development") not in kinds:
            return None
        return {
            "via": pid,
            "discount": int(eff["discount"]),
            "minimum": int(eff.get("minimum", 1)),
            "pay": int(eff.get("pay", 0)),
            "remove": colors,
        }

    return handler


@registry.registrar
def _register_discounts() -> None:
    # engine/phases/develop_settle.py offers these (legal ``discounts``) and applies the chosen
    # ones just before the tile completes
    for etype in ("pay_to_discount", "remove_die_to_discount"):
        for pid, eff in _ids_with(etype):
            registry.power(pid, "discount_options")(_discount_option(pid, eff))


# --- buy_vp_at_phase_end: Deficit Spending ------------------------------------------------------
def _buy_vp_offer(pid: str, eff: dict[str, Any]) -> registry.Handler:
    rate = eff.get("rate") or {"credits": 1, "vp": 1}

    def handler(state: GameState, p: PlayerState, phase: str) -> dict[str, Any] | None:
        if phase != eff["phase"]:
            return None
        return {
            "power": pid,
            "max_spend": int(eff["max_spend"]),
            "credits": int(rate["credits"]),
            "vp": int(rate["vp"]),
        }

    return handler


@registry.registrar
def _register_buy_vp() -> None:
    # engine/phases/ship.py asks the owner when Ship ends (the ``buy_vp`` decision); once per
    # phase, one payment (Fine Points)
    for pid, eff in _ids_with("buy_vp_at_phase_end"):
        if eff["phase"] != "ship":
            raise ValueError(f"{pid}: buy_vp_at_phase_end is read at the end of Ship only")
        registry.power(pid, "buy_vp")(_buy_vp_offer(pid, eff))


# --- change_selected_phase_after_reveal: Psi-Crystal Forecasters --------------------------------
def _forecast(state: GameState, p: PlayerState) -> bool:
    return True


@registry.registrar
def _register_forecast() -> None:
    # engine/phases/assign.py opens Reveal with the owner's ``forecast`` decision
    for pid, _eff in _ids_with("change_selected_phase_after_reveal"):
        registry.power(pid, "forecast")(_forecast)
