"""Ship: each shipper Trades or Consumes one good; both dice go to the Citizenry.

Trade: $3/4/5/6 by the colour of the good's world (Novelty/Rare/Genes/Alien), never the die's.
Consume: 1 VP, +1 if the good's colour matches its world, +1 if the shipper's colour matches the
world; a Consumption (purple) die matches every colour for these bonuses (and only for them).
Deliberate mismatches are legal: any shipper may ship any good. When the initial VP pool runs out,
the set-aside 10-VP chips pay. Tasks are done in the order given (the $10 cap applies task by task).
Unused shippers return to the cup; phantom shippers (Space Docks, Organic Shipyards) vanish.
Ambition: the goods of a world with ``cannot_trade_goods_from_this_world`` (Alien Refinery) can
only be Consumed (the decision's good lists ``actions: ["consume"]``).

Hooks this module calls (handlers in engine/powers/economy_powers.py):
  trade_value      (state, p, world card, good, value) -> value      Trade income
  consume_vp       (state, p, world card, good, shipper, vp) -> vp   Consume VP chips
  consume_credits  (state, p, world card, good, shipper, credits) -> credits   Consume income
  ship_options     (state, p) -> {option, power, actions, credits, vp, help}
                   an optional per-task flag of the ship command (Galactic Bankers: "bankers");
                   when set, the power's PowerPaid (credits, vp) follows that task's GoodShipped
  virtual_workers  (state, p, phase) -> [colours]                    phantom shippers (via flow)
  ship_end         (state, p, ctx)                                   end-of-Ship payments
  buy_vp           (state, p, phase) -> offer or None                Ambition: Deficit Spending

Deficit Spending (Ambition) is the owner's ``buy_vp`` decision when Ship ends: ``spend`` $0 up to
the offer's maximum ($2), never more than the credits the owner has (one payment: Fine Points,
"If you have only $1, you may not spend $1 twice for 2 VPs"), for as many VP chips; ``first``:
whether it comes before the owner's other end-of-Ship powers (Fine Points: "If you have Free
Trade Association, you choose the order to do these powers"). The choice is asked when Ship ends
(``PhaseEnding``), then the end-of-Ship powers pay in that order.

A GoodShipped event's ``credits`` and ``vp`` are the task's whole income (bonuses included, before
the $10 cap); its ``powers`` lists every power that changed them and the power that created a
phantom shipper.
"""

from __future__ import annotations

from typing import Any

from ..catalogue import (
    CARDS,
    TALENT_BASE,
    TRADE_VALUE,
    color_of,
    consume_matches,
    is_phantom,
    phantom_id,
)
from ..economy import CREDIT_CAP, award_vp, finish_task, gain_credits
from ..errors import refuse
from ..fold import Ctx, Event, ev, folds
from ..powers import registry
from ..powers.effects import pay, special
from ..state import GameState, PlayerState

SHIP = 4
ACTIONS = ("trade", "consume")
TASK_FIELDS = ("shipper", "good", "action")


def goods_list(p: PlayerState) -> list[tuple[int, str]]:
    return [(d, w) for w, ds in p.goods.items() for d in ds]


def waiting_for(state: GameState, p: PlayerState) -> str:
    return "ship" if p.columns[SHIP] and goods_list(p) else ""


def phantom_sources(state: GameState, p: PlayerState) -> dict[int, str]:
    """Phantom shipper id -> the power that created it.

    Re-derived the way engine.flow numbers phantoms at PhaseStarted (per seat, tableau order, one
    running index over every handler's colours); the tableau cannot change during Ship.
    """
    out: dict[int, str] = {}
    k = 0
    for pid, h in registry.handlers(p, "virtual_workers"):
        for color in h(state, p, "ship"):
            out[phantom_id(color, k)] = pid
            k += 1
    return out


def trade_value(state: GameState, p: PlayerState, world: str, good: int) -> tuple[int, list[str]]:
    """A Trade's income and the powers that changed it."""
    card = CARDS[world]
    base = TRADE_VALUE[card.color]  # type: ignore[index]
    value, used = registry.fold_tracked("trade_value", p, base, state, p, card, good)
    return int(value), used


def consume_vp(
    state: GameState, p: PlayerState, world: str, good: int, shipper: int
) -> tuple[int, list[str]]:
    """A Consume's VP chips and the powers that changed them."""
    card = CARDS[world]
    color: str = card.color  # type: ignore[assignment]
    vp = 1 + consume_matches(good, color) + consume_matches(shipper, color)
    value, used = registry.fold_tracked("consume_vp", p, vp, state, p, card, good, shipper)
    return int(value), used


