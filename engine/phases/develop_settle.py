"""Develop and Settle: developers/settlers go onto the top tile of their construction stack.

Workers are put one at a time on the top tile; when the dice on the stack reach its cost (after
mandatory discounts, never below 1) the tile is complete: it joins the tableau, the dice that
completed it go to the Citizenry, and a world's (or immediate development's) effect happens once.
Remaining workers continue on the next tile; with the stack empty they return to the cup. A top tile
already complete when the phase starts (after Explore) is completed first, even without workers.

Putting workers on in order and taking the first cost-many dice of the stack for each completion is
the same as placing them one at a time, so the decision is the order (asked only when it matters)
plus the die each removal effect takes and the completing dice that Galactic Federation / Galactic
Exchange send back to the cup.

The dice already on the stack come before the workers. Explore (Scouting, abandoning, a tile put on
top) can leave the top tile complete with more dice on it than it needs; the rulebook then says "at
the start of the next Develop phase, resolve completed developments, choosing which developers to
return to the Citizenry" (the same for worlds and settlers). We read that as: the owner orders the
dice already on the stack (``stack_order``); the tiles already complete take the first cost-many of
them, and the rest stay on the stack, ahead of the workers, for the next tile. Without the field
they are used oldest first. The choice is described (legal ``stack_choice``) when it exists: the top
tile is complete at the start, with more dice on the stack than the complete tile(s) need, of
several colours; a seat is asked for it only when it changes where dice end up (some dice on the
stack do not complete a tile in this phase). The order binds only this phase's completions: the
dice left on the stack keep their place (oldest first).

Costs are read live: a discount completed earlier in the same phase applies to the next tile at once
(``plan`` simulates the growing tableau, so the forecast and the legal choices match what the
resolution does). None applies to the tile that carries it. Scoring uses printed costs.

The command (``kind`` develop or settle):
  order    every worker once, in the order they go onto the stack (default: by die id)
  stack_order
           optional: every die already on the stack once, in the order they are used (default:
           oldest first); the tiles complete at the start take the first cost-many (they go to the
           Citizenry), the others stay on the stack for the next tile, before the workers.
  remove   one die per removal effect among the forecast completions (legal ``removals``), in
           completion order. Each is taken when its tile completes, before the tile's new dice
           arrive, from anywhere in the empire (cup, Citizenry, a column, a stack, a good, or one
           of the dice that just completed the tile); a die the tile grants cannot be the one
           removed. An entry whose tile no longer completes (an earlier removal took a die it
           needed) is ignored.
  returns  optional: one list per forecast completion (legal ``completions``, same order), each
           0 to ``returns_max`` of that tile's completing dice, sent to the cup instead of the
           Citizenry (Galactic Federation for developments, Galactic Exchange for worlds). Missing
           entries mean none. New Galactic Order then sends every Military die left among a
           completed world's dice to the cup by itself.
  discounts
           Ambition, optional: the tiles of this stack to make cheaper just before they are
           completed (legal ``discounts``), each ``{tile, via: <power id>}``; ``die`` too for a
           power that removes a die (Contact Specialist: one of your Military dice, from anywhere
           in your empire). Terraforming Specialists: pay $1, the tile needs one worker fewer;
           Contact Specialist (worlds): return the die to the supply, the world needs three
           fewer. Never below one worker, and never on a tile whose cost cannot be modified
           (Rebel Stronghold). Each power at most once per tile.

Ambition rulebook, Fine Points, Contact Specialist: "The Military die removed may be from anywhere
in your empire. If it is removed from the world you are completing, it does not count as a
settler towards completing that world." Terraforming Specialists pays before the tile completes,
and a payment that leaves $0 is reset to $1 at once ("Reaching Zero Credits"), so several tiles
can be paid for with $1. Alien Booby Trap ("remove_completing_settler"): the settler that completes
it - the last of the dice that complete it, in the order they went on - returns to the supply.
"""

from __future__ import annotations

from typing import Any

from ..ambition import objectives
from ..catalogue import (
    CARDS,
    COLOR_INDEX,
    DIE_COLORS,
    PHANTOM_BASE,
    PHASE_INDEX,
    Card,
    color_of,
    dev_card,
    world_card,
)
from ..economy import (
    finish_task,
    gain_credits,
    supply_return,
    supply_take,
    take_die_from,
    worker_kinds,
)
from ..errors import refuse
from ..fold import Ctx, Event, ev, folds
from ..powers import registry
from ..powers.effects import pay, special
from ..state import GameState, PlayerState


