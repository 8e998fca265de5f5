"""How a job chooses a seat's command: the seat's bot, or the table's timeout policy.

A job sees only what the seat may see: ``engine.legal(state, seat)`` (its decision and legal
choices) and, for bots that ask for it, ``engine.observe(state, seat)``. The ``minimal`` policy
is a fixed, do-the-least legal default (first option, stock rather than scout, no optional
powers) for tables that do not want a strong bot to play for an absent person.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import engine
from bots import get_bot
from engine.rng import Rng
from engine.state import GameState

Command = dict[str, Any]
Decision = dict[str, Any]


#: bots known to only read the view they are given: they may get the seat's view rendered for the
#: projections (``GameService.observed``, shared with the view cache) instead of a fresh one
READ_ONLY_VIEW = frozenset({"heuristic", "random"})


def bot_command(
    state: GameState, seat: int, bot_name: str, rng: Rng, view: dict[str, Any] | None = None
) -> Command:
    """The named bot's command for the seat's pending decision. ``view``: ``engine.observe(state,
    seat)`` if the caller has it (used only for the bots in ``READ_ONLY_VIEW``)."""
    decision = engine.legal(state, seat)
    if decision is None:
        raise ValueError(f"seat {seat} owes no decision")
    bot = get_bot(bot_name)
    if not bot.needs_view:
        view = None
    elif view is None or bot_name not in READ_ONLY_VIEW:
        view = engine.observe(state, seat)
    return bot.act(decision, view, rng)


def minimal_command(decision: Decision) -> Command:
    """A legal command that does the least the rules allow for ``decision``."""
    kind = decision["kind"]
    if kind in ("develop", "settle"):
        return _construct(decision)
    return _MINIMAL[kind](decision)


def _start_tiles(d: Decision) -> Command:
    return {"kind": "start_tiles", "development": d["options"][0]["development"]}


def _assign(d: Decision) -> Command:
    col = {x["die"]: x["column"] for x in d["dice"]}
    wild = [{"die": die, "to": d["phases"][0]} for die in d["wild_dice"]]
    for w in wild:
        col[w["die"]] = w["to"]
    selector = min(col)
    return {"kind": "assign", "select": {"die": selector, "phase": col[selector]}, "wild": wild}


def _explore(d: Decision) -> Command:
    if not d["explorers"]:
        return {"kind": "explore", "task": "finish"}
    return {"kind": "explore", "task": "stock", "explorer": d["explorers"][0]["die"]}


def _place_tiles(d: Decision) -> Command:
    side = d["sides"][0]
    return {
        "kind": "place_tiles",
        "placements": [{"tile": x["tile"], "as": side} for x in d["tiles"]],
    }


def _abandon_one(d: Decision) -> Command:
    return {"kind": "abandon_one", "tile": d["tiles"][0]}


def _construct(d: Decision) -> Command:
    return {
        "kind": d["kind"],
        "order": [w["die"] for w in d["workers"]],
        "remove": list(d["removable"][: len(d["removals"])]),
    }


def _produce(d: Decision) -> Command:
    slots = [w["world"] for w in d["worlds"] for _ in range(w["room"])]
    producers = [x["die"] for x in d["producers"]]
    return {
        "kind": "produce",
        "goods": [{"die": producers[i], "world": slots[i]} for i in range(d["count"])],
    }


def _ship(d: Decision) -> Command:
    tasks = [
        {
            "shipper": d["shippers"][i]["die"],
            "good": d["goods"][i]["die"],
            "action": d["actions"][0],
        }
        for i in range(d["count"])
    ]
    return {"kind": "ship", "tasks": tasks}


def _manage(d: Decision) -> Command:
    recruit = sorted(x["die"] for x in d["citizenry"][: d["recruit_count"]])
    recall = [d["recallable"][0]["die"]] if d.get("must_recall") else []
    return {"kind": "manage", "recruit": recruit, "recall": recall}


_MINIMAL: dict[str, Callable[[Decision], Command]] = {
    "start_tiles": _start_tiles,
    "assign": _assign,
    "explore": _explore,
    "place_tiles": _place_tiles,
    "abandon_one": _abandon_one,
    "produce": _produce,
    "ship": _ship,
    "manage": _manage,
}


def timeout_command(state: GameState, seat: int, policy: str, rng: Rng) -> Command:
    """The command a timeout plays under the table's ``timeout_policy``."""
    if policy == "minimal":
        decision = engine.legal(state, seat)
        if decision is None:
            raise ValueError(f"seat {seat} owes no decision")
        return minimal_command(decision)
    return bot_command(state, seat, policy, rng)
