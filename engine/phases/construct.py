"""Develop and Settle: developers/settlers go onto the top tile of their construction stack.

Workers are put one at a time on the top tile; when the dice on the stack reach its cost (after
mandatory discounts, never below 1) the tile is complete: it joins the tableau, the dice that
completed it go to the Citizenry, and a world's (or immediate development's) effect happens once.
Remaining workers continue on the next tile; with the stack empty they return to the cup. A top tile
already complete when the phase starts (after Explore) is completed first, even without workers.

Putting workers on in order and taking the first cost-many dice of the stack for each completion is
the same as placing them one at a time, so the decision is the order (asked only when it matters)
plus the die each removal effect takes.
"""

from __future__ import annotations

from typing import Any

from ..catalogue import CARDS, PHASE_INDEX, Card, color_of, dev_card, world_card
from ..economy import gain_credits, supply_return, supply_take, take_die_from
from ..errors import IllegalCommand
from ..fold import Ctx, Event, ev, folds
from ..powers import registry
from ..state import GameState, PlayerState


def _is_dev(phase: str) -> bool:
    return phase == "develop"


def stack_of(p: PlayerState, phase: str) -> tuple[list[int], list[int]]:
    """(tiles, dice on them) of the stack this phase builds."""
    return (p.dev_stack, p.dev_dice) if _is_dev(phase) else (p.world_stack, p.world_dice)


def tile_card_for(phase: str, tile: int) -> Card:
    return dev_card(tile) if _is_dev(phase) else world_card(tile)


def cost(state: GameState, p: PlayerState, card: Card) -> int:
    """Workers a tile needs: printed cost after the owner's mandatory discounts, at least 1."""
    c = int(registry.fold_value("tile_cost", p, card.cost, state, p, card))
    return max(1, c)


def workers(p: PlayerState, phase: str) -> list[int]:
    return p.columns[PHASE_INDEX[phase]]


def forecast(state: GameState, p: PlayerState, phase: str) -> list[int]:
    """The tiles this phase will complete, in order (independent of the order of workers).

    Discounts that a completion brings could make a later tile cheaper; the forecast reads costs
    as they stand now, which the resolution re-checks tile by tile.
    """
    tiles, dice = stack_of(p, phase)
    n = len(dice) + len(workers(p, phase))
    out = []
    for t in tiles:
        c = cost(state, p, tile_card_for(phase, t))
        if n < c:
            break
        n -= c
        out.append(t)
    return out


def _removals(phase: str, tiles: list[int]) -> list[int]:
    return [t for t in tiles if tile_card_for(phase, t).immediate.get("dice_removed")]


def waiting_for(state: GameState, p: PlayerState, phase: str) -> str:
    done = forecast(state, p, phase)
    if not done:
        return ""
    if _removals(phase, done):
        return phase
    ws = workers(p, phase)
    if len({color_of(d) for d in ws if d < 1000}) >= 2:
        return phase
    return ""


def has_work(state: GameState, p: PlayerState, phase: str) -> bool:
    tiles, dice = stack_of(p, phase)
    return bool(workers(p, phase)) or bool(forecast(state, p, phase)) or (not tiles and bool(dice))


def legal(state: GameState, p: PlayerState, phase: str) -> dict[str, Any]:
    done = forecast(state, p, phase)
    tiles, dice = stack_of(p, phase)
    return {
        "kind": phase,
        "workers": [{"die": d, "color": color_of(d)} for d in workers(p, phase)],
        "stack": [{"tile": t, "cost": cost(state, p, tile_card_for(phase, t))} for t in tiles],
        "dice_on_stack": dice[:],
        "completes": done,
        "removals": [
            {"tile": t, "card": tile_card_for(phase, t).key} for t in _removals(phase, done)
        ],
        "removable": sorted(d for d in p.owned_dice() if d < 1000),
        "help": "order: every worker once, in the order they go onto the stack; "
        "remove: one of your dice for each completed tile with a removal effect, in completion order",
    }


def apply(
    state: GameState, p: PlayerState, cmd: dict[str, Any], ctx: Ctx, auto: bool = False
) -> None:
    phase: str = state.phase  # type: ignore[assignment]
    ws = workers(p, phase)
    order = cmd.get("order")
    if order is None:
        order = sorted(ws)
    if not isinstance(order, list) or sorted(order, key=str) != sorted(ws, key=str):
        raise IllegalCommand(
            "order",
            f"order must list each of your {phase} workers {sorted(ws)} exactly once",
            "order",
            order,
        )
    remove = cmd.get("remove") or []
    need = _removals(phase, forecast(state, p, phase))
    if not isinstance(remove, list) or len(remove) != len(need):
        raise IllegalCommand(
            "remove",
            f"remove must name {len(need)} of your dice, one for each removal effect of tiles {need}",
            "remove",
            remove,
        )
    owned = set(p.owned_dice())
    if len(set(remove)) != len(remove) or not set(remove) <= owned:
        bad = [d for d in remove if d not in owned]
        raise IllegalCommand(
            "remove", f"remove: dice {bad or remove} are not distinct dice you own", "remove", bad
        )
    resolve(state, p, phase, list(order), list(remove), ctx, auto)


