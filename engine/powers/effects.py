"""Events and helpers shared by power handlers: ``PowerPaid`` (credits or VP chips a power gives,
or credits a power costs) and ``PowerDieRemoved`` (a die a power returns to the supply).

A handler that pays at a phase's end or on a trigger calls ``pay``; the fold applies the $10 cap
and takes VP chips from the pool like any other gain. A payment that costs credits (Ambition:
Terraforming Specialists, Deficit Spending) and leaves $0 resets them to $1 at once in an Ambition
game (Ambition rulebook, Reaching Zero Credits: "If an effect reduces a player's credits to 0
during a phase, then *after* that effect is done, reset a player's credits to 1").
"""

from __future__ import annotations

from typing import Any

from ..catalogue import Card
from ..economy import award_vp, gain_credits, spend_credits, supply_return, take_die_from
from ..fold import Ctx, Event, ev, folds
from ..state import GameState, PlayerState


def special(card: Card, kind: str) -> dict[str, Any] | None:
    """A world's special effect of this type (``immediate.special`` in the data: Ambition's
    ``cannot_trade_goods_from_this_world``, ``cost_cannot_be_modified``,
    ``remove_completing_settler``), or None."""
    for s in card.immediate.get("special") or ():
        if s.get("type") == kind:
            return dict(s)
    return None


def pay(
    ctx: Ctx, p: PlayerState, power_id: str, credits: int = 0, vp: int = 0, why: str = ""
) -> None:
    """Emit one power's payment to a seat (nothing when both amounts are 0)."""
    if credits == 0 and vp == 0:
        return
    ctx.emit(
        ev(
            "PowerPaid",
            seat=p.seat,
            power=power_id,
            credits=credits,
            vp=vp,
            why=why,
            powers=[power_id],
        )
    )


@folds("PowerPaid")
def _paid(state: GameState, e: Event) -> None:
    p = state.players[e["seat"]]
    if e["credits"] >= 0:
        gain_credits(p, e["credits"])
    else:  # a cost: with Ambition, $0 becomes $1 right after this effect (``spend_credits``)
        spend_credits(state, p, -e["credits"])
    award_vp(state, p, e["vp"])


@folds("PowerDieRemoved")
def _die_removed(state: GameState, e: Event) -> None:
    """A power returns one of the seat's dice to the supply, from wherever it lies (Ambition:
    Contact Specialist's Military die)."""
    p = state.players[e["seat"]]
    take_die_from(p, e["die"])
    supply_return(state, e["die"])
