"""Events and helpers shared by power handlers: ``PowerPaid`` (credits or VP chips a power gives).

A handler that pays at a phase's end or on a trigger calls ``pay``; the fold applies the $10 cap
and takes VP chips from the pool like any other gain.
"""

from __future__ import annotations

from ..economy import award_vp, gain_credits, spend_credits
from ..fold import Ctx, Event, ev, folds
from ..state import GameState, PlayerState


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