def resolve(
    state: GameState,
    p: PlayerState,
    phase: str,
    order: list[int],
    remove: list[int],
    ctx: Ctx,
    auto: bool,
) -> None:
    """Complete already-complete tiles, put the workers on, complete tiles, return leftovers."""
    seat = p.seat
    _complete_ready(state, p, phase, remove, ctx)
    column = workers(p, phase)
    order = [d for d in order if d in column]  # a removal effect may have taken a worker
    if order:
        ctx.emit(ev("WorkersPlaced", seat=seat, phase=phase, dice=order, auto=auto))
        _complete_ready(state, p, phase, remove, ctx)
    tiles, dice = stack_of(p, phase)
    if not tiles and dice:
        ctx.emit(ev("WorkersReturned", seat=seat, phase=phase, dice=dice[:], source="stack"))


def _complete_ready(
    state: GameState, p: PlayerState, phase: str, remove: list[int], ctx: Ctx
) -> None:
    tiles, dice = stack_of(p, phase)
    while tiles:
        card = tile_card_for(phase, tiles[0])
        c = cost(state, p, card)
        if len(dice) < c:
            return
        complete(state, p, phase, card, dice[:c], remove, ctx)


def complete(
    state: GameState,
    p: PlayerState,
    phase: str,
    card: Card,
    dice: list[int],
    remove: list[int],
    ctx: Ctx,
) -> None:
    """Emit one tile's completion with its immediate effect (removal first, then gains)."""
    imm = card.immediate
    removed = None
    if imm.get("dice_removed"):
        removed = remove.pop(0) if remove else None
    gained = []
    taken: set[int] = set()
    for g in imm.get("dice_gained") or []:
        die = _peek_excluding(state, g["color"], taken)
        if die is not None:
            taken.add(die)
            gained.append({"die": die, "to": g["to"]})
    credits = int(imm.get("credits") or 0)
    ctx.emit(ev("TileCompleted", seat=p.seat, phase=phase, tile=card.tile, card=card.key, dice=dice,
                removed=removed, gained=gained, credits=credits))  # fmt: skip
    for _pid, h in registry.handlers(p, "completed"):
        h(state, p, card, dice, ctx)


def _peek_excluding(state: GameState, color: str, taken: set[int]) -> int | None:
    from ..catalogue import DIE_COLORS

    for d in state.supply[DIE_COLORS.index(color)]:
        if d not in taken:
            return d
    return None


@folds("WorkersPlaced")
def _placed(state: GameState, e: Event) -> None:
    p = state.players[e["seat"]]
    col = p.columns[PHASE_INDEX[e["phase"]]]
    _, dice = stack_of(p, e["phase"])
    for d in e["dice"]:
        col.remove(d)
        dice.append(d)
    p.waiting = ""


@folds("TileCompleted")
def _completed(state: GameState, e: Event) -> None:
    p = state.players[e["seat"]]
    tiles, dice = stack_of(p, e["phase"])
    if not tiles or tiles[0] != e["tile"]:
        raise ValueError(f"TileCompleted: tile {e['tile']} is not on top of seat {p.seat}'s stack")
    tiles.pop(0)
    for d in e["dice"]:
        dice.remove(d)
        p.citizenry.append(d)
    card = CARDS[e["card"]]
    (p.worlds if card.is_world else p.devs).append(card.key)
    if e["removed"] is not None:
        take_die_from(p, e["removed"])
        supply_return(state, e["removed"])
    for g in e["gained"]:
        supply_take(state, g["die"])
        if g["to"] == "cup":
            p.cup.append(g["die"])
        elif g["to"] == "citizenry":
            p.citizenry.append(g["die"])
        else:
            p.goods.setdefault(card.key, []).append(g["die"])
    gain_credits(p, e["credits"])
    p.waiting = ""


@folds("WorkersReturned")
def _returned(state: GameState, e: Event) -> None:
    """Unused workers (or dice on an emptied stack) go back to the cup."""
    p = state.players[e["seat"]]
    ph = e["phase"]
    src = stack_of(p, ph)[1] if e["source"] == "stack" else p.columns[PHASE_INDEX[ph]]
    for d in e["dice"]:
        src.remove(d)
        if d < 1000:
            p.cup.append(d)
    p.cup.sort()


def start(state: GameState, ctx: Ctx) -> None:
    """Resolve every seat that has work but no real choice (automatic, recorded as events)."""
    phase: str = state.phase  # type: ignore[assignment]
    for p in state.players:
        if not p.waiting and has_work(state, p, phase):
            tiles, _ = stack_of(p, phase)
            ws = sorted(workers(p, phase))
            if not tiles and ws:
                _, dice = stack_of(p, phase)
                if dice:
                    ctx.emit(
                        ev(
                            "WorkersReturned",
                            seat=p.seat,
                            phase=phase,
                            dice=dice[:],
                            source="stack",
                        )
                    )
                ctx.emit(ev("WorkersReturned", seat=p.seat, phase=phase, dice=ws, source="column"))
                continue
            resolve(state, p, phase, ws, [], ctx, auto=True)


def finish(state: GameState, ctx: Ctx) -> None:
    phase: str = state.phase  # type: ignore[assignment]
    ctx.emit(ev("PhaseEnded", phase=phase))
