"""Explore: each explorer Scouts or Stocks, one task at a time; Scouted tiles are placed.

Scout: abandon any tiles of your construction zone (any position), draw one more tile than you
abandoned, then put each drawn tile under the development or world stack (``place_tiles``).
Stock: +$2. Abandoned tiles lie under the Explore phase tile (secret) and return to the bag when the
phase ends. Bag empty: the abandoned tiles go back into the bag and drawing goes on; if that is still
not enough (very rare), the scout places what was drawn, every player with 3+ construction tiles
abandons one tile into the bag (``abandon_one``), and the scout draws the rest.

Powers (hooks this module calls, see engine/powers/explore_powers.py):
  stock_value    (state, p, explorer, value) -> value   credits of a Stock (Alien Archaeology)
  scouted        (state, p, explorer, ctx)              after a Scout task (Alien Research Team $1)
  explore_draw   (state, p, ctx)                        once every seat is done with its tasks:
                 end-of-phase draws that open a ``place_tiles`` decision (Alien Research Team).
                 ``finish`` runs again after that decision, so such a handler must check the
                 state (a mark its own event folded) and act once per phase.
  explore_end    (state, p, ctx)                        end-of-phase payments (Technology Unions),
                 called exactly once, right before PhaseEnded; it must not open a decision.
Advanced Logistics adds two ``explore`` tasks: ``rearrange`` (a complete new order of both
construction stacks; any number of times) and ``finish`` (its owner says it is done once no explorer
is left). Phantom explorers (ids >= 1000) Scout or Stock like dice and never reach the Citizenry;
their events name the power that made them in ``powers``.
"""

from __future__ import annotations

from typing import Any

from .. import rng as rngmod
from ..catalogue import PHANTOM_BASE, TALENT_BASE, color_of, dev_card, phantom_id, world_card
from ..economy import finish_task, gain_credits
from ..errors import ChanceMismatch, refuse
from ..fold import Ctx, Event, ev, folds
from ..powers import registry
from ..state import GameState, PlayerState

EXPLORE = 0
SIDES = ("development", "world")


#: marks (PlayerState.marks, cleared each round; Explore happens at most once a round)
DONE = "explore_done"  # an Advanced Logistics owner said it is done with Explore
ALIEN_SCOUTS = "alien_scouts"  # Scouts done by an Alien (yellow) explorer this phase
EXTRA_DRAWN = "extra_drawn"  # this seat made its end-of-Explore draw (Alien Research Team)
LOGISTICS = "advanced_logistics"


def waiting_for(state: GameState, p: PlayerState) -> str:
    if p.drawn:
        return "place_tiles"
    if p.columns[EXPLORE]:
        return "explore"
    if registry.has_power(p, LOGISTICS) and not p.marks.get(DONE):
        # Advanced Logistics: its owner gets the step, explorers or not, and must say "finish"
        return "explore"
    return ""


def stock_value(state: GameState, p: PlayerState, explorer: int) -> int:
    return int(registry.fold_value("stock_value", p, 2, state, p, explorer))


