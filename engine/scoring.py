"""Scoring and winners.

Score = VP chips + the printed costs of every tableau tile (both numbers of the faction tile; no
construction-zone tile) + the bonuses of 6-cost developments, each ``multiplier * ceil(X / divisor)``
(fractions round up), or for Galactic Renaissance the number of thresholds its VP chips reach. Every
number comes from the tile's ``endgame_bonus`` in ``engine/data/tiles.yaml``. Ties: most (cup dice + credits) wins; still tied, all tied players win. A seat that
resigned (``engine.leaving``) is scored but never wins.

Readings (rulebook silent, noted): faction development halves count as developments for the
bonuses; "dice owned" means cup, Citizenry, construction stacks and goods (everything a seat owns).
"""

from __future__ import annotations

from typing import Any

from .ambition.objectives import owned_talents
from .catalogue import CARDS, DIE_COLOR, PHANTOM_BASE, Card, diversity_color
from .state import GameState, PlayerState


def _ceil_div(a: int, b: int) -> int:
    return -(-a // b)


def _thresholds_reached(thresholds: list[int], x: int) -> int:
    """How many of the tile's thresholds ``x`` reaches. Reading (the tile prints the thresholds up
    to 55 chips, the rulebook says no more): past the printed ones they go on as printed, each step
    one larger than the step before (the triangular numbers 66, 78, ...)."""
    reached = sum(1 for t in thresholds if t <= x)
    if reached < len(thresholds) or len(thresholds) < 2:
        return reached
    last, step = thresholds[-1], thresholds[-1] - thresholds[-2]
    while last + step + 1 <= x:
        step += 1
        last += step
        reached += 1
    return reached


def _filtered_cards(keys: list[str], flt: dict[str, Any] | None) -> list[Card]:
    cards = [CARDS[k] for k in keys]
    if not flt:
        return cards
    if "world_colors" in flt:
        cards = [c for c in cards if c.color in flt["world_colors"]]
    if "has_reassign_power" in flt:
        cards = [c for c in cards if c.has_reassign_power == flt["has_reassign_power"]]
    if "cost_at_least" in flt:  # Terraforming Unlimited: worlds of printed cost 4 or more
        cards = [c for c in cards if c.cost >= int(flt["cost_at_least"])]
    return cards


def bonus_value(p: PlayerState, card: Card) -> int:
    """The end-game bonus of one development for its owner (0 when it has none)."""
    return bonus_of(
        card,
        vp=p.vp,
        devs=p.devs,
        worlds=p.worlds,
        dice_colors=[DIE_COLOR[d] for d in p.owned_dice() if d < PHANTOM_BASE],
        goods=sum(len(g) for g in p.goods.values()),
    )


def bonus_of(
    card: Card, *, vp: int, devs: list[str], worlds: list[str], dice_colors: list[str], goods: int
) -> int:
    """The end-game bonus of one development for a seat with ``vp`` VP chips, these tableau
    cards, dice of these colours (one entry per real die it owns) and ``goods`` goods; a
    seat's view holds all of it, so a running score can be told during play."""
    b = card.endgame_bonus
    if not b:
        return 0
    of, kind, flt = b["of"], b["type"], b.get("filter")
    if kind == "triangular":  # Galactic Renaissance: a point per threshold its VP chips reach
        if of != "vp_chips":
            raise ValueError(f"unknown end-game bonus basis {of!r} on {card.name}")
        return _thresholds_reached(b["thresholds"], vp)
    if of in ("developments_in_tableau", "worlds_in_tableau"):
        keys = devs if of == "developments_in_tableau" else worlds
        cards = _filtered_cards(keys, flt)
        if b.get("includes_self") is False:
            cards = [c for c in cards if c.key != card.key]
        x = sum(c.cost for c in cards) if kind == "sum_cost" else len(cards)
    elif of == "dice_owned":
        colors = dice_colors
        if flt and "die_colors" in flt:
            colors = [c for c in colors if c in flt["die_colors"]]
        x = len(colors)
    elif of == "distinct_die_colors_owned":
        x = len({diversity_color(c) for c in dice_colors})
    elif of == "goods_on_own_worlds":
        x = goods
    else:
        raise ValueError(f"unknown end-game bonus basis {of!r} on {card.name}")
    return int(b.get("multiplier", 1)) * _ceil_div(x, int(b.get("divisor", 1)))


def score(p: PlayerState) -> dict[str, Any]:
    """One seat's final score with its breakdown."""
    tiles = sum(CARDS[k].cost for k in p.devs) + sum(CARDS[k].cost for k in p.worlds)
    bonuses = {k: bonus_value(p, CARDS[k]) for k in p.devs if CARDS[k].endgame_bonus}
    for k in p.worlds:
        # Ambition rulebook, Scoring: "One world, Rebel Stronghold, now receives end game bonus
        # VPs (similar to 6-cost devs)" (a flat bonus in the data)
        b = CARDS[k].scoring_bonus
        if b:
            if b.get("type") != "flat":
                raise ValueError(f"unknown world scoring bonus {b!r} on {CARDS[k].name}")
            bonuses[k] = int(b["vp"])
    total = p.vp + tiles + sum(bonuses.values())
    out: dict[str, Any] = {
        "seat": p.seat,
        "vp_chips": p.vp,
        "tiles": tiles,
        "bonuses": bonuses,
        "total": total,
        "tiebreak": len(p.cup) + p.credits,
    }
    # Ambition rulebook: "At game end, recall all Talent counters. Unused Talent counters are
    # worth 1 VP apiece and do not count as dice for tie-breaking purposes (or as VP chips for
    # Galactic Renaissance)": never in the cup nor the VP chips; a base game has none
    talents = owned_talents(p)
    if talents:
        out["talents"] = talents
        out["total"] = total + talents
    return out


def final_scores(state: GameState) -> tuple[list[dict[str, Any]], list[int]]:
    """Every seat's score, and the winners: the best of the seats that did not resign (a seat
    that resigned is scored but never wins; ``engine.leaving``)."""
    scores = [score(p) for p in state.players]
    staying = {p.seat for p in state.playing()}
    contenders = [s for s in scores if s["seat"] in staying]
    best = max((s["total"], s["tiebreak"]) for s in contenders)
    winners = [s["seat"] for s in contenders if (s["total"], s["tiebreak"]) == best]
    return scores, winners
