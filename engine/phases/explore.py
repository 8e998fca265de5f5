"""Explore: each explorer Scouts or Stocks, one task at a time; Scouted tiles are placed.

Scout: abandon any tiles of your construction zone (any position), draw one more tile than you
abandoned, then put each drawn tile under the development or world stack (``place_tiles``).
Stock: +$2. Abandoned tiles lie under the Explore phase tile (secret) and return to the bag when the
phase ends. Bag empty: the abandoned tiles go back into the bag and drawing goes on; if that is still
not enough (very rare), the scout places what was drawn, every player with 3+ construction tiles
abandons one tile into the bag (``abandon_one``), and the scout draws the rest.
"""

from __future__ import annotations

from typing import Any

from .. import rng as rngmod
from ..catalogue import color_of, dev_card, world_card
from ..economy import gain_credits
from ..errors import ChanceMismatch, IllegalCommand
from ..fold import Ctx, Event, ev, folds
from ..powers import registry
from ..state import GameState, PlayerState

EXPLORE = 0
SIDES = ("development", "world")


def waiting_for(state: GameState, p: PlayerState) -> str:
    if p.drawn:
        return "place_tiles"
    if p.columns[EXPLORE]:
        return "explore"
    return ""


def stock_value(state: GameState, p: PlayerState, explorer: int) -> int:
    return int(registry.fold_value("stock_value", p, 2, state, p, explorer))


def legal(state: GameState, p: PlayerState) -> dict[str, Any]:
    if p.waiting == "place_tiles":
        return {
            "kind": "place_tiles",
            "tiles": [
                {"tile": t, "development": dev_card(t).key, "world": world_card(t).key}
                for t in p.drawn
            ],
            "sides": list(SIDES),
            "on_top": registry.has_power(p, "improved_reconnaissance"),
            "help": "place every drawn tile, in order, under its stack (as development or world)",
        }
    if p.waiting == "abandon_one":
        return {"kind": "abandon_one", "tiles": p.dev_stack + p.world_stack,
                "help": "the bag ran out: abandon one construction-zone tile into the bag"}  # fmt: skip
    explorers = [
        {"die": d, "color": color_of(d), "stock": stock_value(state, p, d)}
        for d in p.columns[EXPLORE]
    ]
    return {
        "kind": "explore",
        "tasks": ["scout", "stock"],
        "explorers": explorers,
        "abandonable": p.dev_stack + p.world_stack,
        "bag": len(state.bag),
        "help": "one explorer at a time: scout (optionally abandoning tiles first) or stock",
    }


def apply(state: GameState, p: PlayerState, cmd: dict[str, Any], ctx: Ctx) -> None:
    if state.shortfall and p.seat != state.shortfall.get("seat"):
        raise IllegalCommand(
            "bag_empty",
            "the bag ran out of tiles; wait until the scouting player finishes",
            None,
            None,
        )
    task = cmd.get("task")
    explorer = cmd.get("explorer")
    if explorer not in p.columns[EXPLORE]:
        raise IllegalCommand(
            "explorer",
            f"explorer: die {explorer!r} is not one of your explorers {p.columns[EXPLORE]}",
            "explorer",
            explorer,
        )
    abandon = cmd.get("abandon") or []
    if task == "stock":
        if abandon:
            raise IllegalCommand(
                "abandon",
                "tiles are abandoned only as part of a Scout, not a Stock",
                "abandon",
                abandon,
            )
        ctx.emit(
            ev(
                "ExplorerStocked",
                seat=p.seat,
                explorer=explorer,
                credits=stock_value(state, p, explorer),
            )
        )
        return
    if task != "scout":
        raise IllegalCommand("task", f"task must be 'scout' or 'stock', not {task!r}", "task", task)
    zone = set(p.dev_stack) | set(p.world_stack)
    if (
        not isinstance(abandon, list)
        or len(set(abandon)) != len(abandon)
        or not set(abandon) <= zone
    ):
        bad = [t for t in abandon if t not in zone] if isinstance(abandon, list) else abandon
        raise IllegalCommand(
            "abandon",
            f"abandon: {bad!r} are not distinct tiles of your construction zone {sorted(zone)}",
            "abandon",
            bad,
        )
    drawn, refilled, short = _draw(state, len(abandon) + 1, extra_abandoned=abandon)
    ctx.emit(ev("TilesScouted", seat=p.seat, explorer=explorer, abandoned=list(abandon), drawn=drawn,
                refilled_at=refilled, short=short,
                public={"explorer": explorer, "abandoned": len(abandon), "drawn": len(drawn), "short": short}))  # fmt: skip
    for _pid, h in registry.handlers(p, "scouted"):
        h(state, p, explorer, ctx)