def phantom_powers(state: GameState, p: PlayerState, die: int) -> list[str]:
    """The power that made a phantom explorer (``[]`` for a real die).

    Phantom ids are numbered as ``flow`` numbers them at PhaseStarted: per seat, in tableau order of
    the ``virtual_workers`` handlers, ``k`` counting every phantom of the seat.
    """
    if die < PHANTOM_BASE:
        return []
    k = 0
    for pid, h in registry.handlers(p, "virtual_workers"):
        for color in h(state, p, "explore"):
            if phantom_id(color, k) == die:
                return [pid]
            k += 1
    return []


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
            "source": "alien_research_team" if p.marks.get(EXTRA_DRAWN) else "scout",
            "help": "place every drawn tile, in order, under its stack (as development or world)"
            + (
                "; on_top: true puts it on top instead (Improved Reconnaissance)"
                if registry.has_power(p, "improved_reconnaissance")
                else ""
            ),
        }
    if p.waiting == "abandon_one":
        return {
            "kind": "abandon_one",
            "tiles": p.dev_stack + p.world_stack,
            "help": "the bag ran out: abandon one construction-zone tile into the bag",
        }
    explorers = [
        {
            "die": d,
            "color": color_of(d),
            "phantom": PHANTOM_BASE <= d < TALENT_BASE,
            **({"talent": True} if d >= TALENT_BASE else {}),  # Ambition: a talent worker
            "stock": stock_value(state, p, d),
        }
        for d in p.columns[EXPLORE]
    ]
    tasks = ["scout", "stock"] if explorers else []
    out: dict[str, Any] = {
        "kind": "explore",
        "tasks": tasks,
        "explorers": explorers,
        "abandonable": p.dev_stack + p.world_stack,
        "bag": len(state.bag),
        "help": "one explorer at a time: scout (optionally abandoning tiles first) or stock",
    }
    if registry.has_power(p, LOGISTICS):
        if p.dev_stack or p.world_stack:
            tasks.append("rearrange")
        if not explorers:
            tasks.append("finish")
        out["stacks"] = {"development": p.dev_stack[:], "world": p.world_stack[:]}
        out["help"] += (
            "; Advanced Logistics: 'rearrange' gives the new order of both stacks (top first; "
            "any tile may change stack), any number of times; 'finish' once no explorer is left"
        )
    return out


def apply(state: GameState, p: PlayerState, cmd: dict[str, Any], ctx: Ctx) -> None:
    if state.shortfall and p.seat != state.shortfall.get("seat"):
        refuse(
            "bag_empty",
            "the bag ran out of tiles; wait until the scouting player finishes",
            None,
            None,
        )
    task = cmd.get("task")
    if task == "rearrange":
        _rearrange(state, p, cmd, ctx)
        return
    if task == "finish":
        _finish_tasks(state, p, ctx)
        return
    explorer = cmd.get("explorer")
    if not p.columns[EXPLORE]:
        refuse(
            "task",
            f"you have no explorer left: task {task!r} is not possible"
            + ("; send task 'finish'" if registry.has_power(p, LOGISTICS) else ""),
            "task",
            task,
        )
    if explorer not in p.columns[EXPLORE]:
        refuse(
            "explorer",
            f"explorer: die {explorer!r} is not one of your explorers {p.columns[EXPLORE]}",
            "explorer",
            explorer,
        )
    abandon = cmd.get("abandon") or []
    if task == "stock":
        _stock(state, p, explorer, abandon, ctx)
        return
    if task != "scout":
        tasks = "'scout', 'stock'" + (
            ", 'rearrange' or 'finish'" if registry.has_power(p, LOGISTICS) else ""
        )
        refuse("task", f"task must be {tasks}, not {task!r}", "task", task)
    _scout(state, p, explorer, abandon, ctx)


def _stock(state: GameState, p: PlayerState, explorer: int, abandon: Any, ctx: Ctx) -> None:
    """Stock: the explorer earns $2 (powers may add); nothing is abandoned."""
    if abandon:
        refuse(
            "abandon",
            "tiles are abandoned only as part of a Scout, not a Stock",
            "abandon",
            abandon,
        )
    credits, used = registry.fold_tracked("stock_value", p, 2, state, p, explorer)
    powers = phantom_powers(state, p, explorer) + used
    extra: dict[str, Any] = {"powers": powers} if powers else {}
    ctx.emit(ev("ExplorerStocked", seat=p.seat, explorer=explorer, credits=int(credits), **extra))


