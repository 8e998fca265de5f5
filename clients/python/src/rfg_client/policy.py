"""``legal_choice``: a minimal policy that answers any decision with a legal command, chosen at
random among the simple ones (optional powers are left unused, which is always legal). A
starting point for your own: ``Client.play(game_id, seat, legal_choice)`` plays a whole game.
``accept_challenge``: which challenges a bot accepts (``rfg_client.bot.Bot`` asks it).

Each function reads only the decision the server sent (``view.decision``, or a turn signal's
``decision``): the legal choices are in it (``GET /games/{id}/seats/{n}/view``; the fields of each
kind are the ``*Decision`` schemas of the server's ``openapi.yaml``).
"""

from __future__ import annotations

import random
from collections.abc import Callable
from typing import Any

PHASES = ("explore", "develop", "settle", "produce", "ship")
_rng = random.Random()

Choice = Callable[[dict[str, Any], random.Random], dict[str, Any]]
#: the fewest seconds a decision a challenge may give (its ``time_control.per_decision``)
FASTEST = 5.0


def accept_challenge(challenge: dict[str, Any]) -> str | None:
    """``None`` to accept ``challenge`` (the resource an ``event: challenge`` carries), else the
    reason to decline it with (``POST /challenges/{id}/decline``'s ``reason``). This one accepts
    tables of two to four seats that give at least ``FASTEST`` seconds a decision."""
    if not 2 <= len(challenge["seats"]) <= 4:
        return "not-now"
    per_decision = (challenge.get("time_control") or {}).get("per_decision")
    if per_decision is not None and per_decision < FASTEST:
        return "too-fast"
    return None


def legal_choice(
    decision: dict[str, Any], view: dict[str, Any] | None = None, rng: random.Random | None = None
) -> dict[str, Any]:
    """A legal command answering ``decision`` (``view`` is not needed; the signature is that of
    ``Client.play``'s ``decide``). ``rng``: for repeatable choices."""
    kind = decision.get("kind")
    choose = CHOICES.get(str(kind))
    if choose is None:
        raise ValueError(f"no choice for a decision of kind {kind!r}; update rfg-client")
    return choose(decision, rng or _rng)


def _chance(rng: random.Random, a: int, b: int) -> bool:
    return rng.randrange(b) < a


def _start_tiles(d: dict[str, Any], rng: random.Random) -> dict[str, Any]:
    return {"kind": "start_tiles", "development": rng.choice(d["options"])["development"]}


def _assign(d: dict[str, Any], rng: random.Random) -> dict[str, Any]:
    column = {x["die"]: x["column"] for x in d["dice"]}
    wild = []
    for die in d["wild_dice"]:
        to = rng.choice(PHASES)
        wild.append({"die": die, "to": to})
        column[die] = to
    return {
        "kind": "assign",
        "select": {"die": rng.choice(sorted(column)), "phase": rng.choice(PHASES)},
        "wild": wild,
    }


def _explore(d: dict[str, Any], rng: random.Random) -> dict[str, Any]:
    if not d["explorers"]:
        return {"kind": "explore", "task": "finish"}
    explorer = rng.choice(d["explorers"])["die"]
    if _chance(rng, 1, 2):
        return {"kind": "explore", "task": "stock", "explorer": explorer}
    abandon = [t for t in d["abandonable"] if _chance(rng, 1, 6)]
    return {"kind": "explore", "task": "scout", "explorer": explorer, "abandon": abandon}


def _place_tiles(d: dict[str, Any], rng: random.Random) -> dict[str, Any]:
    tiles = [x["tile"] for x in d["tiles"]]
    rng.shuffle(tiles)
    placements = []
    for tile in tiles:
        p: dict[str, Any] = {"tile": tile, "as": rng.choice(d["sides"])}
        if d.get("on_top") and _chance(rng, 1, 2):
            p["on_top"] = True
        placements.append(p)
    return {"kind": "place_tiles", "placements": placements}


def _abandon_one(d: dict[str, Any], rng: random.Random) -> dict[str, Any]:
    return {"kind": "abandon_one", "tile": rng.choice(d["tiles"])}


def _construct(d: dict[str, Any], rng: random.Random) -> dict[str, Any]:
    order = [w["die"] for w in d["workers"]]
    rng.shuffle(order)
    pool = list(d["removable"])
    remove = []
    for _ in d["removals"]:
        die = rng.choice(pool)
        pool.remove(die)
        remove.append(die)
    # the completions as the server follows them: each takes the next 'cost' dice of the stack
    stack = list(d["dice_on_stack"]) + order
    returns: list[list[int]] = []
    r = 0
    for c in d["completions"]:
        if len(stack) < c["cost"]:
            break
        used, stack = stack[: c["cost"]], stack[c["cost"] :]
        removed = remove[r] if c["removal"] else None
        r += 1 if c["removal"] else 0
        if removed in stack:
            stack.remove(removed)
        candidates = [x for x in used if x != removed]
        n = rng.randrange(min(c["returns_max"], len(candidates)) + 1) if c["returns_max"] else 0
        picks = []
        for _ in range(n):
            x = rng.choice(candidates)
            candidates.remove(x)
            picks.append(x)
        returns.append(picks)
    command: dict[str, Any] = {"kind": d["kind"], "order": order, "remove": remove}
    if any(returns):
        command["returns"] = returns
    return command


def _produce(d: dict[str, Any], rng: random.Random) -> dict[str, Any]:
    producers = [x["die"] for x in d["producers"]]
    rng.shuffle(producers)
    slots = [w["world"] for w in d["worlds"] for _ in range(w["room"])]
    rng.shuffle(slots)
    goods = [{"die": producers[i], "world": slots[i]} for i in range(d["count"])]
    return {"kind": "produce", "goods": goods}


def _ship(d: dict[str, Any], rng: random.Random) -> dict[str, Any]:
    shippers = [x["die"] for x in d["shippers"]]
    goods = [x["die"] for x in d["goods"]]
    rng.shuffle(shippers)
    rng.shuffle(goods)
    tasks = [
        {"shipper": shippers[i], "good": goods[i], "action": rng.choice(d["actions"])}
        for i in range(d["count"])
    ]
    return {"kind": "ship", "tasks": tasks}


def _manage(d: dict[str, Any], rng: random.Random) -> dict[str, Any]:
    citizens = [x["die"] for x in d["citizenry"]]
    rng.shuffle(citizens)
    recruit = sorted(citizens[: d["recruit_count"]])
    recall = [x["die"] for x in d["recallable"] if _chance(rng, 1, 4)]
    if d["cup"] == 0 and not recruit and not recall and d["recallable"]:
        recall = [rng.choice(d["recallable"])["die"]]
    return {"kind": "manage", "recruit": recruit, "recall": sorted(recall)}


#: decision kind -> its chooser
CHOICES: dict[str, Choice] = {
    "start_tiles": _start_tiles,
    "assign": _assign,
    "explore": _explore,
    "place_tiles": _place_tiles,
    "abandon_one": _abandon_one,
    "develop": _construct,
    "settle": _construct,
    "produce": _produce,
    "ship": _ship,
    "manage": _manage,
}