def _is_dev(phase: str) -> bool:
    return phase == "develop"


def stack_of(p: PlayerState, phase: str) -> tuple[list[int], list[int]]:
    """(tiles, dice on them) of the stack this phase builds."""
    return (p.dev_stack, p.dev_dice) if _is_dev(phase) else (p.world_stack, p.world_dice)


def tile_card_for(phase: str, tile: int) -> Card:
    return dev_card(tile) if _is_dev(phase) else world_card(tile)


def cost_tracked(state: GameState, p: PlayerState, card: Card) -> tuple[int, list[str]]:
    """Workers a tile needs for this seat now, and the powers that discounted it."""
    if special(card, "cost_cannot_be_modified"):  # Ambition: Rebel Stronghold
        return max(1, card.cost), []
    c, used = registry.fold_tracked("tile_cost", p, card.cost, state, p, card)
    return max(1, int(c)), used


def cost(state: GameState, p: PlayerState, card: Card) -> int:
    """Workers a tile needs: printed cost after the owner's mandatory discounts, at least 1."""
    return cost_tracked(state, p, card)[0]


def workers(p: PlayerState, phase: str) -> list[int]:
    return p.columns[PHASE_INDEX[phase]]


def return_rule(state: GameState, p: PlayerState, card: Card, n: int) -> dict[str, Any]:
    """How the ``n`` dice completing a tile may go back to the cup (read before the tile joins the
    tableau, so a power never applies to its own tile): ``max`` dice of the owner's choice
    (Federation / Exchange) and the colours that go back by themselves (New Galactic Order), with
    the powers behind each."""
    out: dict[str, Any] = {"max": 0, "powers": [], "auto": [], "auto_powers": [], "auto_all": False}
    for _pid, h in registry.handlers(p, "return_workers"):
        r = h(state, p, card)
        if r is None:
            continue
        if r["optional"]:
            out["max"] += n if r["max"] is None else r["max"]
            out["powers"].append(r["power"])
        else:
            out["auto_powers"].append(r["power"])
            if r["colors"] is None:
                out["auto_all"] = True
            else:
                out["auto"] += [c for c in r["colors"] if c not in out["auto"]]
    out["max"] = min(out["max"], n)
    return out


def discount_options(state: GameState, p: PlayerState, card: Card) -> list[dict[str, Any]]:
    """The optional discounts (Ambition: Terraforming Specialists, Contact Specialist) this seat
    may apply to a tile just before completing it: ``{via, discount, minimum, pay, remove}``
    (``remove``: the die colours one of which is returned, or None). None for a tile whose cost
    cannot be modified (Rebel Stronghold)."""
    if special(card, "cost_cannot_be_modified"):
        return []
    out = []
    for _pid, h in registry.handlers(p, "discount_options"):
        o = h(state, p, card)
        if o is not None:
            out.append(o)
    return out


def _discounted(
    state: GameState, p: PlayerState, card: Card, c: int, chosen: list[dict[str, Any]]
) -> int:
    """A tile's cost after the discounts chosen for it (never below their minimum, nor 1)."""
    if not chosen:
        return c
    opts = {o["via"]: o for o in discount_options(state, p, card)}
    for ch in chosen:
        o = opts.get(ch["via"])
        if o is not None:
            c = max(int(o["minimum"]), 1, c - int(o["discount"]))
    return c


def plan(
    state: GameState,
    p: PlayerState,
    phase: str,
    full: bool = True,
    discounts: dict[int, list[dict[str, Any]]] | None = None,
) -> list[dict[str, Any]]:
    """Every stack tile, top first, with its live cost once the tiles above it are in the tableau
    and whether this phase completes it (independent of the order of workers, unless a removal
    effect takes a die of this stack or column, which can only stop the completions early).

    ``full=False`` stops after the first tile that does not complete (enough for forecasts).
    ``discounts``: tile -> the discounts chosen for it (Ambition; see ``discount_options``); a
    die a discount removes from this stack or column no longer counts toward the tiles.
    """
    tiles, dice = stack_of(p, phase)
    n = len(dice) + len(workers(p, phase))
    pool = set(dice) | set(workers(p, phase))
    q = p
    out: list[dict[str, Any]] = []
    going = True
    for t in tiles:
        if not going and not full:
            break
        card = tile_card_for(phase, t)
        c = cost(state, q, card)
        chosen = (discounts or {}).get(t, [])
        if chosen:
            c = _discounted(state, q, card, c, chosen)
            if going:
                n -= sum(1 for ch in chosen if ch.get("die") in pool)
        going = going and n >= c
        rule = return_rule(state, q, card, c) if going else None
        if going:
            n -= c
        out.append({"tile": t, "card": card, "cost": c, "completes": going, "rule": rule})
        if t != tiles[-1] and (going or full):
            if q is p:
                q = p.with_own_tableau()
            (q.worlds if card.is_world else q.devs).append(card.key)
    return out