def _scout(state: GameState, p: PlayerState, explorer: int, abandon: Any, ctx: Ctx) -> None:
    """Scout: abandon any tiles of the construction zone, then draw one tile more than abandoned."""
    zone = set(p.dev_stack) | set(p.world_stack)
    if (
        not isinstance(abandon, list)
        or len(set(abandon)) != len(abandon)
        or not set(abandon) <= zone
    ):
        bad = [t for t in abandon if t not in zone] if isinstance(abandon, list) else abandon
        refuse(
            "abandon",
            f"abandon: {bad!r} are not distinct tiles of your construction zone {sorted(zone)}",
            "abandon",
            bad,
        )
    drawn, refilled, short = _draw(state, len(abandon) + 1, extra_abandoned=abandon)
    powers = phantom_powers(state, p, explorer)
    extra = {"powers": powers} if powers else {}
    ctx.emit(
        ev(
            "TilesScouted",
            seat=p.seat,
            explorer=explorer,
            abandoned=list(abandon),
            drawn=drawn,
            refilled_at=refilled,
            short=short,
            **extra,
            public={
                "explorer": explorer,
                "abandoned": len(abandon),
                "drawn": len(drawn),
                "short": short,
                **extra,
            },
        )
    )
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
        # Ambition: "Explore and Ship tasks are finished upon the die being used"
        finish_task(state, p, e["explorer"], "explore")
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
        finish_task(state, p, e["explorer"], "explore")
    if color_of(e["explorer"]) == "yellow":
        p.marks[ALIEN_SCOUTS] = p.marks.get(ALIEN_SCOUTS, 0) + 1
    p.drawn = list(e["drawn"])
    if e["short"]:
        state.shortfall = {"seat": p.seat, "need": e["short"]}
    p.waiting = waiting_for(state, p)
    if not p.drawn and e["short"]:
        _open_shortfall(state)


