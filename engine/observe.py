"""What each viewer may see: ``observe(state, viewer)`` and ``redact(event, viewer)``.

Viewers: ``"public"`` (spectators), a seat number, or ``"server"`` (everything). Secret: dice behind
screens until Reveal (faces, columns, the selected phase), tiles below the top of each construction
stack, tiles abandoned during Explore, the bag's contents, and the seed until the game ends.

Events that carry secrets name their owner seat and hold, under ``public``, the part anybody may
see; ``redact`` gives other viewers exactly that part. Projections and feeds use only these two
functions.
"""

from __future__ import annotations

from collections import Counter
from typing import Any

from . import flow
from .catalogue import CARDS, FACTIONS, HOME_WORLDS, PHASES, color_of, dev_card, world_card
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


def visibility(event: dict[str, Any]) -> str:
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


def _stack(tiles: list[int], dice: list[int], full: bool, side: str) -> dict[str, Any]:
    card = dev_card if side == "development" else world_card
    out: dict[str, Any] = {
        "count": len(tiles),
        "top": None
        if not tiles
        else {
            "tile": tiles[0],
            "card": card(tiles[0]).key,
            "name": card(tiles[0]).name,
            "cost": card(tiles[0]).cost,
        },
        "dice": [{"die": d, "color": color_of(d)} for d in dice],
    }
    if full:
        out["tiles"] = [
            {"tile": t, "card": card(t).key, "name": card(t).name, "cost": card(t).cost}
            for t in tiles
        ]
    return out


def _cards(keys: list[str]) -> list[dict[str, Any]]:
    return [{"card": k, "name": CARDS[k].name, "cost": CARDS[k].cost, "kind": CARDS[k].kind,
             "color": CARDS[k].color} for k in keys]  # fmt: skip


def _dice(ds: list[int]) -> list[dict[str, Any]]:
    return [{"die": d, "color": color_of(d)} for d in ds]


def _player(state: GameState, p: PlayerState, own: bool, screens_down: bool) -> dict[str, Any]:
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
            "development": _stack(p.dev_stack, p.dev_dice, own, "development"),
            "world": _stack(p.world_stack, p.world_dice, own, "world"),
        },
        "dice_by_color": dict(
            sorted(Counter(color_of(d) for d in p.owned_dice() if d < 1000).items())
        ),
        "pending": p.waiting or None,
    }
    if own or screens_down:
        out["columns"] = {ph: [{"die": d, "color": color_of(d), "face": _face(p, d)} for d in p.columns[i]]
                          for i, ph in enumerate(PHASES)}  # fmt: skip
        out["selected"] = PHASES[p.selected] if p.selected >= 0 else None
        out["selector"] = p.selector if p.selector >= 0 else None
        out["dictate"] = _dice(p.dictate)
    else:
        out["behind_screen"] = sum(len(c) for c in p.columns) + len(p.dictate)
    if own:
        out["drawn"] = [_tile(t) for t in p.drawn]
        if p.start_tiles:
            out["start_tiles"] = [_tile(t) for t in p.start_tiles]
    elif p.start_tiles:
        out["start_tiles"] = [_tile(t) for t in p.start_tiles]
    return out


def _face(p: PlayerState, d: int) -> str | None:
    from .catalogue import DIE_FACES

    f = p.faces.get(d)
    return None if f is None or d >= 1000 else DIE_FACES[d][f]


def observe(state: GameState, viewer: Viewer = "public") -> dict[str, Any]:
    """The view of the game for ``viewer``: ``"public"``, a seat number, or ``"server"``."""
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
        "players": [
            _player(state, p, viewer == "server" or viewer == p.seat, screens_down)
            for p in state.players
        ],
    }
    from .rng import seed_hash

    out["seed_sha256"] = seed_hash(state.seed)
    if state.step == "over":
        out["seed"] = state.seed
        out["result"] = {
            "reason": state.end_reason,
            "scores": state.scores,
            "winners": state.winners,
        }
    if isinstance(viewer, int) and not isinstance(viewer, bool):
        out["seat"] = viewer
        out["decision"] = flow.legal(state, viewer)
    if viewer == "server":
        out["seed"] = state.seed
        out["bag_tiles"] = state.bag[:]
        out["abandoned_tiles"] = state.abandoned[:]
    return out
