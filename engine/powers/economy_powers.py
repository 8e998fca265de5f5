"""Produce and Ship powers: goods capacity, phase-end credits and VP, trade and consume bonuses.

Every handler here is generic and data-driven: it is registered for each power id whose catalogue
effect (engine/data/tiles.yaml) has the matching type, and reads its numbers from that effect, so
one rule has one home.

Hooks served (called by engine/phases/produce.py and engine/phases/ship.py):
  goods_capacity   (state, p, world card, capacity) -> capacity   ``goods_capacity`` effects
  virtual_workers  (state, p, phase) -> [colours]                 ``virtual_workers`` of Ship
  trade_value      (state, p, world card, good, value) -> value   ``trade_bonus``
  consume_vp       (state, p, world card, good, shipper, vp) -> vp          ``consume_bonus_vp``
  consume_credits  (state, p, world card, good, shipper, credits) -> credits ``consume_bonus_credits``
  ship_options     (state, p) -> option dict                      ``trade_buy_vp`` (Galactic Bankers)
  produce_end / ship_end (state, p, ctx)                          phase-end credits and VP chips

Readings (where sources disagree or are silent; see shared data README):
  * New Economy pays $2 per consumed good (kfodex and BGA), not 2 VP (Jonas): the majority reading
    the data kept. Its end-game bonus counts every development without a Reassign power, itself and
    the faction's development half included.
  * Genetics Lab counts Genes (green) DICE serving as goods on any world, not goods on Genes worlds
    (rulebook Individual Power Clarifications).
  * Space Piracy counts Military (red) dice in the Citizenry when Ship ends, 1 credit per 2 dice,
    rounded up (rulebook Fine Points: 3 Military dice -> $2).
  * A Consumption (purple) die is only purple for every power here (rulebook Fine Points): it
    matches all colours only for the Consume VP bonuses, which engine/phases/ship.py computes.
  * Space Tourism's extra $1 goes only to a player who alone owns every world of the highest
    PRINTED cost among all tableaus (faction and home worlds included); a tie with another player's
    world pays nothing extra (rulebook Individual Power Clarifications).
  * Galactic Bankers: each Trade may pay $1 for 1 VP chip, after the trade income is added and
    capped at $10 (BGA order). It is an optional per-task flag of the ship command.
  * Phase-end powers pay even when their owner had no worker in the phase (rulebook FAQ).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from ..catalogue import CARDS, Card, color_of
from ..fold import Ctx
from ..state import GameState, PlayerState
from . import registry
from .effects import pay
from .registry import power

#: phases whose end-of-phase powers live here (the hooks are "<phase>_end")
PHASE_END_PHASES = ("produce", "ship")
PHASE_END_TYPES = (
    "credits_at_phase_end",
    "credits_per_count_at_phase_end",
    "vp_at_phase_end",
    "credits_if",
)
#: the ship command's per-task flag name of a ``trade_buy_vp`` effect
TRADE_BUY_VP_OPTION = "bankers"


def _matches(spec: Any, color: str | None) -> bool:
    """Whether a colour passes an effect's ``world_colors`` / ``die_colors`` ("any" or a list)."""
    return spec is None or spec == "any" or color in spec