def forecast(
    state: GameState,
    p: PlayerState,
    phase: str,
    discounts: dict[int, list[dict[str, Any]]] | None = None,
) -> list[int]:
    """The tiles this phase will complete, in order (independent of the order of workers)."""
    return [
        x["tile"] for x in plan(state, p, phase, full=False, discounts=discounts) if x["completes"]
    ]


def _discount_means(state: GameState, p: PlayerState, phase: str) -> list[dict[str, Any]]:
    """The discounts this seat could choose now, one entry per (stack tile, power) it can afford:
    ``{tile, card, via, discount, pay, dice}`` (``dice``: the dice it may remove, for a power that
    removes one). Empty without such a power (every base game)."""
    tiles, _ = stack_of(p, phase)
    out: list[dict[str, Any]] = []
    for t in tiles:
        card = tile_card_for(phase, t)
        if cost(state, p, card) <= 1:
            continue  # nothing to save: a tile always needs one worker
        for o in discount_options(state, p, card):
            entry: dict[str, Any] = {
                "tile": t,
                "card": card.key,
                "via": o["via"],
                "discount": o["discount"],
                "pay": o["pay"],
            }
            if o["remove"] is not None:
                entry["dice"] = sorted(
                    d for d in p.owned_dice() if d < PHANTOM_BASE and color_of(d) in o["remove"]
                )
                if not entry["dice"]:
                    continue
            if o["pay"] > p.credits:
                continue
            out.append(entry)
    return out


def _removals(phase: str, tiles: list[int]) -> list[int]:
    return [t for t in tiles if tile_card_for(phase, t).immediate.get("dice_removed")]


def stack_choice(state: GameState, p: PlayerState, phase: str) -> dict[str, Any] | None:
    """The rulebook's "choosing which developers (settlers) to return to the Citizenry" when the
    top tile is already complete at the start of the phase (None when there is no such choice).

    Rulebook interpretation: the choice exists when the dice already on the stack complete the top
    tile (and maybe the tiles after it) with dice to spare, and those dice are not all of one
    colour; otherwise every order of them comes to the same. ``ready`` are the tiles the dice on
    the stack complete by themselves, ``take`` the dice those tiles use up, ``stay`` the dice left
    on the stack for the next tile (before the workers).
    """
    _, dice = stack_of(p, phase)
    # version 1: oldest first, unasked; one kind of die (one colour, Ambition: one $ outcome)
    if state.rules < 2 or worker_kinds(state, p, dice, phase) < 2:
        return None
    ready: list[dict[str, Any]] = []
    left = len(dice)
    for x in plan(state, p, phase, full=False):
        if not x["completes"] or x["cost"] > left:
            break
        ready.append({"tile": x["tile"], "card": x["card"].key, "cost": x["cost"]})
        left -= x["cost"]
    if not ready or not left:
        return None
    return {
        "dice": [{"die": d, "color": color_of(d)} for d in dice],
        "ready": ready,
        "take": len(dice) - left,
        "stay": left,
    }


