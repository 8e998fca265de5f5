"""Scoring and winners.

Score = VP chips + the printed costs of every tableau tile (both numbers of the faction tile; no
construction-zone tile) + the bonuses of 6-cost developments, each ``multiplier * ceil(X / divisor)``
(fractions round up). Ties: most (cup dice + credits) wins; still tied, all tied players win.

Readings (rulebook silent, noted): faction development halves count as developments for the
bonuses; "dice owned" means cup, Citizenry, construction stacks and goods (everything a seat owns).
"""

from __future__ import annotations

from typing import Any

from .catalogue import CARDS, DIE_COLOR, Card
from .state import GameState, PlayerState


def _ceil_div(a: int, b: int) -> int:
    return -(-a // b)


def _filtered_cards(keys: list[str], flt: dict[str, Any] | None) -> list[Card]:
    cards = [CARDS[k] for k in keys]
    if not flt:
        return cards
    if "world_colors" in flt:
        cards = [c for c in cards if c.color in flt["world_colors"]]
    if "has_reassign_power" in flt:
        cards = [c for c in cards if c.has_reassign_power == flt["has_reassign_power"]]
    return cards


def bonus_value(p: PlayerState, card: Card) -> int:
    """The end-game bonus of one development for its owner (0 when it has none)."""
    return bonus_of(
        card,
        vp=p.vp,
        devs=p.devs,
        worlds=p.worlds,
        dice_colors=[DIE_COLOR[d] for d in p.owned_dice() if d < 1000],
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
    if kind == "triangular":
        n = 0
        while (n + 1) * (n + 2) // 2 <= vp:
            n += 1
        return n
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
        x = len(set(dice_colors))
    elif of == "goods_on_own_worlds":
        x = goods
    else:
        raise ValueError(f"unknown end-game bonus basis {of!r} on {card.name}")
    return int(b.get("multiplier", 1)) * _ceil_div(x, int(b.get("divisor", 1)))


def score(p: PlayerState) -> dict[str, Any]:
    """One seat's final score with its breakdown."""
    tiles = sum(CARDS[k].cost for k in p.devs) + sum(CARDS[k].cost for k in p.worlds)
    bonuses = {k: bonus_value(p, CARDS[k]) for k in p.devs if CARDS[k].endgame_bonus}
    total = p.vp + tiles + sum(bonuses.values())
    return {
        "seat": p.seat,
        "vp_chips": p.vp,
        "tiles": tiles,
        "bonuses": bonuses,
        "total": total,
        "tiebreak": len(p.cup) + p.credits,
    }


def final_scores(state: GameState) -> tuple[list[dict[str, Any]], list[int]]:
    scores = [score(p) for p in state.players]
    best = max((s["total"], s["tiebreak"]) for s in scores)
    winners = [s["seat"] for s in scores if (s["total"], s["tiebreak"]) == best]
    return scores, winners