def consume_credits(
    state: GameState, p: PlayerState, world: str, good: int, shipper: int
) -> tuple[int, list[str]]:
    """A Consume's credits (0 without powers) and the powers that gave them."""
    card = CARDS[world]
    value, used = registry.fold_tracked("consume_credits", p, 0, state, p, card, good, shipper)
    return int(value), used


def good_actions(world: str) -> tuple[str, ...]:
    """What a good on this world may do: Trade or Consume, or only Consume (Alien Refinery)."""
    if special(CARDS[world], "cannot_trade_goods_from_this_world"):
        return ("consume",)
    return ACTIONS


def options(state: GameState, p: PlayerState) -> list[dict[str, Any]]:
    """The optional per-task flags this seat's powers offer (Galactic Bankers)."""
    return [h(state, p) for _pid, h in registry.handlers(p, "ship_options")]


def task_outcome(
    state: GameState, p: PlayerState, shipper: int, good: int, world: str, action: str
) -> tuple[int, int, list[str]]:
    """(credits, vp, powers) of one task, phantom creators included in the powers."""
    if action == "trade":
        credits, used = trade_value(state, p, world, good)
        vp = 0
    else:
        vp, used = consume_vp(state, p, world, good, shipper)
        credits, used2 = consume_credits(state, p, world, good, shipper)
        used = used + [x for x in used2 if x not in used]
    if is_phantom(shipper):
        pid = phantom_sources(state, p).get(shipper)
        if pid and pid not in used:
            used = [pid] + used
    return credits, vp, used


def legal(state: GameState, p: PlayerState) -> dict[str, Any]:
    goods = goods_list(p)
    shippers = p.columns[SHIP]
    phantoms = phantom_sources(state, p)
    out_shippers: list[dict[str, Any]] = []
    for d in shippers:
        x: dict[str, Any] = {"die": d, "color": color_of(d)}
        if d >= TALENT_BASE:  # Ambition: a talent worker (not a phantom: it has no power)
            x["talent"] = True
        elif is_phantom(d):
            x["phantom"] = True
            x["power"] = phantoms.get(d)
        out_shippers.append(x)
    out_goods = []
    for d, w in goods:
        trade, _ = trade_value(state, p, w, d)
        credits, _ = consume_credits(state, p, w, d, shippers[0]) if shippers else (0, [])
        good: dict[str, Any] = {
            "die": d,
            "color": color_of(d),
            "world": w,
            "world_color": CARDS[w].color,
            "trade": trade,
            "consume_credits": credits,
            "consume_vp": [consume_vp(state, p, w, d, s)[0] for s in shippers],
        }
        if good_actions(w) != ACTIONS:
            good["actions"] = list(good_actions(w))
        out_goods.append(good)
    return {
        "kind": "ship",
        "shippers": out_shippers,
        "goods": out_goods,
        "count": min(len(shippers), len(goods)),
        "actions": list(ACTIONS),
        "options": options(state, p),
        "help": "tasks: exactly 'count' items {shipper, good, action} (plus any 'options' flag "
        "allowed for that action), done in order; goods[].consume_vp lists the VP of consuming "
        "that good with each shipper, in the order of 'shippers'",
    }


# One checked task: shipper, good, action, credits, vp, powers and the options chosen.
Task = tuple[int, int, str, int, int, list[str], list[dict[str, Any]]]


def apply(state: GameState, p: PlayerState, cmd: dict[str, Any], ctx: Ctx) -> None:
    """Check every task first (in order, the $10 cap task by task), then ship them all."""
    where = {d: w for d, w in goods_list(p)}
    checked = _check_tasks(state, p, cmd.get("tasks"), where)
    for task in checked:
        _ship(ctx, p, where, task)
    rest = [d for d in p.columns[SHIP]]
    if rest:
        ctx.emit(ev("WorkersReturned", seat=p.seat, phase="ship", dice=rest, source="column"))


def _check_tasks(state: GameState, p: PlayerState, tasks: Any, where: dict[int, str]) -> list[Task]:
    """Every shipper ships while goods remain: one task per shipper or per good, whichever fewer."""
    shippers = p.columns[SHIP]
    count = min(len(shippers), len(where))
    if not isinstance(tasks, list) or len(tasks) != count:
        refuse(
            "tasks",
            f"tasks must list exactly {count} shipments {{shipper, good, action}} (every shipper ships while goods remain)",
            "tasks",
            tasks,
        )
    opts = {o["option"]: o for o in options(state, p)}
    used_s: set[int] = set()
    used_g: set[int] = set()
    credits_now = p.credits  # simulated task by task, for the options' costs
    checked: list[Task] = []
    for i, t in enumerate(tasks):
        s, g, a = _check_task(i, t, shippers, where, used_s, used_g)
        if a not in good_actions(where[g]):
            refuse(
                "action",
                f"tasks[{i}].action: the goods of {CARDS[where[g]].name} cannot be traded; "
                "consume this good",
                f"tasks[{i}].action",
                a,
            )
        credits, vp, used = task_outcome(state, p, s, g, where[g], a)
        credits_now = min(CREDIT_CAP, credits_now + credits)
        chosen, credits_now = _check_options(i, t, a, opts, credits_now)
        used_s.add(s)
        used_g.add(g)
        checked.append((s, g, a, credits, vp, used, chosen))
    return checked


