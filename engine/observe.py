"""What each viewer may see: ``observe(state, viewer)`` and ``redact(event, viewer)``.

Viewers: ``"public"`` (spectators), a seat number, or ``"server"`` (everything). Secret: dice behind
screens until Reveal (faces, columns, the selected phase), tiles below the top of each construction
stack, tiles abandoned during Explore, the bag's contents, and the seed until the game ends.

Events that carry secrets name their owner seat and hold, under ``public``, the part anybody may
see; ``redact`` gives other viewers exactly that part. Projections and feeds use only these two
functions.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from . import flow
from .ambition import objectives
from .catalogue import (
    CARDS,
    DIE_FACES,
    FACTIONS,
    HOME_WORLDS,
    PHANTOM_BASE,
    PHASES,
    TALENT_BASE,
    Card,
    color_of,
    dev_card,
    is_ambition,
    world_card,
)
from .state import GameState, PlayerState

Viewer = int | str

#: event type -> visibility: "public", "seat" (the event's seat; others get its ``public`` part)
#: or "server" (others get the event without the server-only fields)
VISIBILITY: dict[str, str] = {
    "GameCreated": "server",
    "DiceRolled": "seat",
    "AssignmentSealed": "seat",
    "TilesScouted": "seat",
    "TilesPlaced": "seat",
    "TileReturnedToBag": "seat",
    "ShortfallDrawn": "seat",
    "CommandSubmitted": "seat",
    "ConstructionRearranged": "seat",
    "ExtraTilesDrawn": "seat",
}
SERVER_FIELDS = {"GameCreated": ("seed",)}


def visibility(event: Mapping[str, Any]) -> str:
    """``"public"``, ``"seat:N"`` or ``"server"`` for the event store envelope."""
    v = VISIBILITY.get(event["type"], "public")
    if v == "seat":
        return f"seat:{event['seat']}"
    return v


def redact(event: dict[str, Any], viewer: Viewer) -> dict[str, Any]:
    """The event as ``viewer`` may see it."""
    v = VISIBILITY.get(event["type"], "public")
    if viewer == "server" or v == "public":
        return event
    if v == "server":
        return {k: x for k, x in event.items() if k not in SERVER_FIELDS[event["type"]]}
    if viewer == event["seat"]:
        return event
    out = {"type": event["type"], "v": event["v"], "seat": event["seat"]}
    out.update(event.get("public", {}))
    return out


def _tile(t: int) -> dict[str, Any]:
    return {"tile": t, "development": dev_card(t).key, "world": world_card(t).key}


def _top(card: Card) -> dict[str, Any]:
    return {"card": card.key, "name": card.name, "cost": card.cost}


def _stack(tiles: list[int], dice: list[int], full: bool, side: str) -> dict[str, Any]:
    card = dev_card if side == "development" else world_card
    out: dict[str, Any] = {
        "count": len(tiles),
        "top": {"tile": tiles[0], **_top(card(tiles[0]))} if tiles else None,
        "dice": _dice(dice),
    }
    if full:
        out["tiles"] = [{"tile": t, **_top(card(t))} for t in tiles]
    return out


#: the catalogue facts a view shows of each card, built once (an Ambition card's on first use:
#: ``engine.catalogue.install`` may add cards after this module is imported)
_CARD_VIEWS = {
    k: {"card": k, "name": c.name, "cost": c.cost, "kind": c.kind, "color": c.color}
    for k, c in CARDS.items()
}


def _card_view(k: str) -> dict[str, Any]:
    """A card's view; the Ambition cards ``catalogue.install`` adds later are built on first use."""
    v = _CARD_VIEWS.get(k)
    if v is None:
        c = CARDS[k]
        v = _CARD_VIEWS[k] = {
            "card": k,
            "name": c.name,
            "cost": c.cost,
            "kind": c.kind,
            "color": c.color,
        }
    return v


def _cards(keys: list[str]) -> list[dict[str, Any]]:
    return [dict(_card_view(k)) for k in keys]


def _dice(ds: list[int]) -> list[dict[str, Any]]:
    return [{"die": d, "color": color_of(d)} for d in ds]


def _public_side(p: PlayerState, screens_down: bool) -> dict[str, Any]:
    """A seat's tableau, dice and stacks as every other viewer sees them."""
    out: dict[str, Any] = {
        "seat": p.seat,
        "faction": {"number": p.faction, "name": FACTIONS[p.faction].name},
        "home_world": {"card": HOME_WORLDS[p.home].key, "name": HOME_WORLDS[p.home].name},
        "credits": p.credits,
        "vp_chips": p.vp,
        "cup": _dice(sorted(p.cup)),
        "citizenry": _dice(sorted(p.citizenry)),
        "developments": _cards(p.devs),
        "worlds": _cards(p.worlds),
        "goods": {w: _dice(g) for w, g in p.goods.items()},
        "tile_squares": p.tile_squares(),
        "construction": {
            "development": _stack(p.dev_stack, p.dev_dice, False, "development"),
            "world": _stack(p.world_stack, p.world_dice, False, "world"),
        },
        "dice_by_color": _by_color(p.owned_dice()),
        "pending": p.waiting or None,
        "resigned": dict(p.resigned) or None,
    }
    if screens_down:
        _screen(out, p)
        if p.talents:  # Ambition: unused talent counters, public once screens are lifted
            out["talents"] = len(p.talents)
    else:
        # dice only: talent counters are kept behind the screen during Assign (Ambition rulebook)
        out["behind_screen"] = sum(1 for c in p.columns for d in c if d < TALENT_BASE) + len(
            p.dictate
        )
    if p.start_tiles:
        out["start_tiles"] = [_tile(t) for t in p.start_tiles]
    return out


