"""A structural check that a view or a redacted event leaks nothing the rules hide."""

from __future__ import annotations

import re
from typing import Any

from engine.catalogue import TALENT_BASE
from engine.state import GameState

_CARD = re.compile(r"^T(\d+)[dw]$")


def tile_refs(obj: Any) -> set[int]:
    """Every game tile a JSON value names: values under 'tile' keys and card keys like T12d."""
    out: set[int] = set()
    if isinstance(obj, dict):
        for k, v in obj.items():
            if (
                k in ("tile", "development", "world")
                and isinstance(v, int)
                and not isinstance(v, bool)
            ):
                out.add(v)
            m = _CARD.match(k)
            if m:
                out.add(int(m.group(1)))
            out |= tile_refs(v)
    elif isinstance(obj, list):
        for v in obj:
            out |= tile_refs(v)
    elif isinstance(obj, str):
        m = _CARD.match(obj)
        if m:
            out.add(int(m.group(1)))
    return out


def hidden_tiles(state: GameState, viewer: int | str) -> set[int]:
    """Tiles the viewer may not know: below the top of other seats' stacks, drawn and unplaced by
    others, in the bag, abandoned this phase."""
    out = set(state.bag) | set(state.abandoned)
    for p in state.players:
        if p.seat == viewer:
            continue
        out |= set(p.dev_stack[1:]) | set(p.world_stack[1:]) | set(p.drawn)
    return out


def check_view(state: GameState, viewer: int | str, view: dict[str, Any]) -> None:
    leaked = tile_refs(view) & hidden_tiles(state, viewer)
    assert not leaked, f"viewer {viewer} sees hidden tiles {sorted(leaked)} at event {state.seq}"
    if not state.over:
        assert "seed" not in view, f"viewer {viewer} sees the seed before the end"
    if state.step == "assign":
        for p in view["players"]:
            if p["seat"] != viewer:
                assert "columns" not in p and "selected" not in p, (
                    f"viewer {viewer} sees seat {p['seat']}'s dice"
                )
                # Ambition: "During the Assign step, players keep any Talent counters owned
                # behind their screens": neither how many nor where they are put to work
                assert "talents" not in p and "talent_counters" not in p, (
                    f"viewer {viewer} sees seat {p['seat']}'s talent counters during Assign"
                )
                own = state.players[p["seat"]]
                dice = sum(1 for c in own.columns for d in c if d < TALENT_BASE)
                assert p["behind_screen"] == dice + len(own.dictate), (
                    f"viewer {viewer} can count seat {p['seat']}'s talent workers"
                )


def check_event(state: GameState, viewer: int | str, event: dict[str, Any]) -> None:
    """A redacted event, right after it was folded into ``state``.

    A seat's own events may name tiles it just abandoned or returned to the bag: it knows them.
    """
    own = event.get("seat") == viewer and viewer != "public"
    leaked = set() if own else tile_refs(event) & hidden_tiles(state, viewer)
    assert not leaked, f"viewer {viewer} sees hidden tiles {sorted(leaked)} in {event['type']}"
    if (
        event["type"] in ("DiceRolled", "AssignmentSealed", "CommandSubmitted")
        and event.get("seat") != viewer
    ):
        for secret in ("faces", "columns", "command", "selected", "dictate", "talents"):
            assert secret not in event, f"viewer {viewer} sees {secret} of seat {event['seat']}"
    if event["type"] == "GameCreated":
        assert "seed" not in event