def waiting_for(state: GameState, p: PlayerState, phase: str) -> str:
    """Ask a seat only when it has a real choice: a removal effect, a Federation / Exchange return,
    workers of several colours of which only some complete tiles now, or which of the dice already
    on the stack complete a tile complete at the start when some of them do not complete a tile
    in this phase (else they all reach the Citizenry anyway)."""
    if not workers(p, phase) and not stack_of(p, phase)[1]:
        return ""  # no dice to complete anything (every tile costs at least 1)
    if any(m["discount"] for m in _discount_means(state, p, phase)):
        return phase  # Ambition: whether to pay for a discount is the owner's choice
    done = [x for x in plan(state, p, phase, full=False) if x["completes"]]
    if not done:
        return ""
    if any(x["card"].immediate.get("dice_removed") or x["rule"]["max"] for x in done):
        return phase
    ws = workers(p, phase)
    if len({color_of(d) for d in ws}) >= 2 and any(
        special(x["card"], "remove_completing_settler") for x in done
    ):
        return phase  # Ambition: the order decides which settler Alien Booby Trap takes
    on_stack = len(stack_of(p, phase)[1])
    used = sum(x["cost"] for x in done) - on_stack
    if 0 < used < len(ws) and worker_kinds(state, p, ws, phase) >= 2:
        return phase
    if (
        len(done) >= 2
        and len({color_of(d) for d in ws}) >= 2
        and registry.handlers(p, "completing_dice_matter")
    ):
        return phase  # Ambition: which dice complete which tile pays (Uplift Mercenaries)
    if used < 0 and stack_choice(state, p, phase):  # rules version 2 on
        return phase
    return ""


def has_work(state: GameState, p: PlayerState, phase: str) -> bool:
    tiles, dice = stack_of(p, phase)
    if not workers(p, phase) and not dice:
        return False  # no dice to complete anything (every tile costs at least 1)
    return bool(workers(p, phase)) or bool(forecast(state, p, phase)) or (not tiles and bool(dice))


def legal(state: GameState, p: PlayerState, phase: str) -> dict[str, Any]:
    pl = plan(state, p, phase)
    done = [x for x in pl if x["completes"]]
    _, dice = stack_of(p, phase)
    out: dict[str, Any] = {
        "kind": phase,
        "workers": [{"die": d, "color": color_of(d)} for d in workers(p, phase)],
        "stack": [{"tile": x["tile"], "card": x["card"].key, "cost": x["cost"]} for x in pl],
        "dice_on_stack": dice[:],
        "completes": [x["tile"] for x in done],
        "completions": [
            {
                "tile": x["tile"],
                "card": x["card"].key,
                "cost": x["cost"],
                "removal": bool(x["card"].immediate.get("dice_removed")),
                "returns_max": x["rule"]["max"],
                "returns_powers": x["rule"]["powers"],
                "auto_return_colors": (
                    list(DIE_COLORS) if x["rule"]["auto_all"] else x["rule"]["auto"]
                ),
                "auto_return_powers": x["rule"]["auto_powers"],
            }
            for x in done
        ],
        "removals": [
            {"tile": x["tile"], "card": x["card"].key}
            for x in done
            if x["card"].immediate.get("dice_removed")
        ],
        "removable": removable(p),
        "stack_choice": stack_choice(state, p, phase),
        "help": "order: every worker once, in the order they go onto the stack (the dice on the "
        "stack come first; each completion takes the next 'cost' dice). stack_order (optional, "
        "when 'stack_choice' is given: the top tile is already complete with dice to spare): "
        "every die of 'dice_on_stack' once, in the order they are used; the tiles in "
        "'stack_choice.ready' take the first 'stack_choice.take' of them (to the Citizenry), the "
        "other 'stack_choice.stay' stay on the stack for the next tile, before the workers "
        "(default: oldest first). remove: one of your dice "
        "for each entry of 'removals', in completion order; it is taken when its tile completes, "
        "from anywhere (the dice the tile grants arrive afterwards and cannot be removed). "
        "returns (optional): one list per entry of 'completions', each 0 to 'returns_max' of "
        "that tile's completing dice, sent to the cup instead of the Citizenry; then every "
        "completing die of an 'auto_return_colors' colour goes to the cup by itself",
    }
    means = _discount_means(state, p, phase)
    if means:
        # Ambition: the forecast above is without them; each one chosen makes its tile cheaper
        out["discounts"] = means
        out["help"] += (
            ". discounts (optional): entries {tile, via} of 'discounts' (plus 'die': one of its "
            "'dice' for a power that removes a die), applied just before that tile completes; "
            "'pay' is the $ it costs"
        )
    return out