def _check_task(
    i: int, t: Any, shippers: list[int], where: dict[int, str], used_s: set[int], used_g: set[int]
) -> tuple[int, int, str]:
    """One task: an unused shipper, an unshipped good, Trade or Consume."""
    if not isinstance(t, dict):
        refuse("tasks", f"tasks[{i}] must be an object {{shipper, good, action}}", f"tasks[{i}]", t)
    s, g, a = t.get("shipper"), t.get("good"), t.get("action")
    if s not in shippers or s in used_s:
        refuse(
            "shipper",
            f"tasks[{i}].shipper: {s!r} is not one of your unused shippers {shippers}",
            f"tasks[{i}].shipper",
            s,
        )
    if g not in where or g in used_g:
        refuse(
            "good",
            f"tasks[{i}].good: {g!r} is not one of your unshipped goods {sorted(where)}",
            f"tasks[{i}].good",
            g,
        )
    if a not in ACTIONS:
        refuse(
            "action",
            f"tasks[{i}].action must be 'trade' or 'consume', not {a!r}",
            f"tasks[{i}].action",
            a,
        )
    return s, g, a


def _check_options(
    i: int, t: dict[str, Any], a: str, opts: dict[str, dict[str, Any]], credits_now: int
) -> tuple[list[dict[str, Any]], int]:
    """A task's option flags (Galactic Bankers): offered, allowed for its action, affordable."""
    chosen = []
    for key, val in t.items():
        if key in TASK_FIELDS or val is False:
            continue
        opt = opts.get(key)
        if opt is None:
            refuse(
                "option",
                f"tasks[{i}].{key}: not an option of yours; options: {sorted(opts) or 'none'}",
                f"tasks[{i}].{key}",
                val,
            )
        if val is not True:
            refuse("option", f"tasks[{i}].{key} must be true or false", f"tasks[{i}].{key}", val)
        if a not in opt["actions"]:
            refuse(
                "option",
                f"tasks[{i}].{key}: only allowed on {' or '.join(opt['actions'])} tasks, not {a}",
                f"tasks[{i}].{key}",
                val,
            )
        if credits_now + opt["credits"] < 0:
            refuse(
                "option",
                f"tasks[{i}].{key}: costs ${-opt['credits']} but you would have ${credits_now}",
                f"tasks[{i}].{key}",
                val,
            )
        credits_now += opt["credits"]
        chosen.append(opt)
    return chosen, credits_now


def _ship(ctx: Ctx, p: PlayerState, where: dict[int, str], task: Task) -> None:
    """Trade or Consume one good, then the powers paid by the task's options."""
    s, g, a, credits, vp, used, chosen = task
    ctx.emit(
        ev(
            "GoodShipped",
            seat=p.seat,
            shipper=s,
            good=g,
            world=where[g],
            action=a,
            credits=credits,
            vp=vp,
            powers=used,
        )
    )
    for opt in chosen:
        pay(
            ctx,
            p,
            opt["power"],
            credits=opt["credits"],
            vp=opt["vp"],
            why=f"{a} task option '{opt['option']}'",
        )


@folds("GoodShipped")
def _shipped(state: GameState, e: Event) -> None:
    p = state.players[e["seat"]]
    p.columns[SHIP].remove(e["shipper"])
    p.goods[e["world"]].remove(e["good"])
    if not p.goods[e["world"]]:
        del p.goods[e["world"]]
    # Ambition, $ faces: "Explore and Ship tasks are finished upon the die being used ... A
    # Produce task is finished after that good is shipped" (``economy.finish_task``)
    if not is_phantom(e["shipper"]):
        finish_task(state, p, e["shipper"], "ship")
    finish_task(state, p, e["good"], "produce")
    gain_credits(p, e["credits"])
    award_vp(state, p, e["vp"])
    p.marks["shipped"] = p.marks.get("shipped", 0) + 1
    if state.objectives:  # Ambition objectives count goods shipped by task
        key = f"shipped_{e['action']}"
        p.marks[key] = p.marks.get(key, 0) + 1
    p.waiting = waiting_for(state, p)


