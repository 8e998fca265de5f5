"""``GET /catalogue``: the game's components as the engine knows them, built once.

Tile numbers and card keys here are the ones commands, events and views use (and the public
scenario format of docs/scenarios.md): ``T<n>d`` / ``T<n>w`` for the development / world side of
game tile n, ``F<n>d`` / ``F<n>w`` / ``F<n>w2`` for faction halves, ``H<n>`` for home worlds.
Die ids are stable: the 111 dice are numbered colour by colour, in the order of ``dice``.
A world's ``description`` says in words what it holds and brings (``world_text``); a
development's is the catalogue's own text of its power. Every card's ``phases`` (the phases its
powers act in) and ``summary`` (one line of what it does, for the tableau's rows) come from
``engine.powers.glance``, derived from the same effects the rules code reads.
"""

from __future__ import annotations

import hashlib
import json
from functools import lru_cache
from typing import Any

from engine.catalogue import (
    DICE,
    DICE_OF_COLOR,
    DIE_COLORS,
    FACTIONS,
    HOME_WORLDS,
    PHASES,
    TILES,
    TRADE_VALUE,
    Card,
)
from engine.powers import glance

#: world colour -> the kind of good it makes, as the rulebook names it
GOOD_NAMES = {
    "novelty": "Novelty",
    "rare": "Rare Elements",
    "genes": "Genes",
    "alien": "Alien Technology",
}
_PLACES = {"cup": "to your cup", "citizenry": "to your Citizenry", "good": "on it as a good"}


def world_text(c: Card) -> str:
    """What a world card holds and brings, in the rulebook's words."""
    good = GOOD_NAMES.get(c.color or "")
    parts = [
        f"{good} world: it holds one {good} good; trading that good pays ${TRADE_VALUE[c.color or '']}."
        if good
        else "Gray world: it makes no goods."
    ]
    imm = c.immediate
    when = "When you settle it" if c.tile is not None else "At the start of the game"
    gains = [
        f"a {DICE[g['color']].name} ({g['color']}) die {_PLACES.get(g['to'], 'to ' + g['to'])}"
        for g in imm.get("dice_gained") or []
    ]
    if imm.get("credits"):
        gains.append(f"${imm['credits']}")
    if gains:
        parts.append(f"{when}, you gain " + ", ".join(gains) + ".")
    if imm.get("start_credits"):
        parts.append(f"You start the game with ${imm['start_credits']}.")
    if imm.get("dice_removed"):
        parts.append(f"{when}, one of your dice (your choice) leaves the game.")
    return " ".join(parts)


def _card(c: Card) -> dict[str, Any]:
    out: dict[str, Any] = {"card": c.key, "name": c.name, "cost": c.cost, "kind": c.kind}
    if c.kind == "world":
        out["color"] = c.color
        out["description"] = world_text(c)
    else:
        out["development_kind"] = c.dev_kind
        out["power_id"] = c.power_id
        out["description"] = c.description
        out["endgame_bonus"] = c.endgame_bonus
    out["phases"] = list(glance.phases(c))
    out["summary"] = glance.summary(c)
    return out


@lru_cache(maxsize=1)
def catalogue() -> dict[str, Any]:
    dice = []
    for color in DIE_COLORS:
        d = DICE[color]
        ids = DICE_OF_COLOR[color]
        dice.append(
            {
                "color": color,
                "name": d.name,
                "faces": list(d.faces),
                "count": d.count,
                "consume_match": d.consume_match,
                "first_id": ids[0],
                "last_id": ids[-1],
            }
        )
    return {
        "phases": list(PHASES),
        "dice": dice,
        "factions": [
            {"number": n, "name": f.name, "cards": [_card(c) for c in f.cards]}
            for n, f in sorted(FACTIONS.items())
        ],
        "home_worlds": [dict(_card(c), number=n) for n, c in sorted(HOME_WORLDS.items())],
        "tiles": [
            {"tile": n, "development": _card(d), "world": _card(w)}
            for n, (d, w) in sorted(TILES.items())
        ],
    }


@lru_cache(maxsize=1)
def catalogue_etag() -> str:
    text = json.dumps(catalogue(), sort_keys=True).encode()
    return '"' + hashlib.sha256(text).hexdigest()[:20] + '"'