def _own_side(public: dict[str, Any], p: PlayerState, screens_down: bool) -> dict[str, Any]:
    """The seat's own view of itself: its public side plus what only it may see (every tile
    of its construction stacks, the dice behind its screen, the tiles it drew)."""
    out = dict(public)
    out["construction"] = {
        "development": _stack(p.dev_stack, p.dev_dice, True, "development"),
        "world": _stack(p.world_stack, p.world_dice, True, "world"),
    }
    if not screens_down:
        del out["behind_screen"]
        _screen(out, p)
    if p.talents:  # Ambition: the seat's own unused talent counters, behind its screen too
        out["talents"] = len(p.talents)
        out["talent_counters"] = p.talents[:]
    out["drawn"] = [_tile(t) for t in p.drawn]
    return out


def _screen(out: dict[str, Any], p: PlayerState) -> None:
    """What lies behind a seat's screen: its phase columns with faces, the phase it selected."""
    out["columns"] = {
        ph: [{"die": d, "color": color_of(d), "face": _face(p, d)} for d in p.columns[i]]
        for i, ph in enumerate(PHASES)
    }
    out["selected"] = PHASES[p.selected] if p.selected >= 0 else None
    out["selector"] = p.selector if p.selector >= 0 else None
    out["dictate"] = _dice(p.dictate)


def _face(p: PlayerState, d: int) -> str | None:
    f = p.faces.get(d)
    return None if f is None or d >= PHANTOM_BASE else DIE_FACES[d][f]


def _by_color(dice: list[int]) -> dict[str, int]:
    """How many real dice (no phantom workers) of each colour, colours in alphabetical order."""
    counts: dict[str, int] = {}
    for d in dice:
        if d < PHANTOM_BASE:
            c = color_of(d)
            counts[c] = counts.get(c, 0) + 1
    return dict(sorted(counts.items()))


def _common(state: GameState) -> dict[str, Any]:
    """What every viewer sees alike: the round, the step, the revealed phases, the supplies."""
    from .rng import commitment

    screens_down = state.step != "assign"
    out: dict[str, Any] = {
        "round": state.round,
        "step": state.step,
        "phases": [PHASES[i] for i in state.phases] if screens_down else [],
        "two_player_die": state.two_player_die,
        "vp_pool": state.vp_pool,
        "bag": len(state.bag),
        "abandoned": len(state.abandoned),
        "pending": {str(s): k for s, k in flow.pending(state).items()},
        "version": state.seq,
        "seed_commitment": commitment(state.seed, state.rules, state.game),
        "rules": state.rules,
    }
    if is_ambition(state.options):  # (absent in a base game, whose views stay as they were)
        out["ambition"] = True
    if state.objectives:  # Ambition: the face-up objective tiles and who claimed them (public)
        out["objectives"] = objectives.view(state)
    if state.step == "over":
        out["seed"] = state.seed
        out["result"] = {
            "reason": state.end_reason,
            "scores": state.scores,
            "winners": state.winners,
        }
    return out


def observe(state: GameState, viewer: Viewer = "public") -> dict[str, Any]:
    """The view of the game for ``viewer``: ``"public"``, a seat number, or ``"server"``."""
    screens_down = state.step != "assign"
    out = _common(state)
    out["players"] = []
    for p in state.players:
        public = _public_side(p, screens_down)
        own = viewer == "server" or viewer == p.seat
        out["players"].append(_own_side(public, p, screens_down) if own else public)
    if isinstance(viewer, int) and not isinstance(viewer, bool):
        out["seat"] = viewer
        out["decision"] = flow.legal(state, viewer)
    if viewer == "server":
        out["seed"] = state.seed
        out["bag_tiles"] = state.bag[:]
        out["abandoned_tiles"] = state.abandoned[:]
    return out


#: what ``observe_all`` may keep between calls on one game: seat -> (a copy of the seat's state,
#: whether screens were down, its public side, its own side)
SidesMemo = dict[int, tuple[PlayerState, bool, dict[str, Any], dict[str, Any]]]


def observe_all(state: GameState, memo: SidesMemo | None = None) -> dict[Viewer, dict[str, Any]]:
    """``observe`` for ``"public"`` and every seat at once (what the projections store).

    Each view equals ``observe(state, viewer)``; the parts they have in common (the shared
    fields, every other seat's public side) are built once and shared between the views, so
    treat the result as read-only. A seat's two sides depend on nothing but its own state and
    whether screens are down: with ``memo`` (a dict the caller keeps for one game and passes to
    each call) a seat whose state equals the one seen last time keeps the sides built then.
    """
    screens_down = state.step != "assign"
    common = _common(state)
    public: list[dict[str, Any]] = []
    own: list[dict[str, Any]] = []
    for p in state.players:
        seen = memo.get(p.seat) if memo is not None else None
        if seen is not None and seen[1] == screens_down and seen[0] == p:
            public.append(seen[2])
            own.append(seen[3])
            continue
        pub = _public_side(p, screens_down)
        public.append(pub)
        own.append(_own_side(pub, p, screens_down))
        if memo is not None:
            memo[p.seat] = (p.copy(), screens_down, pub, own[-1])
    views: dict[Viewer, dict[str, Any]] = {"public": {**common, "players": public}}
    for p in state.players:
        players = public[:]
        players[p.seat] = own[p.seat]
        views[p.seat] = {
            **common,
            "players": players,
            "seat": p.seat,
            "decision": flow.legal(state, p.seat),
        }
    return views