def _draw(
    state: GameState, n: int, extra_abandoned: list[int]
) -> tuple[list[int], int | None, int]:
    """Which tiles n draws give (the bag refilled from abandoned tiles when it runs out)."""
    bag = state.bag[:]
    abandoned = state.abandoned + extra_abandoned
    r = state.rng
    drawn: list[int] = []
    refilled = None
    for i in range(n):
        if not bag and abandoned and refilled is None:
            bag = sorted(abandoned)
            abandoned = []
            refilled = i
        if not bag:
            return drawn, refilled, n - i
        forced = state.forced.get("tiles")
        if forced and len(forced) > len(drawn) and forced[len(drawn)] in bag:
            drawn.append(forced[len(drawn)])
            bag.remove(drawn[-1])
            continue
        r, k = rngmod.below(r, len(bag))
        drawn.append(bag.pop(k))
    return drawn, refilled, 0


def _fold_draw(state: GameState, drawn: list[int], refilled: int | None, what: str) -> None:
    for i, tile in enumerate(drawn):
        if refilled == i:
            state.bag = sorted(state.bag + state.abandoned)
            state.abandoned = []
        forced = state.forced.get("tiles")
        if forced and forced[0] == tile and tile in state.bag:
            forced.pop(0)
            state.bag.remove(tile)
            continue
        state.rng, k = rngmod.below(state.rng, len(state.bag))
        if state.bag[k] != tile:
            raise ChanceMismatch(f"{what}: drew tile {tile}, the seed gives tile {state.bag[k]}")
        state.bag.pop(k)
    if refilled is not None and refilled >= len(drawn):
        state.bag = sorted(state.bag + state.abandoned)
        state.abandoned = []


@folds("ExplorerStocked")
def _stocked(state: GameState, e: Event) -> None:
    p = state.players[e["seat"]]
    p.columns[EXPLORE].remove(e["explorer"])
    if e["explorer"] < 1000:  # phantom explorers never reach the Citizenry
        p.citizenry.append(e["explorer"])
    gain_credits(p, e["credits"])
    p.waiting = waiting_for(state, p)


@folds("TilesScouted")
def _scouted(state: GameState, e: Event) -> None:
    p = state.players[e["seat"]]
    for t in e["abandoned"]:
        (p.dev_stack if t in p.dev_stack else p.world_stack).remove(t)
        state.abandoned.append(t)
    _fold_draw(state, e["drawn"], e["refilled_at"], "TilesScouted")
    p.columns[EXPLORE].remove(e["explorer"])
    if e["explorer"] < 1000:
        p.citizenry.append(e["explorer"])
    p.drawn = list(e["drawn"])
    if e["short"]:
        state.shortfall = {"seat": p.seat, "need": e["short"]}
    p.waiting = waiting_for(state, p)
    if not p.drawn and e["short"]:
        _open_shortfall(state)


