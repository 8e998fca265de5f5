"""What a served view holds beyond ``engine.observe``: the projection (``events.games.projections``)
renders these into the stored views, so every reader serves the stored bytes as they are.

* ``decision.decision_id`` in a seat's view: the id of the decision the seat owes, the stream
  version at which it became pending (``SeatClock.decision_id``, folded by
  ``events.games.time_control``). A command may name it instead of a version
  (``GameService.submit``).
* ``decision.help``: what the decision is and how to answer it. ``DECISION_HELP`` is the one table
  of help texts, one per decision kind; the engine's own, more detailed text (when
  ``engine.legal`` gives one) comes after it.
* ``result.scores[].bonus_cards``: each end-game bonus with the card's name, next to ``bonuses``
  (card key -> VP), so a client need not read ``/catalogue`` to name them.
* ``players[].score``: the seat's score if the game ended now (VP chips + tableau tiles + each
  end-game bonus so far, named), told from what the view itself shows of the seat.
* ``players[].name``: the seat's display name, when its player gave one.
"""

from __future__ import annotations

from typing import Any

from engine.catalogue import card
from engine.scoring import bonus_of

#: decision kind -> what it asks and how to answer it (the command of the same ``kind``)
DECISION_HELP: dict[str, str] = {
    "start_tiles": (
        "Choose your two starting tiles: each entry of 'options' is one way to split the two "
        "tiles dealt to you, one as a development and the other as a world. Answer "
        "{kind: start_tiles, development: <the 'development' tile of the option you choose>}."
    ),
    "assign": (
        "Assign your rolled workers behind your screen: select one phase with one worker "
        "('select': {die, phase}), put every die of 'wild_dice' in a column ('wild': [{die, to}]) "
        "and optionally use the powers of 'means' in order ('reassign': [{via, park?, moves}]): "
        "'dictate' parks one worker to move others, a Reassign power moves workers as its "
        "entry says."
    ),
    "explore": (
        "Use your explorers one at a time: 'scout' draws a tile from the bag (optionally "
        "abandoning construction-zone tiles of 'abandonable' first), 'stock' earns the "
        "explorer's 'stock' credits; with Advanced Logistics 'rearrange' reorders 'stacks' and "
        "'finish' ends the phase. Answer {kind: explore, task, explorer?, abandon?, development?, "
        "world?}."
    ),
    "place_tiles": (
        "Place every drawn tile of 'tiles' once, in order, at the bottom (or, when 'on_top' is "
        "true, the top) of your development or world construction stack: {kind: place_tiles, "
        "placements: [{tile, as: development|world, on_top?}]}."
    ),
    "abandon_one": (
        "The bag ran out: give back one of your construction-zone tiles of 'tiles': "
        "{kind: abandon_one, tile}."
    ),
    "develop": (
        "Put your developers on your development stack: 'order' lists every worker of 'workers' "
        "once; each tile of 'completes' completes, and 'remove' / 'returns' / 'stack_order' "
        "answer what 'removals', 'completions' and 'stack_choice' ask."
    ),
    "settle": (
        "Put your settlers on your world stack: 'order' lists every worker of 'workers' once; "
        "each tile of 'completes' completes, and 'remove' / 'returns' / 'stack_order' answer "
        "what 'removals', 'completions' and 'stack_choice' ask."
    ),
    "produce": (
        "Put your producers of 'producers' as goods on your worlds of 'worlds' (at most 'room' "
        "on each): {kind: produce, goods: [{die, world}]}, exactly 'count' of them."
    ),
    "ship": (
        "Use your shippers of 'shippers' on goods of 'goods': trade a good for credits or "
        "consume it for VP: {kind: ship, tasks: [{shipper, good, action: trade|consume}]}, "
        "exactly 'count' tasks, with any flag 'options' offers."
    ),
    "forecast": (
        "Ambition, Psi-Crystal Forecasters: the screens are lifted; you may move your phase "
        "selection die to another phase of 'phases' as if you had selected it before Reveal, or "
        "keep yours: {kind: forecast, phase?} (leave 'phase' out to keep it)."
    ),
    "buy_vp": (
        "Ambition, Deficit Spending: at the end of Ship you may pay credits for VP chips at "
        "'rate', once, at most 'spend_max': {kind: buy_vp, spend, first?} ('spend': 0 buys "
        "none; 'first' orders it before your other end-of-Ship powers)."
    ),
    "manage": (
        "Pay to recruit: move exactly 'recruit_count' dice of 'citizenry' to your cup, and "
        "optionally recall dice of 'recallable' (from stacks and goods) to your cup: "
        "{kind: manage, recruit: [...], recall: [...]}."
    ),
}


