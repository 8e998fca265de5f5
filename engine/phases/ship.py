"""Ship: each shipper Trades or Consumes one good; both dice go to the Citizenry.

Trade: $3/4/5/6 by the colour of the good's world (Novelty/Rare/Genes/Alien), never the die's.
Consume: 1 VP, +1 if the good's colour matches its world, +1 if the shipper's colour matches the
world; a Consumption (purple) die matches every colour for these bonuses. When the initial VP pool
runs out, the set-aside 10-VP chips pay. Tasks are done in the order given (the $10 cap applies
task by task). Unused shippers return to the cup.
"""

from __future__ import annotations

from typing import Any

from ..catalogue import CARDS, TRADE_VALUE, color_of, consume_matches
from ..economy import award_vp, gain_credits
from ..errors import IllegalCommand
from ..fold import Ctx, Event, ev, folds
from ..powers import registry
from ..state import GameState, PlayerState

SHIP = 4
ACTIONS = ("trade", "consume")


def goods_list(p: PlayerState) -> list[tuple[int, str]]:
    return [(d, w) for w, ds in p.goods.items() for d in ds]


def waiting_for(state: GameState, p: PlayerState) -> str:
    return "ship" if p.columns[SHIP] and goods_list(p) else ""


def trade_value(state: GameState, p: PlayerState, world: str, good: int) -> int:
    base = TRADE_VALUE[CARDS[world].color]  # type: ignore[index]
    return int(registry.fold_value("trade_value", p, base, state, p, CARDS[world], good))


def consume_vp(state: GameState, p: PlayerState, world: str, good: int, shipper: int) -> int:
    color: str = CARDS[world].color  # type: ignore[assignment]
    vp = 1 + consume_matches(good, color) + consume_matches(shipper, color)
    return int(registry.fold_value("consume_vp", p, vp, state, p, CARDS[world], good, shipper))


def legal(state: GameState, p: PlayerState) -> dict[str, Any]:
    goods = goods_list(p)
    return {
        "kind": "ship",
        "shippers": [{"die": d, "color": color_of(d)} for d in p.columns[SHIP]],
        "goods": [
            {
                "die": d,
                "color": color_of(d),
                "world": w,
                "world_color": CARDS[w].color,
                "trade": trade_value(state, p, w, d),
            }
            for d, w in goods
        ],  # fmt: skip
        "count": min(len(p.columns[SHIP]), len(goods)),
        "actions": list(ACTIONS),
        "help": "tasks: exactly 'count' items {shipper, good, action}, done in order",
    }


def apply(state: GameState, p: PlayerState, cmd: dict[str, Any], ctx: Ctx) -> None:
    tasks = cmd.get("tasks")
    shippers = p.columns[SHIP]
    where = {d: w for d, w in goods_list(p)}
    count = min(len(shippers), len(where))
    if not isinstance(tasks, list) or len(tasks) != count:
        raise IllegalCommand(
            "tasks",
            f"tasks must list exactly {count} shipments {{shipper, good, action}} (every shipper ships while goods remain)",
            "tasks",
            tasks,
        )
    used_s: set[int] = set()
    used_g: set[int] = set()
    checked = []
    for i, t in enumerate(tasks):
        if not isinstance(t, dict):
            raise IllegalCommand(
                "tasks", f"tasks[{i}] must be an object {{shipper, good, action}}", f"tasks[{i}]", t
            )
        s, g, a = t.get("shipper"), t.get("good"), t.get("action")
        if s not in shippers or s in used_s:
            raise IllegalCommand(
                "shipper",
                f"tasks[{i}].shipper: {s!r} is not one of your unused shippers {shippers}",
                f"tasks[{i}].shipper",
                s,
            )
        if g not in where or g in used_g:
            raise IllegalCommand(
                "good",
                f"tasks[{i}].good: {g!r} is not one of your unshipped goods {sorted(where)}",
                f"tasks[{i}].good",
                g,
            )
        if a not in ACTIONS:
            raise IllegalCommand(
                "action",
                f"tasks[{i}].action must be 'trade' or 'consume', not {a!r}",
                f"tasks[{i}].action",
                a,
            )
        used_s.add(s)
        used_g.add(g)
        checked.append((s, g, a, t))
    for s, g, a, t in checked:
        ship_one(state, p, s, g, where[g], a, t, ctx)
    rest = [d for d in p.columns[SHIP]]
    if rest:
        ctx.emit(ev("WorkersReturned", seat=p.seat, phase="ship", dice=rest, source="column"))


def ship_one(state: GameState, p: PlayerState, shipper: int, good: int, world: str, action: str,
             task: dict[str, Any], ctx: Ctx) -> None:  # fmt: skip
    credits = vp = 0
    if action == "trade":
        credits = trade_value(state, p, world, good)
    else:
        vp = consume_vp(state, p, world, good, shipper)
    extra: dict[str, Any] = {}
    for _pid, h in registry.handlers(p, "ship_task"):
        h(state, p, action, world, good, shipper, task, extra)
    ctx.emit(ev("GoodShipped", seat=p.seat, shipper=shipper, good=good, world=world, action=action,
                credits=credits, vp=vp, **extra))  # fmt: skip


@folds("GoodShipped")
def _shipped(state: GameState, e: Event) -> None:
    p = state.players[e["seat"]]
    p.columns[SHIP].remove(e["shipper"])
    p.goods[e["world"]].remove(e["good"])
    if not p.goods[e["world"]]:
        del p.goods[e["world"]]
    if e["shipper"] < 1000:
        p.citizenry.append(e["shipper"])
    p.citizenry.append(e["good"])
    gain_credits(p, e["credits"])
    award_vp(state, p, e["vp"])
    for _pid, h in registry.handlers(p, "ship_fold"):
        h(state, p, e)
    p.marks["shipped"] = p.marks.get("shipped", 0) + 1
    p.waiting = waiting_for(state, p)


def start(state: GameState, ctx: Ctx) -> None:
    for p in state.players:
        if not p.waiting and p.columns[SHIP]:
            ctx.emit(
                ev(
                    "WorkersReturned",
                    seat=p.seat,
                    phase="ship",
                    dice=sorted(p.columns[SHIP]),
                    source="column",
                )
            )


def finish(state: GameState, ctx: Ctx) -> None:
    for p in state.players:
        for _pid, h in registry.handlers(p, "ship_end"):
            h(state, p, ctx)
    ctx.emit(ev("PhaseEnded", phase="ship"))