def apply_place(state: GameState, p: PlayerState, cmd: dict[str, Any], ctx: Ctx) -> None:
    placements = cmd.get("placements")
    if not isinstance(placements, list):
        raise IllegalCommand(
            "placements",
            "'placements' must list every drawn tile as {tile, as}",
            "placements",
            placements,
        )
    tiles = [x.get("tile") if isinstance(x, dict) else None for x in placements]
    if sorted(tiles, key=str) != sorted(p.drawn, key=str):
        raise IllegalCommand(
            "placements",
            f"placements must cover exactly the drawn tiles {p.drawn}, each once; got {tiles}",
            "placements",
            tiles,
        )
    on_top_ok = registry.has_power(p, "improved_reconnaissance")
    out = []
    for i, x in enumerate(placements):
        side = x.get("as")
        if side not in SIDES:
            raise IllegalCommand(
                "side",
                f"placements[{i}].as must be 'development' or 'world', not {side!r}",
                f"placements[{i}].as",
                side,
            )
        top = bool(x.get("on_top", False))
        if top and not on_top_ok:
            raise IllegalCommand(
                "on_top",
                f"placements[{i}].on_top needs Improved Reconnaissance in your tableau",
                f"placements[{i}].on_top",
                True,
            )
        out.append({"tile": x["tile"], "as": side, "on_top": top})
    dev, world = p.dev_stack[:], p.world_stack[:]
    for x in out:
        stack = dev if x["as"] == "development" else world
        stack.insert(0, x["tile"]) if x["on_top"] else stack.append(x["tile"])
    public = {
        "development": sum(1 for x in out if x["as"] == "development"),
        "world": sum(1 for x in out if x["as"] == "world"),
        "tops": {"development": dev[0] if dev else None, "world": world[0] if world else None},
    }
    ctx.emit(ev("TilesPlaced", seat=p.seat, placements=out, public=public))


@folds("TilesPlaced")
def _placed(state: GameState, e: Event) -> None:
    p = state.players[e["seat"]]
    for x in e["placements"]:
        stack = p.dev_stack if x["as"] == "development" else p.world_stack
        if x["on_top"]:
            stack.insert(0, x["tile"])
        else:
            stack.append(x["tile"])
        p.drawn.remove(x["tile"])
    p.waiting = waiting_for(state, p)
    if state.shortfall.get("seat") == p.seat and not state.shortfall.get("open"):
        _open_shortfall(state)


def _open_shortfall(state: GameState) -> None:
    """Every player with 3+ construction tiles must abandon one into the bag (very rare rule)."""
    state.shortfall["open"] = 1
    for q in state.players:
        if q.construction_tiles() >= 3:
            q.marks["resume"] = 1 if q.waiting else 0
            q.waiting = "abandon_one"


def apply_abandon_one(state: GameState, p: PlayerState, cmd: dict[str, Any], ctx: Ctx) -> None:
    tile = cmd.get("tile")
    if tile not in p.dev_stack and tile not in p.world_stack:
        raise IllegalCommand(
            "tile", f"tile {tile!r} is not in your construction zone", "tile", tile
        )
    dev = [t for t in p.dev_stack if t != tile]
    world = [t for t in p.world_stack if t != tile]
    tops = {"development": dev[0] if dev else None, "world": world[0] if world else None}
    ctx.emit(ev("TileReturnedToBag", seat=p.seat, tile=tile, public={"tops": tops}))


@folds("TileReturnedToBag")
def _returned(state: GameState, e: Event) -> None:
    p = state.players[e["seat"]]
    (p.dev_stack if e["tile"] in p.dev_stack else p.world_stack).remove(e["tile"])
    state.bag.append(e["tile"])
    state.bag.sort()
    p.marks.pop("resume", None)
    p.waiting = waiting_for(state, p)


def progress(state: GameState, ctx: Ctx) -> None:
    """Finish a shortfall once nobody still owes an abandon_one: the scout draws the rest."""
    sf = state.shortfall
    if not sf or not sf.get("open"):
        return
    if any(q.waiting == "abandon_one" for q in state.players):
        return
    drawn, _, short = _draw(state, sf["need"], extra_abandoned=[])
    ctx.emit(
        ev(
            "ShortfallDrawn",
            seat=sf["seat"],
            drawn=drawn,
            short=short,
            public={"drawn": len(drawn)},
        )
    )


@folds("ShortfallDrawn")
def _shortfall_drawn(state: GameState, e: Event) -> None:
    p = state.players[e["seat"]]
    _fold_draw(state, e["drawn"], None, "ShortfallDrawn")
    p.drawn = list(e["drawn"])
    state.shortfall = {}
    p.waiting = waiting_for(state, p)


def finish(state: GameState, ctx: Ctx) -> None:
    for p in state.players:
        for _pid, h in registry.handlers(p, "explore_end"):
            h(state, p, ctx)
    if any(p.waiting for p in state.players):
        return  # a power opened a decision (Alien Research Team); finish again when it is made
    ctx.emit(ev("PhaseEnded", phase="explore", returned=len(state.abandoned)))