def help_for(decision: dict[str, Any]) -> str:
    """The ``help`` a served decision carries: the table's text, then the engine's details."""
    kind = str(decision.get("kind"))
    base = DECISION_HELP.get(kind, f"answer with a command of kind {kind!r}")
    detail = decision.get("help")
    return f"{base} Details: {detail}" if isinstance(detail, str) and detail else base


def served_decision(decision: dict[str, Any], decision_id: int | None) -> dict[str, Any]:
    """A seat's decision as served: with its ``decision_id`` (when the clock names one) and
    ``help``."""
    out = dict(decision)
    if decision_id is not None:
        out["decision_id"] = decision_id
    out["help"] = help_for(decision)
    return out


def named_bonuses(result: dict[str, Any]) -> dict[str, Any]:
    """A game's result with ``bonus_cards`` ([{card, name, vp}]) added to every score."""
    scores = [
        {
            **score,
            "bonus_cards": [
                {"card": key, "name": _name(key), "vp": vp}
                for key, vp in sorted((score.get("bonuses") or {}).items())
            ],
        }
        for score in result.get("scores") or []
    ]
    return {**result, "scores": scores} if "scores" in result else result


def _name(key: str) -> str:
    try:
        return card(key).name
    except KeyError:
        return key


def running_score(player: dict[str, Any]) -> dict[str, Any]:
    """A seat's score if the game ended now, from its side of a view: ``vp_chips``, ``tiles``
    (the printed costs of its tableau), ``bonus_cards`` ([{card, name, vp}], every end-game
    bonus development it has, scoring so far) and ``total``; the same sums as the final score."""
    devs = [str(c["card"]) for c in player.get("developments") or []]
    worlds = [str(c["card"]) for c in player.get("worlds") or []]
    colors = [c for c, n in (player.get("dice_by_color") or {}).items() for _ in range(int(n))]
    goods = sum(len(g) for g in (player.get("goods") or {}).values())
    vp = int(player.get("vp_chips") or 0)
    tiles = sum(card(k).cost for k in devs + worlds)
    points = {
        k: bonus_of(card(k), vp=vp, devs=devs, worlds=worlds, dice_colors=colors, goods=goods)
        for k in devs
        if card(k).endgame_bonus
    }
    bonuses = [{"card": k, "name": card(k).name, "vp": n} for k, n in sorted(points.items())]
    total = vp + tiles + sum(points.values())
    out: dict[str, Any] = {"vp_chips": vp, "tiles": tiles, "bonus_cards": bonuses, "total": total}
    # Ambition: each talent counter the seat holds is 1 VP at the end (unused ones, counted when
    # they are not behind the screen, and those at work)
    construction = player.get("construction") or {}
    at_work = [d for g in (player.get("goods") or {}).values() for d in g]
    at_work += [d for st in construction.values() for d in (st or {}).get("dice") or []]
    at_work += [d for col in (player.get("columns") or {}).values() for d in col]
    talents = int(player.get("talents") or 0) + sum(1 for d in at_work if d["color"] == "talent")
    if talents:
        out["talents"] = talents
        out["total"] = total + talents
    return out


def served_side(player: dict[str, Any], name: str | None) -> dict[str, Any]:
    """One seat's side of a view as served: with its running ``score`` and display ``name``."""
    out = dict(player, score=running_score(player))
    if name:
        out["name"] = name
    return out