class _Choices:
    """The owner's per-completion choices, consumed in completion order."""

    __slots__ = ("remove", "returns", "stack_order", "k", "discounts")

    def __init__(
        self,
        remove: list[Any],
        returns: list[Any],
        stack_order: list[int],
        discounts: dict[int, list[dict[str, Any]]] | None = None,
    ) -> None:
        self.remove = remove
        self.returns = returns
        self.stack_order = stack_order
        self.k = 0
        #: tile -> the discounts still to apply to it (Ambition), removed once used
        self.discounts = dict(discounts or {})

    def next_dice(self, dice: list[int], n: int) -> list[int]:
        """The next ``n`` dice to use of those on the stack: the ones the owner ordered that are
        still there (a removal effect or an earlier completion may have taken some), in that
        order, then the others oldest first (the workers, in the order they were put on)."""
        first = [d for d in self.stack_order if d in dice]
        return (first + [d for d in dice if d not in first])[:n]


def _is_die(x: Any) -> bool:
    return isinstance(x, int) and not isinstance(x, bool)


def apply(
    state: GameState, p: PlayerState, cmd: dict[str, Any], ctx: Ctx, auto: bool = False
) -> None:
    phase: str = state.phase  # type: ignore[assignment]
    order = _check_order(p, phase, cmd.get("order"))
    stack_order = _check_stack_order(state, p, phase, cmd.get("stack_order"))
    remove = cmd.get("remove") or []
    discounts = _check_discounts(state, p, phase, cmd.get("discounts"))
    done = forecast(state, p, phase, discounts)
    _check_remove(phase, done, remove)
    returns = cmd.get("returns")
    if returns is None:
        returns = []
    _check_returns(done, returns)
    if remove or any(returns) or discounts:
        # choices are checked as each completion happens: try them on a copy first, so that an
        # illegal command leaves the state untouched
        sim = state.copy()
        resolve(
            sim,
            sim.players[p.seat],
            phase,
            list(order),
            list(remove),
            returns,
            Ctx(sim),
            auto,
            list(stack_order),
            discounts,
        )
    resolve(
        state, p, phase, list(order), list(remove), returns, ctx, auto, list(stack_order), discounts
    )


def _check_discounts(
    state: GameState, p: PlayerState, phase: str, discounts: Any
) -> dict[int, list[dict[str, Any]]]:
    """The discounts chosen (Ambition), by tile: each an offered power for a tile of this stack,
    once per tile, with one of the offered dice for a power that removes a die (never one die
    twice). Whether the seat can pay, and still owns the die, is checked when the tile
    completes."""
    if discounts is None or discounts == []:
        return {}
    means = _discount_means(state, p, phase)
    offered = {(m["tile"], m["via"]): m for m in means}
    if not isinstance(discounts, list):
        refuse(
            "discounts", "discounts must be a list of {tile, via[, die]}", "discounts", discounts
        )
    out: dict[int, list[dict[str, Any]]] = {}
    dice: set[int] = set()
    for i, d in enumerate(discounts):
        tile = d.get("tile") if isinstance(d, dict) else None
        via = d.get("via") if isinstance(d, dict) else None
        m = offered.get((tile, via))
        if m is None:
            choices = sorted({(x["tile"], x["via"]) for x in means})
            refuse(
                "discounts",
                f"discounts[{i}]: {via!r} cannot make tile {tile!r} cheaper now; the choices "
                f"(tile, power) are {choices or 'none'}",
                f"discounts[{i}]",
                d,
            )
        if any(x["via"] == via for x in out.get(tile, [])):  # type: ignore[arg-type]
            refuse(
                "discounts",
                f"discounts[{i}]: {via} is used once per tile",
                f"discounts[{i}]",
                d,
            )
        entry: dict[str, Any] = {"via": via}
        if "dice" in m:
            die = d.get("die")
            if die not in m["dice"] or die in dice:
                refuse(
                    "discounts",
                    f"discounts[{i}].die: {via} returns one of your dice {m['dice']} "
                    f"to the supply (each die once), not {die!r}",
                    f"discounts[{i}].die",
                    die,
                )
            dice.add(die)
            entry["die"] = die
        out.setdefault(tile, []).append(entry)  # type: ignore[arg-type]
    return out


def _check_order(p: PlayerState, phase: str, order: Any) -> list[int]:
    """The order the workers go onto the stack: each worker once (default: by die id)."""
    ws = workers(p, phase)
    if order is None:
        order = sorted(ws)
    if not isinstance(order, list) or sorted(order, key=str) != sorted(ws, key=str):
        refuse(
            "order",
            f"order must list each of your {phase} workers {sorted(ws)} exactly once",
            "order",
            order,
        )
    return order


