"""Shared bookkeeping rules: the $10 credit cap, the VP chip pool, the dice supply, removing a die.

Every phase uses these, so each rule has exactly one home here.
"""

from __future__ import annotations

from .catalogue import COLOR_INDEX, DIE_COLOR
from .state import GameState, PlayerState

CREDIT_CAP = 10
VP_PER_PLAYER = 12


def gain_credits(p: PlayerState, amount: int) -> int:
    """Add credits, capped at $10 ("any excess credits are lost"). Returns the amount kept."""
    before = p.credits
    p.credits = min(CREDIT_CAP, p.credits + amount)
    return p.credits - before


def award_vp(state: GameState, p: PlayerState, amount: int) -> None:
    """Give VP chips: from the initial pool first, then from the set-aside 10-VP chips.

    The 10-VP chips are treated as an unlimited reserve (five of them hold 50 VP, which no game
    reaches after the pool is empty, since the game ends with that round).
    """
    if amount <= 0:
        return
    from_pool = min(amount, state.vp_pool)
    state.vp_pool -= from_pool
    state.vp_reserve_used += amount - from_pool
    p.vp += amount


def supply_peek(state: GameState, color: str) -> int | None:
    """The die a gain of this colour would take (the lowest free id), or None if none is left."""
    pile = state.supply[COLOR_INDEX[color]]
    return pile[0] if pile else None


def supply_take(state: GameState, die: int) -> None:
    pile = state.supply[COLOR_INDEX[DIE_COLOR[die]]]
    pile.remove(die)


def supply_return(state: GameState, die: int) -> None:
    pile = state.supply[COLOR_INDEX[DIE_COLOR[die]]]
    pile.append(die)
    pile.sort()


def take_die_from(p: PlayerState, die: int) -> str:
    """Remove one of the seat's dice from wherever it lies; returns the place it was taken from."""
    for name in ("cup", "citizenry", "dictate", "dev_dice", "world_dice"):
        lst: list[int] = getattr(p, name)
        if die in lst:
            lst.remove(die)
            return name
    for i, col in enumerate(p.columns):
        if die in col:
            col.remove(die)
            return f"column:{i}"
    for world, goods in p.goods.items():
        if die in goods:
            goods.remove(die)
            if not goods:
                del p.goods[world]
            return f"good:{world}"
    raise KeyError(die)
