"""``GET /catalogue``: the game's components as the engine knows them, built once.

Tile numbers and card keys here are the ones commands, events and views use (and the public
scenario format of docs/scenarios.md): ``T<n>d`` / ``T<n>w`` for the development / world side of
game tile n, ``F<n>d`` / ``F<n>w`` / ``F<n>w2`` for faction halves, ``H<n>`` for home worlds.
Die ids are stable: the 111 dice are numbered colour by colour, in the order of ``dice``.
A world's ``description`` says in words what it holds and brings (``world_text``); a
development's is the catalogue's own text of its power. Every card's ``phases`` (the phases its
powers act in) and ``summary`` (one line of what it does, for the tableau's rows) come from
``engine.powers.glance``, derived from the same effects the rules code reads. ``names`` (of the
phases, a die's faces and the goods) and ``decisions`` (each decision's title and help for people)
are the words every client shows, kept here once.
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
#: the phases as the rulebook names them, and a die's faces (a phase's face or the wild face)
PHASE_NAMES = {
    "explore": "Explore",
    "develop": "Develop",
    "settle": "Settle",
    "produce": "Produce",
    "ship": "Ship",
}
FACE_NAMES = {**PHASE_NAMES, "wild": "Wild"}
#: every decision a seat may owe: its title, and help for a person who knows the board game (a
#: decision's own ``help`` in a view is written for programs: the fields of its command)
DECISIONS = {
    "start_tiles": {
        "title": "Choose your start tiles",
        "help": "You were dealt two game tiles. One goes into your development construction stack, "
        "the other into your world stack: choose which tile you build as a development and which "
        "as a world. Tap a name to read its card.",
    },
    "assign": {
        "title": "Assign your workers",
        "help": "Behind your screen, every rolled die goes to the column of its face. Pick one "
        "worker to select a phase (it moves to that column; its face does not matter). Wild faces "
        "go to any column you like. You may then use Dictate (put one worker aside to move "
        "another to any column) and your Reassign powers.",
    },
    "explore": {
        "title": "Explore",
        "help": "Each explorer either stocks (gains credits: $2, more with some powers) or scouts "
        "(draws a tile from the bag to place in your construction zone). Before scouting you may "
        "give back construction-zone tiles to draw that many more.",
    },
    "place_tiles": {
        "title": "Place your new tiles",
        "help": "Put each tile you drew under your development stack (as its development side) or "
        "under your world stack (as its world side), in the order shown.",
    },
    "abandon_one": {
        "title": "Abandon a tile",
        "help": "The bag is empty: give back one tile of your construction zone; the bag is "
        "refilled from the tiles given back.",
    },
    "develop": {
        "title": "Develop",
        "help": "Your developers go onto the top tile of your development stack; when the dice on "
        "it equal its cost, it is completed and joins your tableau, and the dice go to your "
        "Citizenry.",
    },
    "settle": {
        "title": "Settle",
        "help": "Your settlers go onto the top tile of your world stack; when the dice on it equal "
        "its cost, it is completed and joins your tableau, and the dice go to your Citizenry.",
    },
    "produce": {
        "title": "Produce",
        "help": "Each producer becomes a good on one of your non-gray worlds that has room (one "
        "good per world).",
    },
    "ship": {
        "title": "Ship",
        "help": "Each shipper ships one good: trade it for credits (by the world's colour) or "
        "consume it for VP (more when the good and the shipper match the world). Used goods and "
        "shippers go to your Citizenry.",
    },
    "manage": {
        "title": "Manage your empire",
        "help": "Pay $1 for each die you move from your Citizenry into your cup (as many as you can "
        "afford, you must). You may also bring workers from your stacks and goods back to the "
        "cup.",
    },
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
        "names": {"phases": PHASE_NAMES, "faces": FACE_NAMES, "goods": GOOD_NAMES},
        "decisions": DECISIONS,
    }


@lru_cache(maxsize=1)
def catalogue_etag() -> str:
    text = json.dumps(catalogue(), sort_keys=True).encode()
    return '"' + hashlib.sha256(text).hexdigest()[:20] + '"'