def _check_stack_order(state: GameState, p: PlayerState, phase: str, stack_order: Any) -> list[int]:
    """The order the dice already on the stack are used (rules 2 on; default: oldest first)."""
    _, on_stack = stack_of(p, phase)
    if stack_order is not None and state.rules < 2:
        refuse(
            "stack_order",
            f"this game is played under rules version {state.rules}, where the dice on a stack "
            "are used oldest first; leave stack_order out",
            "stack_order",
            stack_order,
        )
    if stack_order is None:
        stack_order = on_stack[:]
    if (
        not isinstance(stack_order, list)
        or not all(_is_die(d) for d in stack_order)
        or sorted(stack_order) != sorted(on_stack)
    ):
        refuse(
            "stack_order",
            f"stack_order must list each die already on your {_stack_name(phase)} stack "
            f"{on_stack} exactly once, in the order they are used (the tile already complete "
            "takes the first ones, the others stay on the stack for the next tile), or be left "
            "out to use them oldest first",
            "stack_order",
            stack_order,
        )
    return stack_order


def _check_remove(phase: str, done: list[int], remove: Any) -> None:
    """One distinct die per removal effect among the forecast completions."""
    need = _removals(phase, done)
    if not isinstance(remove, list) or len(remove) != len(need):
        refuse(
            "remove",
            f"remove must name {len(need)} of your dice, one for each removal effect of tiles {need}",
            "remove",
            remove,
        )
    if not all(_is_die(d) for d in remove) or len(set(remove)) != len(remove):
        refuse("remove", f"remove: {remove} must be distinct die ids", "remove", remove)


def _check_returns(done: list[int], returns: Any) -> None:
    """At most one list of die ids per forecast completion (Galactic Federation / Exchange)."""
    if (
        not isinstance(returns, list)
        or len(returns) > len(done)
        or not all(isinstance(r, list) and all(_is_die(d) for d in r) for r in returns)
    ):
        refuse(
            "returns",
            f"returns must be a list of at most {len(done)} lists of die ids, one per completed "
            f"tile {done} in completion order",
            "returns",
            returns,
        )


def _stack_name(phase: str) -> str:
    return "development" if _is_dev(phase) else "world"


def resolve(
    state: GameState,
    p: PlayerState,
    phase: str,
    order: list[int],
    remove: list[int],
    returns: list[list[int]],
    ctx: Ctx,
    auto: bool,
    stack_order: list[int] | None = None,
    discounts: dict[int, list[dict[str, Any]]] | None = None,
) -> None:
    """Complete already-complete tiles, put the workers on, complete tiles, return leftovers.

    ``stack_order``: the dice already on the stack in the order they are used (None: oldest
    first); the workers placed come after them. ``discounts``: tile -> the discounts chosen for
    it (Ambition), applied just before it completes."""
    seat = p.seat
    choices = _Choices(remove, returns, stack_order or [], discounts)
    before = len(ctx.events)
    _complete_ready(state, p, phase, choices, ctx)
    column = workers(p, phase)
    order = [d for d in order if d in column]  # a removal effect may have taken a worker
    # a seat asked only whether to pay for a discount (Ambition), with no worker to place, that
    # completes nothing: it has answered (an empty placement), else it would be asked forever
    if order or (len(ctx.events) == before and p.waiting == phase):
        ctx.emit(ev("WorkersPlaced", seat=seat, phase=phase, dice=order, auto=auto))
        _complete_ready(state, p, phase, choices, ctx)
    for tile in choices.discounts:
        refuse(
            "discounts",
            f"discounts: tile {tile} does not complete in this {phase} phase even with its "
            "discount, so there is nothing to make cheaper; leave it out",
            "discounts",
            tile,
        )
    tiles, dice = stack_of(p, phase)
    if not tiles and dice:
        ctx.emit(ev("WorkersReturned", seat=seat, phase=phase, dice=dice[:], source="stack"))


def _complete_ready(
    state: GameState, p: PlayerState, phase: str, choices: _Choices, ctx: Ctx
) -> None:
    tiles, dice = stack_of(p, phase)
    while tiles:
        card = tile_card_for(phase, tiles[0])
        c, discounts = cost_tracked(state, p, card)
        chosen = choices.discounts.get(tiles[0], [])
        if chosen:
            c = _discounted(state, p, card, c, chosen)
            gone = {ch.get("die") for ch in chosen}
            if sum(1 for d in dice if d not in gone) < c:
                return
            del choices.discounts[tiles[0]]
            _apply_discounts(state, p, card, chosen, ctx)  # just before it is completed
            discounts = discounts + [ch["via"] for ch in chosen if ch["via"] not in discounts]
        elif len(dice) < c:
            return
        complete(state, p, phase, card, choices.next_dice(dice, c), discounts, choices, ctx)