def apply_place(state: GameState, p: PlayerState, cmd: dict[str, Any], ctx: Ctx) -> None:
    placements = cmd.get("placements")
    if not isinstance(placements, list):
        refuse(
            "placements",
            "'placements' must list every drawn tile as {tile, as}",
            "placements",
            placements,
        )
    tiles = [x.get("tile") if isinstance(x, dict) else None for x in placements]
    if sorted(tiles, key=str) != sorted(p.drawn, key=str):
        refuse(
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
            refuse(
                "side",
                f"placements[{i}].as must be 'development' or 'world', not {side!r}",
                f"placements[{i}].as",
                side,
            )
        top = bool(x.get("on_top", False))
        if top and not on_top_ok:
            refuse(
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
        "developments_placed": sum(1 for x in out if x["as"] == "development"),
        "worlds_placed": sum(1 for x in out if x["as"] == "world"),
        "tops": {"development": dev[0] if dev else None, "world": world[0] if world else None},
    }
    extra: dict[str, Any] = {}
    if any(x["on_top"] for x in out):
        extra["powers"] = ["improved_reconnaissance"]
        public["powers"] = ["improved_reconnaissance"]
    ctx.emit(ev("TilesPlaced", seat=p.seat, placements=out, public=public, **extra))


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
    for q in state.playing():
        if q.construction_tiles() >= 3:
            q.marks["resume"] = 1 if q.waiting else 0
            q.waiting = "abandon_one"


def apply_abandon_one(state: GameState, p: PlayerState, cmd: dict[str, Any], ctx: Ctx) -> None:
    tile = cmd.get("tile")
    if tile not in p.dev_stack and tile not in p.world_stack:
        refuse("tile", f"tile {tile!r} is not in your construction zone", "tile", tile)
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


# --- Advanced Logistics ---------------------------------------------------------------------


def _rearrange(state: GameState, p: PlayerState, cmd: dict[str, Any], ctx: Ctx) -> None:
    """Advanced Logistics: the complete new order of both stacks (top first).

    The power's single moves (a tile to the top or bottom of its stack, or flipped into the other
    stack) can reach any order of any split, so one command gives the result of a series of moves.
    Dice on a stack belong to the stack and stay on top. Nothing is drawn or revealed.
    Reading: the rulebook forbids it "after a tile draw by Alien Research Team"; that draw happens
    only once every seat has finished its Explore step, so the restriction holds by construction.
    """
    if not registry.has_power(p, LOGISTICS):
        refuse(
            "task", "task 'rearrange' needs Advanced Logistics in your tableau", "task", "rearrange"
        )
    dev, world = cmd.get("development"), cmd.get("world")
    for name, val in (("development", dev), ("world", world)):
        if not isinstance(val, list) or not all(
            isinstance(t, int) and not isinstance(t, bool) for t in val
        ):
            refuse(
                "rearrange",
                f"'{name}' must list the tile ids of the new {name} stack, top first",
                name,
                val,
            )
    assert isinstance(dev, list) and isinstance(world, list)
    have = sorted(p.dev_stack + p.world_stack)
    if sorted(dev + world) != have:
        refuse(
            "rearrange",
            f"'development' and 'world' together must hold exactly your construction-zone tiles "
            f"{have}, each once; got {dev + world}",
            "development",
            dev + world,
        )
    if dev == p.dev_stack and world == p.world_stack:
        refuse(
            "rearrange",
            "that is the stacks' present order: nothing to rearrange",
            "development",
            dev,
        )
    tops = {"development": dev[0] if dev else None, "world": world[0] if world else None}
    ctx.emit(
        ev(
            "ConstructionRearranged",
            seat=p.seat,
            development=list(dev),
            world=list(world),
            powers=[LOGISTICS],
            public={
                "tops": tops,
                "dev_stack_size": len(dev),
                "world_stack_size": len(world),
                "powers": [LOGISTICS],
            },
        )
    )


@folds("ConstructionRearranged")
def _rearranged(state: GameState, e: Event) -> None:
    p = state.players[e["seat"]]
    if sorted(e["development"] + e["world"]) != sorted(p.dev_stack + p.world_stack):
        raise ValueError("ConstructionRearranged: the tiles differ from the construction zone")
    p.dev_stack = list(e["development"])
    p.world_stack = list(e["world"])
    p.waiting = waiting_for(state, p)


def _finish_tasks(state: GameState, p: PlayerState, ctx: Ctx) -> None:
    if not registry.has_power(p, LOGISTICS):
        refuse(
            "task",
            "task 'finish' is only for Advanced Logistics owners; use your explorers",
            "task",
            "finish",
        )
    if p.columns[EXPLORE]:
        refuse(
            "task",
            f"every explorer must Scout or Stock first; left: {p.columns[EXPLORE]}",
            "task",
            "finish",
        )
    ctx.emit(ev("ExploreFinished", seat=p.seat))


@folds("ExploreFinished")
def _explore_finished(state: GameState, e: Event) -> None:
    p = state.players[e["seat"]]
    p.marks[DONE] = 1
    p.waiting = waiting_for(state, p)


# --- end of the phase ------------------------------------------------------------------------


def draw_extra(state: GameState, p: PlayerState, power_id: str, n: int, ctx: Ctx) -> None:
    """An end-of-Explore draw of ``n`` tiles for ``p`` (Alien Research Team), once per phase.

    It comes after every seat finished its tasks and before the abandoned tiles return to the bag;
    an empty bag is refilled from them as for a Scout. The seat then owes ``place_tiles``.
    """
    if p.marks.get(EXTRA_DRAWN):
        return
    drawn, refilled, short = _draw(state, n, extra_abandoned=[])
    ctx.emit(
        ev(
            "ExtraTilesDrawn",
            seat=p.seat,
            drawn=drawn,
            refilled_at=refilled,
            short=short,
            powers=[power_id],
            public={"drawn": len(drawn), "powers": [power_id]},
        )
    )


@folds("ExtraTilesDrawn")
def _extra_drawn(state: GameState, e: Event) -> None:
    p = state.players[e["seat"]]
    _fold_draw(state, e["drawn"], e["refilled_at"], "ExtraTilesDrawn")
    p.drawn = list(e["drawn"])
    p.marks[EXTRA_DRAWN] = 1
    p.waiting = waiting_for(state, p)


def finish(state: GameState, ctx: Ctx) -> None:
    """End of Explore: end-of-phase draws (may open decisions), then payments, then PhaseEnded.

    Called again after a draw's ``place_tiles`` is made; draws are recorded by their own events
    (``explore_draw`` handlers check that), and ``explore_end`` runs once, in the call that ends
    the phase. It also runs when nobody had an explorer (e.g. Explore added by the 2-player die).
    """
    for p in state.playing():
        for _pid, h in registry.handlers(p, "explore_draw"):
            h(state, p, ctx)
    if any(p.waiting for p in state.players):
        return  # a power opened a decision (Alien Research Team); finish again when it is made
    for p in state.playing():
        for _pid, h in registry.handlers(p, "explore_end"):
            h(state, p, ctx)
    if any(p.waiting for p in state.players):  # pragma: no cover - a handler broke the contract
        raise RuntimeError("an explore_end handler opened a decision; use explore_draw")
    ctx.emit(ev("PhaseEnded", phase="explore", returned=len(state.abandoned)))