def _ceil_div(a: int, b: int) -> int:
    return -(-a // b)


# --- counters ------------------------------------------------------------------------------------
def count(state: GameState, p: PlayerState, per: dict[str, Any]) -> int:
    """The X of a ``per`` clause (a counter and its colour filters). A die's colour is its own:
    a purple die never counts as another colour here."""
    counter = per["counter"]
    if counter == "dice_in_citizenry":
        return sum(1 for d in p.citizenry if _matches(per.get("die_colors"), color_of(d)))
    if counter == "goods_on_own_worlds":
        return sum(
            len(g) for w, g in p.goods.items() if _matches(per.get("world_colors"), CARDS[w].color)
        )
    if counter == "goods_by_die_color":
        return sum(
            1
            for w, g in p.goods.items()
            if _matches(per.get("world_colors"), CARDS[w].color)
            for d in g
            if _matches(per.get("die_colors"), color_of(d))
        )
    if counter == "goods_shipped_this_phase":
        # Galactic Advertising (Ambition): goods Traded or Consumed in this Ship phase; the ship
        # fold counts both actions (a filter on one action only is not in the catalogue)
        if sorted(per.get("tasks", ("consume", "trade"))) != ["consume", "trade"]:
            raise ValueError(f"goods_shipped_this_phase counts trade and consume, not {per}")
        return p.marks.get("shipped", 0)
    raise ValueError(f"unknown counter {counter!r}")


def _per_units(state: GameState, p: PlayerState, per: dict[str, Any]) -> tuple[int, int]:
    """(X, units): X counted, then divided by the divisor, rounded as the effect says."""
    x = count(state, p, per)
    div = int(per.get("divisor", 1))
    return x, (_ceil_div(x, div) if per.get("round", "up") == "up" else x // div)


# --- conditions of ``credits_if`` effects (free text in the data, so keyed by power id) ----------
def sole_owner_of_top_world(state: GameState, p: PlayerState) -> bool:
    """Space Tourism: the highest PRINTED world cost among all tableaus is held by this seat
    alone (it owns every world of that cost; a tie with another seat's world fails)."""
    top = max(CARDS[w].cost for q in state.players for w in q.worlds)
    owners = {q.seat for q in state.players for w in q.worlds if CARDS[w].cost == top}
    return owners == {p.seat}


CONDITIONS: dict[str, Callable[[GameState, PlayerState], bool]] = {
    "space_tourism": sole_owner_of_top_world,
}


# --- phase-end payments --------------------------------------------------------------------------
def _phase_end(pid: str, phase: str, effs: list[dict[str, Any]]) -> registry.Handler:
    def handler(state: GameState, p: PlayerState, ctx: Ctx) -> None:
        credits = vp = 0
        why: list[str] = []
        for e in effs:
            t = e["type"]
            amount = int(e.get("amount", 0))
            if t == "credits_at_phase_end":
                credits += amount
                why.append(f"${amount}")
            elif t == "vp_at_phase_end":
                vp += amount
                why.append(f"{amount} VP")
            elif t == "credits_per_count_at_phase_end":
                per = e["per"]
                x, units = _per_units(state, p, per)
                credits += amount * units
                div = int(per.get("divisor", 1))
                each = f"per {div}" if div > 1 else "each"
                why.append(f"${amount * units} ({per['counter']}: {x}, ${amount} {each})")
            elif t == "credits_if" and CONDITIONS[pid](state, p):
                credits += amount
                why.append(f"${amount} ({e.get('condition', 'condition met')})")
        pay(ctx, p, pid, credits=credits, vp=vp, why=f"end of {phase}: " + ", ".join(why))

    return handler


@registry.registrar
def _register_phase_ends() -> None:
    for pid in registry.all_power_ids():
        for phase in PHASE_END_PHASES:
            effs = [
                e
                for e in registry.effects(pid)
                if e.get("type") in PHASE_END_TYPES and e.get("phase") == phase
            ]
            if effs:
                power(pid, f"{phase}_end")(_phase_end(pid, phase, effs))


# --- goods capacity (Galactic Reserves) ----------------------------------------------------------
def _capacity(per_world: int) -> registry.Handler:
    def handler(state: GameState, p: PlayerState, world: Card, cap: int) -> int:
        return cap if world.color == "gray" else max(cap, per_world)

    return handler


# --- phantom shippers (Space Docks, Organic Shipyards) -------------------------------------------
def _phantoms(effs: list[dict[str, Any]]) -> registry.Handler:
    def handler(state: GameState, p: PlayerState, phase: str) -> list[str]:
        return [c for e in effs if e.get("phase") == phase for c in e["dice"]]

    return handler


# --- trade and consume bonuses -------------------------------------------------------------------
def _trade_bonus(effs: list[dict[str, Any]]) -> registry.Handler:
    def handler(state: GameState, p: PlayerState, world: Card, good: int, value: int) -> int:
        return value + sum(
            int(e["amount"]) for e in effs if _matches(e["world_colors"], world.color)
        )

    return handler


def _consume_bonus(effs: list[dict[str, Any]]) -> registry.Handler:
    def handler(
        state: GameState, p: PlayerState, world: Card, good: int, shipper: int, value: int
    ) -> int:
        return value + sum(
            int(e["amount"]) for e in effs if _matches(e["world_colors"], world.color)
        )

    return handler


def _trade_buy_vp(pid: str, e: dict[str, Any]) -> registry.Handler:
    def handler(state: GameState, p: PlayerState) -> dict[str, Any]:
        cost, vp = int(e["cost"]), int(e["vp"])
        return {
            "option": TRADE_BUY_VP_OPTION,
            "power": pid,
            "actions": ["trade"],
            "credits": -cost,
            "vp": vp,
            "help": f"on a trade task, '{TRADE_BUY_VP_OPTION}': true pays ${cost} for {vp} VP "
            "chip(s), after the trade income is added (and capped at $10)",
        }

    return handler


@registry.registrar
def _register_per_type() -> None:
    by_hook: dict[str, tuple[str, Callable[[list[dict[str, Any]]], registry.Handler]]] = {
        "goods_capacity": ("goods_capacity", lambda es: _capacity(max(e["per_world"] for e in es))),
        "trade_bonus": ("trade_value", _trade_bonus),
        "consume_bonus_vp": ("consume_vp", _consume_bonus),
        "consume_bonus_credits": ("consume_credits", _consume_bonus),
    }
    for pid in registry.all_power_ids():
        effs = registry.effects(pid)
        for etype, (hook, make) in by_hook.items():
            mine = [e for e in effs if e.get("type") == etype]
            if mine:
                power(pid, hook)(make(mine))
        ship_workers = [
            e for e in effs if e.get("type") == "virtual_workers" and e.get("phase") == "ship"
        ]
        if ship_workers:
            power(pid, "virtual_workers")(_phantoms(ship_workers))
        for e in effs:
            if e.get("type") == "trade_buy_vp":
                power(pid, "ship_options")(_trade_buy_vp(pid, e))
