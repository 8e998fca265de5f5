"""Manage Empire, the end of the round, and the game-end check.

Recruit: exactly min(credits, Citizenry) dice go from the Citizenry to the cup at $1 each (the
player chooses which when short); then $0 becomes $1. Recall: any developers, settlers and goods may
go back to the cup for free, and at least one must if the cup would otherwise be empty. Game end:
after Manage, if the initial VP pool is exhausted or any tableau has 12+ tile squares.
"""

from __future__ import annotations

from typing import Any

from ..ambition import objectives
from ..catalogue import color_of
from ..errors import refuse
from ..fold import Ctx, Event, ev, folds
from ..state import GameState, PlayerState

GAME_END_SQUARES = 12


def recallable(p: PlayerState) -> list[int]:
    out = p.dev_dice + p.world_dice
    for g in p.goods.values():
        out = out + g
    return sorted(out)


def recruit_count(p: PlayerState) -> int:
    return min(max(p.credits, 0), len(p.citizenry))


def waiting_for(state: GameState, p: PlayerState) -> str:
    n = recruit_count(p)
    choose = n < len(p.citizenry) and len({color_of(d) for d in p.citizenry}) > 1
    if choose or recallable(p):
        return "manage"
    return ""


def legal(state: GameState, p: PlayerState) -> dict[str, Any]:
    n = recruit_count(p)
    return {
        "kind": "manage",
        "citizenry": [{"die": d, "color": color_of(d)} for d in p.citizenry],
        "recruit_count": n,
        "credits": p.credits,
        "recallable": [{"die": d, "color": color_of(d)} for d in recallable(p)],
        "cup": len(p.cup),
        "must_recall": n == 0 and not p.cup and bool(recallable(p)),
        "help": "recruit: exactly recruit_count Citizenry dice; recall: any stack dice or goods",
    }


def apply(state: GameState, p: PlayerState, cmd: dict[str, Any], ctx: Ctx) -> None:
    recruit = cmd.get("recruit") or []
    recall = cmd.get("recall") or []
    n = recruit_count(p)
    if (
        not isinstance(recruit, list)
        or len(recruit) != n
        or len(set(recruit)) != n
        or not set(recruit) <= set(p.citizenry)
    ):
        refuse(
            "recruit",
            f"recruit must name exactly {n} distinct dice of your Citizenry {sorted(p.citizenry)} (you must recruit as many as you can afford)",
            "recruit",
            recruit,
        )
    can = set(recallable(p))
    if not isinstance(recall, list) or len(set(recall)) != len(recall) or not set(recall) <= can:
        bad = [d for d in recall if d not in can] if isinstance(recall, list) else recall
        refuse(
            "recall",
            f"recall: {bad!r} are not developers, settlers or goods of yours; recallable: {sorted(can)}",
            "recall",
            bad,
        )
    if not p.cup and not recruit and not recall and can:
        refuse("must_recall", "your cup would be empty: recall at least one die", "recall", recall)
    emit_managed(p, sorted(recruit), sorted(recall), ctx)


def emit_managed(
    p: PlayerState, recruit: list[int], recall: list[int], ctx: Ctx, auto: bool = False
) -> None:
    ctx.emit(
        ev(
            "EmpireManaged",
            seat=p.seat,
            recruited=recruit,
            recalled=recall,
            paid=len(recruit),
            auto=auto,
        )
    )


@folds("EmpireManaged")
def _managed(state: GameState, e: Event) -> None:
    p = state.players[e["seat"]]
    for d in e["recruited"]:
        p.citizenry.remove(d)
        p.cup.append(d)
    p.credits -= e["paid"]
    if p.credits <= 0:
        p.credits = 1
    for d in e["recalled"]:
        for lst in (p.dev_dice, p.world_dice):
            if d in lst:
                lst.remove(d)
                break
        else:
            for w, g in list(p.goods.items()):
                if d in g:
                    g.remove(d)
                    if not g:
                        del p.goods[w]
                    break
        if not objectives.back_to_unused(p, d):  # Ambition: a recalled talent: unused counters
            p.cup.append(d)
    p.cup.sort()
    p.waiting = ""


@folds("ManageStarted")
def _manage_started(state: GameState, e: Event) -> None:
    state.step = "manage"
    state.phase_pos = len(state.phases)
    for p in state.playing():
        p.waiting = waiting_for(state, p)


def start(state: GameState, ctx: Ctx) -> None:
    ctx.emit(ev("ManageStarted", round=state.round))
    for p in state.playing():
        if not p.waiting:
            n = recruit_count(p)
            emit_managed(p, sorted(p.citizenry)[:n], [], ctx, auto=True)


def game_end_reason(state: GameState) -> str | None:
    if state.vp_pool <= 0:
        return "vp_pool_exhausted"
    if any(p.tile_squares() >= GAME_END_SQUARES for p in state.players):
        return "twelve_tile_squares"
    return None


@folds("RoundEnded")
def _round_ended(state: GameState, e: Event) -> None:
    state.phases = []
    state.phase_pos = -1
    for p in state.players:
        p.selected = -1
        p.selector = -1