def start(state: GameState, ctx: Ctx) -> None:
    for p in state.playing():
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
    """End-of-Ship powers pay every seat that has them, with or without shippers; an owner of
    Deficit Spending decides first (``buy_vp``), and its purchase comes first or last."""
    undecided = [
        p.seat for p in state.playing() if buy_vp_offer(state, p) and not p.marks.get(BUY_VP_DONE)
    ]
    if undecided:
        ctx.emit(ev("PhaseEnding", phase="ship", seats=undecided, decision=BUY_VP))
        return
    for p in state.playing():
        for _pid, h in registry.handlers(p, "ship_end"):
            h(state, p, ctx)
        if p.marks.get(BUY_VP_DONE) and not p.marks.get(BUY_VP_FIRST):
            _buy_vp(ctx, p, buy_vp_offer(state, p), p.marks.get(BUY_VP_SPEND, 0))
    ctx.emit(ev("PhaseEnded", phase="ship"))


# --- Ambition: Deficit Spending (buy_vp_at_phase_end) -------------------------------------------
BUY_VP = "buy_vp"
#: marks of this round's choice: made, the $ spent, before the other end-of-Ship powers
BUY_VP_DONE, BUY_VP_SPEND, BUY_VP_FIRST = "buy_vp", "buy_vp_spend", "buy_vp_first"


def buy_vp_offer(state: GameState, p: PlayerState) -> dict[str, Any] | None:
    """The seat's power that buys VP chips when Ship ends: ``{power, max_spend, credits, vp}``
    ($``credits`` for ``vp`` chips, up to $``max_spend``), or None."""
    for _pid, h in registry.handlers(p, "buy_vp"):
        offer: dict[str, Any] | None = h(state, p, "ship")
        if offer is not None:
            return offer
    return None


def _most_spend(p: PlayerState, offer: dict[str, Any]) -> int:
    return min(int(offer["max_spend"]), p.credits)


def legal_buy_vp(state: GameState, p: PlayerState) -> dict[str, Any]:
    offer = buy_vp_offer(state, p) or {}
    ends = [pid for pid, _h in registry.handlers(p, "ship_end")]
    return {
        "kind": BUY_VP,
        "power": offer.get("power"),
        "spend_max": _most_spend(p, offer) if offer else 0,
        "credits": p.credits,
        "rate": {"credits": offer.get("credits"), "vp": offer.get("vp")},
        "other_powers": ends,
        "help": f"spend: $0 to 'spend_max' (one payment; {offer.get('vp')} VP chip(s) per "
        f"${offer.get('credits')}); first (optional, default true): whether this comes before "
        "your 'other_powers' of the end of Ship (it matters with credits they pay)",
    }


def apply_buy_vp(state: GameState, p: PlayerState, cmd: dict[str, Any], ctx: Ctx) -> None:
    offer = buy_vp_offer(state, p)
    if offer is None:  # pragma: no cover - the decision exists only with the power
        refuse("buy_vp", "you have no power that buys VP chips", "kind", BUY_VP)
    most = _most_spend(p, offer)
    spend = cmd.get("spend", 0)
    if isinstance(spend, bool) or not isinstance(spend, int) or not 0 <= spend <= most:
        refuse(
            "spend",
            f"spend must be a whole number of $ from 0 to {most} (at most "
            f"${offer['max_spend']}, and no more than your ${p.credits})",
            "spend",
            spend,
        )
    first = cmd.get("first", True)
    if not isinstance(first, bool):
        refuse("first", "first must be true or false", "first", first)
    if spend % int(offer["credits"]):
        refuse(
            "spend",
            f"spend must be a multiple of ${offer['credits']} (the price of VP chips)",
            "spend",
            spend,
        )
    ctx.emit(ev("PowerChosen", seat=p.seat, power=offer["power"], spend=spend, first=first))
    if first:
        _buy_vp(ctx, p, offer, spend)


def _buy_vp(ctx: Ctx, p: PlayerState, offer: dict[str, Any] | None, spend: int) -> None:
    if offer is None or not spend:
        return
    vp = spend // int(offer["credits"]) * int(offer["vp"])
    pay(ctx, p, offer["power"], credits=-spend, vp=vp, why=f"end of ship: ${spend} for {vp} VP")


@folds("PhaseEnding")
def _phase_ending(state: GameState, e: Event) -> None:
    for seat in e["seats"]:
        state.players[seat].waiting = e["decision"]


@folds("PowerChosen")
def _power_chosen(state: GameState, e: Event) -> None:
    p = state.players[e["seat"]]
    p.marks[BUY_VP_DONE] = 1
    p.marks[BUY_VP_SPEND] = e["spend"]
    p.marks[BUY_VP_FIRST] = int(e["first"])
    p.waiting = ""