def _apply_discounts(
    state: GameState, p: PlayerState, card: Card, chosen: list[dict[str, Any]], ctx: Ctx
) -> None:
    """Pay for each chosen discount of a tile about to complete: the credits (Terraforming
    Specialists) or the die returned to the supply (Contact Specialist)."""
    opts = {o["via"]: o for o in discount_options(state, p, card)}
    for ch in chosen:
        via = ch["via"]
        o = opts.get(via)
        if o is None:
            refuse("discounts", f"discounts: {via} cannot make {card.name} cheaper", "discounts")
        if o["pay"]:
            if p.credits < o["pay"]:
                refuse(
                    "discounts",
                    f"discounts: {via} costs ${o['pay']} when {card.name} completes, and you "
                    f"would have ${p.credits} then",
                    "discounts",
                    via,
                )
            pay(
                ctx,
                p,
                via,
                credits=-int(o["pay"]),
                why=f"{card.name} ({card.key}) needs {o['discount']} worker(s) fewer",
            )
        if o["remove"] is not None:
            die = ch["die"]
            if die not in p.owned_dice():
                refuse(
                    "discounts",
                    f"discounts: die {die} is no longer yours when {card.name} completes",
                    "discounts",
                    die,
                )
            ctx.emit(
                ev(
                    "PowerDieRemoved",
                    seat=p.seat,
                    power=via,
                    die=die,
                    why=f"{card.name} ({card.key}) needs {o['discount']} worker(s) fewer",
                    powers=[via],
                )
            )


def complete(
    state: GameState,
    p: PlayerState,
    phase: str,
    card: Card,
    dice: list[int],
    discounts: list[str],
    choices: _Choices,
    ctx: Ctx,
) -> None:
    """Emit one tile's completion: which completing dice go to the cup (Federation / Exchange
    picks, then New Galactic Order), the removal (chosen before the tile's new dice arrive), the
    gains; then the completion powers."""
    k = choices.k
    choices.k += 1
    powers = list(discounts)
    removed = _removal(p, card, choices)
    if removed is None and special(card, "remove_completing_settler"):
        # Alien Booby Trap: the settler that completes it (the last one to go on) is lost
        real = [d for d in dice if d < PHANTOM_BASE]
        removed = real[-1] if real else None
    rule = return_rule(state, p, card, len(dice))
    picks = _returns_chosen(k, card, dice, removed, rule, choices)
    if picks:
        powers += [x for x in rule["powers"] if x not in powers]
    auto = [
        d
        for d in dice
        if d < PHANTOM_BASE
        and d not in picks
        and d != removed
        and (rule["auto_all"] or color_of(d) in rule["auto"])
    ]
    if auto:
        powers += [x for x in rule["auto_powers"] if x not in powers]
    if card.dev_kind == "immediate" and card.power_id and card.power_id not in powers:
        powers.append(card.power_id)
    ctx.emit(
        ev(
            "TileCompleted",
            seat=p.seat,
            phase=phase,
            tile=card.tile,
            card=card.key,
            dice=dice,
            returned=picks + auto,
            removed=removed,
            gained=_dice_gained(state, card),
            credits=int(card.immediate.get("credits") or 0),
            powers=powers,
        )
    )
    for _pid, h in registry.handlers(p, "completed"):
        h(state, p, card, dice, ctx)


def removable(p: PlayerState) -> list[int]:
    """What a removal effect may take: any of the seat's dice, wherever they lie (no phantom), and
    with Ambition objectives its talent counters, unused or at work: "A Talent counter is
    considered a die and can be returned to the supply to satisfy immediate effects"."""
    dice = [d for d in p.owned_dice() if d < PHANTOM_BASE or objectives.is_talent(d)]
    return sorted(dice + p.talents)


