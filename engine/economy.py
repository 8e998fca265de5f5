"""Shared bookkeeping rules: the $10 credit cap, the VP chip pool, the dice supply, removing a die,
paying credits (Ambition: $0 becomes $1 at once) and where a die goes when it finishes a task
(Ambition: a $ face sends it to the cup).

Every phase uses these, so each rule has exactly one home here.
"""

from __future__ import annotations

from bisect import insort

from .catalogue import (
    COLOR_INDEX,
    DIE_COLOR,
    DIE_FACES,
    PHANTOM_BASE,
    TALENT_BASE,
    color_of,
    face_dollar,
    face_phases,
    is_ambition,
)
from .state import GameState, PlayerState

CREDIT_CAP = 10
VP_PER_PLAYER = 12


def gain_credits(p: PlayerState, amount: int) -> int:
    """Add credits, capped at $10 ("any excess credits are lost"). Returns the amount kept."""
    before = p.credits
    p.credits = min(CREDIT_CAP, p.credits + amount)
    return p.credits - before


def spend_credits(state: GameState, p: PlayerState, amount: int) -> None:
    """Take ``amount`` credits from a seat (an effect's cost; callers check it can be paid).

    Ambition rulebook, Reaching Zero Credits (rule change): "If an effect reduces a player's
    credits to 0 during a phase, then *after* that effect is done, reset a player's credits to 1
    (instead of waiting until after Recruiting to do this)." An effect is one event, and this runs
    as its fold's last step, so the reset follows the effect at once, as often as effects bring
    the credits to 0 ("a player's credits could be reset multiple times"), and before the next
    event: before any effect triggered by completing a tile, which is an event of its own.
    The base game waits for Manage (``phases.manage``); the only credit costs during a base-game
    phase (Galactic Bankers) leave that timing alone.
    """
    p.credits -= amount
    if p.credits == 0 and is_ambition(state.options):
        p.credits = 1


def finish_task(state: GameState, p: PlayerState, die: int, task: str) -> None:
    """A worker that finished its task (a phase name) goes to the Citizenry; in an Ambition game
    a die whose $ face matches the task goes to the cup instead (``finishes_to_cup``).

    Ambition rulebook, Using Talent Counters: "When a Talent worker finishes a task, remove it
    (returning the counter to the supply)": a talent worker goes nowhere (the talent supply is
    every counter no seat holds, ``engine.ambition.objectives``)."""
    if die >= TALENT_BASE:
        return
    if state.options.get("ambition") and finishes_to_cup(p, die, task):
        insort(p.cup, die)
    else:
        p.citizenry.append(die)


def worker_kinds(state: GameState, p: PlayerState, dice: list[int], task: str) -> int:
    """How many kinds of dice ``dice`` holds for a choice of which of them do a ``task``: their
    colours, and in an Ambition game also whether a $ face sends a die to the cup when it finishes
    that task (two same-coloured dice then differ). A choice among one kind changes nothing."""
    if state.options.get("ambition"):
        return len({(color_of(d), finishes_to_cup(p, d, task)) for d in dice})
    return len({color_of(d) for d in dice})


def finishes_to_cup(p: PlayerState, die: int, task: str) -> bool:
    """Whether a die that finishes a ``task`` (a phase name) goes to the cup by its $ face.

    Ambition rulebook, $ Faces: "During the Phases step, if a die shows a $ symbol ... and
    finishes a task *matching* its displayed face, return it to the cup, *not* the Citizenry."
    The displayed face is the one rolled (``PlayerState.faces``), whatever column the die was
    assigned to, so a die moved by a Reassign power or selecting a phase matches only if its face
    shows that phase too. Dice with no face (phantom workers, talent counters, dice a tile gave)
    never match.
    """
    f = p.faces.get(die)
    if f is None or die >= PHANTOM_BASE:
        return False
    face = DIE_FACES[die][f]
    return face_dollar(face) and task in face_phases(face)


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
    """Remove one of the seat's dice from wherever it lies; returns the place it was taken from.
    (Ambition: an unused talent counter, which counts as a die for immediate effects, too.)"""
    for name in ("cup", "citizenry", "dictate", "dev_dice", "world_dice", "talents"):
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
