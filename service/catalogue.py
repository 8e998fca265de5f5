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

``ambition`` says whether this server can play the Ambition expansion (a component file is
installed, ``engine.catalogue.install``): the file's name, its dice (the Leader and Entrepreneur
dice and the box's extra dice of base colours, by id: they are not numbered colour by colour)
and its objective tiles in words. The titles and help of the decisions only Ambition games owe
are in ``decisions`` once the engine has them. With Ambition installed, its factions, home
worlds and game tiles are listed with the base game's (their numbers are Ambition's: F10..,
H10.., T56..).
"""

from __future__ import annotations

import hashlib
import json
from functools import lru_cache
from typing import Any

from engine import flow
from engine.ambition.components import Components, Objective
from engine.catalogue import (
    ALL_DIE_COLORS,
    AMBITION_DICE_OF_COLOR,
    DICE,
    DICE_OF_COLOR,
    DIE_COLORS,
    FACTIONS,
    HOME_WORLDS,
    PHASES,
    TILES,
    TRADE_VALUE,
    Card,
    installed,
    is_ambition_card,
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
#: the decisions only an Ambition game owes (listed once the engine has them)
AMBITION_DECISIONS = {
    "forecast": {
        "title": "Psi-Crystal Forecasters",
        "help": "The screens are lifted: you see every phase the others selected (and, with two "
        "players, the spare Home die). You may move your phase selection die to another phase, as "
        "if you had selected that phase before Reveal, or keep the phase you selected.",
    },
    "buy_vp": {
        "title": "Buy VP chips",
        "help": "At the end of Ship, a power lets you pay credits for VP chips at the rate shown, "
        "in one payment. Choose how much to spend ($0 to buy none).",
    },
}
#: Ambition rulebook, Objectives: "check each objective at the end of the listed phases (or as
#: indicated during a step)"; the words of each check point of the component file
OBJECTIVE_CHECKS = {
    "assign": "After Assign, before Reveal",
    "reveal": "After Reveal",
    **{p: f"At the end of {n}" for p, n in PHASE_NAMES.items()},
    "manage": "At the end of Manage Empire",
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
    out["phases"], out["summary"] = _glance(c)
    return out


def _glance(c: Card) -> tuple[list[str], str]:
    """A card's phases and one line; an Ambition power the one-line reader does not know yet
    shows no phase icons and the first sentence of its catalogue text."""
    try:
        return list(glance.phases(c)), glance.summary(c)
    except ValueError:
        if not is_ambition_card(c.key):
            raise
        first = (c.description or c.name).split(". ")[0].strip().rstrip(".")
        return [], first.replace("\n", " ")


def _or(words: list[str]) -> str:
    return words[0] if len(words) == 1 else ", ".join(words[:-1]) + " or " + words[-1]


def condition_text(cond: dict[str, Any]) -> str:
    """An objective's condition in words (the vocabulary of engine.ambition.components)."""
    kind = cond["type"]
    n = cond.get("min", 0)
    if kind == "all_of":
        return " and ".join(condition_text(c) for c in cond["conditions"])
    if kind == "selected_phases":
        phases = [PHASE_NAMES[p] for p in cond["phases"]]
        return "the phases selected this round are exactly " + " and ".join(phases)
    goods = [GOOD_NAMES.get(c, c) for c in cond.get("colors") or []]
    dice = [DICE[c].name if c in DICE else c for c in cond.get("colors") or []]
    least = cond.get("cost_at_least")
    cost = f" of cost {least} or more" if least else ""
    if kind == "worlds":
        of = f" {_or(goods)}" if goods else ""
        return f"{n}{of} worlds{cost} in your tableau"
    if kind == "developments":
        return f"{n} developments{cost} in your tableau"
    if kind == "distinct_world_colors":
        return f"worlds of {n} different colours (gray counts)"
    if kind == "dice":
        of = f" {_or(dice)}" if dice else ""
        return f"{n}{of} dice anywhere in your empire"
    if kind == "distinct_die_colors":
        return f"dice of {n} different colours (a Leader die counts as a Home die)"
    if kind == "citizenry":
        of = f" {_or(dice)}" if dice else ""
        return f"{n}{of} dice in your Citizenry"
    if kind == "goods":
        on = f" on {_or(goods)} worlds" if goods else ""
        return f"{n} goods{on}"
    if kind == "credits":
        return f"${n} or more"
    if kind == "vp_chips":
        return f"{n} VP chips"
    if kind == "shipped":
        tasks = cond.get("tasks") or []
        by = (
            f" by {_or(['trading' if t == 'trade' else 'consuming' for t in tasks])}"
            if tasks
            else ""
        )
        return f"{n} goods shipped{by} in this Ship phase"
    if kind == "construction":
        return f"{n} tiles in your construction zone"
    return kind.replace("_", " ")


def _objective(o: Objective) -> dict[str, Any]:
    return {
        "id": o.id,
        "name": o.name,
        "check": o.check,
        "when": OBJECTIVE_CHECKS.get(o.check, o.check),
        "talents": o.talents,
        "text": condition_text(o.condition),
    }


def _ambition(comp: Components | None) -> dict[str, Any]:
    """What the server offers of Ambition (``available``: false without a component file)."""
    if comp is None:
        return {"available": False}
    base = {d for c in DIE_COLORS for d in DICE_OF_COLOR[c]}
    dice = []
    for color in ALL_DIE_COLORS:
        ids = [d for d in AMBITION_DICE_OF_COLOR.get(color, ()) if d not in base]
        if ids:
            d = DICE[color]
            dice.append({"color": color, "name": d.name, "faces": list(d.faces), "ids": ids})
    return {
        "available": True,
        "components": comp.name,
        "dice": dice,
        "objectives": [_objective(o) for o in comp.objectives],
    }


def catalogue() -> dict[str, Any]:
    """The catalogue as this process has it (with Ambition's once its component file is
    installed: a process installs at most one, so this is built at most twice)."""
    comp = installed()
    return _catalogue(comp.digest if comp else None)


def catalogue_etag() -> str:
    comp = installed()
    return _catalogue_etag(comp.digest if comp else None)


@lru_cache(maxsize=2)
def _catalogue(digest: str | None) -> dict[str, Any]:
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
        # (an Ambition decision once the engine owes it: every kind the API documents has words)
        "decisions": {
            **DECISIONS,
            **{k: v for k, v in AMBITION_DECISIONS.items() if k in flow.DECISIONS},
        },
        "ambition": _ambition(installed()),
    }


@lru_cache(maxsize=2)
def _catalogue_etag(digest: str | None) -> str:
    text = json.dumps(_catalogue(digest), sort_keys=True).encode()
    return '"' + hashlib.sha256(text).hexdigest()[:20] + '"'
