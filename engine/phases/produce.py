"""Produce: each producer becomes a good on a non-gray world of its owner's tableau with room.

Any producer may go on any non-gray world; a world holds one good (Galactic Reserves: two, of any
colours). Producers must be used while room exists; the rest return to the cup.

Hooks this module calls (handlers in engine/powers/economy_powers.py):
  goods_capacity   (state, p, world card, capacity) -> capacity   goods a non-gray world can hold
  produced         (state, p, goods [{die, world}], ctx)          after the goods are produced
                                                                  (Ambition: credits per good)
  produce_end      (state, p, ctx)                                end-of-Produce payments (every
                                                                  seat, with or without producers)

A GoodsProduced event's ``powers`` lists the capacity powers that let a world hold more than one
good after it.
"""

from __future__ import annotations

from typing import Any

from ..ambition import objectives
from ..catalogue import CARDS, color_of
from ..economy import worker_kinds
from ..errors import refuse
from ..fold import Ctx, Event, ev, folds
from ..powers import registry
from ..state import GameState, PlayerState

PRODUCE = 3


def capacity(state: GameState, p: PlayerState, world: str) -> int:
    return int(registry.fold_value("goods_capacity", p, 1, state, p, CARDS[world]))


def capacity_powers(state: GameState, p: PlayerState, world: str) -> list[str]:
    """The powers that raise a world's capacity above one good."""
    return registry.fold_tracked("goods_capacity", p, 1, state, p, CARDS[world])[1]


def free_slots(state: GameState, p: PlayerState) -> dict[str, int]:
    """Non-gray worlds with room, and how many more goods each can take."""
    out = {}
    for w in p.worlds:
        if CARDS[w].color == "gray":
            continue
        room = capacity(state, p, w) - len(p.goods.get(w, ()))
        if room > 0:
            out[w] = room
    return out


def waiting_for(state: GameState, p: PlayerState) -> str:
    ps = p.columns[PRODUCE]
    if not ps:
        return ""
    slots = free_slots(state, p)
    total = sum(slots.values())
    if total == 0:
        return ""
    if worker_kinds(state, p, ps, "produce") == 1 and len(ps) >= total:
        return ""  # identical producers fill every slot: nothing to choose
    if len(slots) == 1 and len(ps) <= total:
        return ""  # every producer must go to the only world with room: nothing to choose
    return "produce"


def legal(state: GameState, p: PlayerState) -> dict[str, Any]:
    slots = free_slots(state, p)
    return {
        "kind": "produce",
        "producers": [{"die": d, "color": color_of(d)} for d in p.columns[PRODUCE]],
        "worlds": [
            {"world": w, "color": CARDS[w].color, "room": n, "capacity": capacity(state, p, w)}
            for w, n in slots.items()
        ],
        "count": min(len(p.columns[PRODUCE]), sum(slots.values())),
        "help": "goods: exactly 'count' items {die, world}, at most 'room' per world; unused "
        "producers return to the cup",
    }


def apply(state: GameState, p: PlayerState, cmd: dict[str, Any], ctx: Ctx) -> None:
    goods = cmd.get("goods")
    slots = free_slots(state, p)
    producers = p.columns[PRODUCE]
    count = min(len(producers), sum(slots.values()))
    if not isinstance(goods, list) or len(goods) != count:
        refuse(
            "goods",
            f"goods must list exactly {count} productions {{die, world}} (all producers must be used while there is room)",
            "goods",
            goods,
        )
    used: set[int] = set()
    out = []
    for i, g in enumerate(goods):
        die = g.get("die") if isinstance(g, dict) else None
        world = g.get("world") if isinstance(g, dict) else None
        if die not in producers or die in used:
            refuse(
                "die",
                f"goods[{i}].die: {die!r} is not one of your unused producers {producers}",
                f"goods[{i}].die",
                die,
            )
        if slots.get(world, 0) <= 0:  # type: ignore[arg-type]
            refuse(
                "world",
                f"goods[{i}].world: {world!r} is not a non-gray world of yours with room; choose from {sorted(k for k, v in slots.items() if v > 0)}",
                f"goods[{i}].world",
                world,
            )
        slots[world] -= 1  # type: ignore[index]
        used.add(die)
        out.append({"die": die, "world": world})
    emit_produced(p, out, ctx)


def emit_produced(
    p: PlayerState, goods: list[dict[str, Any]], ctx: Ctx, auto: bool = False
) -> None:
    used = {g["die"] for g in goods}
    rest = [d for d in p.columns[PRODUCE] if d not in used]
    powers: list[str] = []
    for w in dict.fromkeys(g["world"] for g in goods):
        after = len(p.goods.get(w, ())) + sum(1 for g in goods if g["world"] == w)
        if after > 1:
            powers += [x for x in capacity_powers(ctx.state, p, w) if x not in powers]
    ctx.emit(ev("GoodsProduced", seat=p.seat, goods=goods, returned=rest, auto=auto, powers=powers))
    if goods:
        for _pid, h in registry.handlers(p, "produced"):
            h(ctx.state, p, goods, ctx)


@folds("GoodsProduced")
def _produced(state: GameState, e: Event) -> None:
    p = state.players[e["seat"]]
    col = p.columns[PRODUCE]
    for g in e["goods"]:
        col.remove(g["die"])
        p.goods.setdefault(g["world"], []).append(g["die"])
    for d in e["returned"]:
        col.remove(d)
        if d < 1000:
            p.cup.append(d)
        else:  # Ambition: a talent worker that did no task returns to the unused counters
            objectives.back_to_unused(p, d)
    p.cup.sort()
    p.waiting = ""


def start(state: GameState, ctx: Ctx) -> None:
    for p in state.playing():
        if p.waiting or not p.columns[PRODUCE]:
            continue
        slots = free_slots(state, p)
        goods: list[dict[str, Any]] = []
        producers = sorted(p.columns[PRODUCE])
        for w, n in slots.items():
            for _ in range(n):
                if len(goods) < len(producers):
                    goods.append({"die": producers[len(goods)], "world": w})
        emit_produced(p, goods, ctx, auto=True)


def finish(state: GameState, ctx: Ctx) -> None:
    for p in state.playing():
        for _pid, h in registry.handlers(p, "produce_end"):
            h(state, p, ctx)
    ctx.emit(ev("PhaseEnded", phase="produce"))