def _removal(p: PlayerState, card: Card, choices: _Choices) -> int | None:
    """The die a removal effect takes: the owner's next choice, one of their dice right now."""
    if not card.immediate.get("dice_removed"):
        return None
    if not choices.remove:
        refuse("remove", f"remove: name a die for the removal effect of {card.name}", "remove")
    removed = choices.remove.pop(0)
    if removed not in removable(p):
        refuse(
            "remove",
            f"remove: die {removed} is not one of your dice when {card.name} completes "
            "(the dice a tile grants arrive after its removal and cannot be removed)",
            "remove",
            removed,
        )
    return removed


def _returns_chosen(
    k: int,
    card: Card,
    dice: list[int],
    removed: int | None,
    rule: dict[str, Any],
    choices: _Choices,
) -> list[int]:
    """The completing dice the owner sends to the cup (Galactic Federation / Exchange)."""
    picks = list(choices.returns[k]) if k < len(choices.returns) else []
    if picks:
        if len(picks) > rule["max"] or len(set(picks)) != len(picks):
            refuse(
                "returns",
                f"returns[{k}]: at most {rule['max']} distinct dice of {card.name} may go back "
                "to the cup" + ("" if rule["max"] else " (no Galactic Federation / Exchange here)"),
                f"returns[{k}]",
                picks,
            )
        bad = [d for d in picks if d not in dice or d >= PHANTOM_BASE or d == removed]
        if bad:
            refuse(
                "returns",
                f"returns[{k}]: dice {bad} are not among the dice completing {card.name} "
                f"{dice}" + (f" other than the removed die {removed}" if removed in bad else ""),
                f"returns[{k}]",
                bad,
            )
    return picks


def _dice_gained(state: GameState, card: Card) -> list[dict[str, Any]]:
    """The dice the tile grants: the first of each colour in the supply, each die once."""
    gained = []
    taken: set[int] = set()
    for g in card.immediate.get("dice_gained") or []:
        die = _peek_excluding(state, g["color"], taken)
        if die is not None:
            taken.add(die)
            gained.append({"die": die, "to": g["to"]})
    return gained


def _peek_excluding(state: GameState, color: str, taken: set[int]) -> int | None:
    for d in state.supply[COLOR_INDEX[color]]:
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
    back = set(e.get("returned", ()))
    for d in e["dice"]:
        dice.remove(d)
        if d >= PHANTOM_BASE:  # phantoms vanish; a talent worker finished its task: supply
            continue
        if d in back:
            p.cup.append(d)
        else:
            # Ambition, $ faces: "Develop and Settle tasks are finished after that die has been
            # used to complete a tile in the construction stack" (``economy.finish_task``)
            finish_task(state, p, d, e["phase"])
    if back:
        p.cup.sort()
    card = CARDS[e["card"]]
    (p.worlds if card.is_world else p.devs).append(card.key)
    removed = e["removed"]
    if removed is not None and objectives.is_talent(removed) and removed in e["dice"]:
        # a talent worker that completed this very tile is back in the supply already (above):
        # removing it takes nothing more
        removed = None
    if removed is not None:
        take_die_from(p, removed)
        if not objectives.is_talent(removed):  # a talent counter's supply is implicit
            supply_return(state, removed)
    for g in e["gained"]:
        supply_take(state, g["die"])
        if g["to"] == "cup":
            p.cup.append(g["die"])
        elif g["to"] == "citizenry":
            p.citizenry.append(g["die"])
        else:
            p.goods.setdefault(card.key, []).append(g["die"])
            if state.options.get("ambition"):  # a good a tile gives shows no rolled face ($)
                p.faces.pop(g["die"], None)
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
        if d < PHANTOM_BASE:
            p.cup.append(d)
        else:  # Ambition: a talent worker that did no task returns to the unused counters
            objectives.back_to_unused(p, d)
    p.cup.sort()


def start(state: GameState, ctx: Ctx) -> None:
    """Resolve every seat that has work but no real choice (automatic, recorded as events)."""
    phase: str = state.phase  # type: ignore[assignment]
    for p in state.playing():
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
            resolve(state, p, phase, ws, [], [], ctx, auto=True)


def finish(state: GameState, ctx: Ctx) -> None:
    """End-of-phase powers (Galactic Investors, Robot Surveyors, Galactic Religion) pay every
    owner, workers or not, then the phase ends."""
    phase: str = state.phase  # type: ignore[assignment]
    for p in state.playing():
        for _pid, h in registry.handlers(p, f"{phase}_end"):
            h(state, p, ctx)
    ctx.emit(ev("PhaseEnded", phase=phase))
