"""``GET /catalogue``: the game's components as the engine knows them, built once.

Tile numbers and card keys here are the ones commands, events and views use (and the public
scenario format of docs/scenarios.md): ``T<n>d`` / ``T<n>w`` for the development / world side of
game tile n, ``F<n>d`` / ``F<n>w`` / ``F<n>w2`` for faction halves, ``H<n>`` for home worlds.
Die ids are stable: the 111 dice are numbered colour by colour, in the order of ``dice``.
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
    Card,
)


def _card(c: Card) -> dict[str, Any]:
    out: dict[str, Any] = {"card": c.key, "name": c.name, "cost": c.cost, "kind": c.kind}
    if c.kind == "world":
        out["color"] = c.color
    else:
        out["development_kind"] = c.dev_kind
        out["power_id"] = c.power_id
        out["description"] = c.description
        out["endgame_bonus"] = c.endgame_bonus
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
