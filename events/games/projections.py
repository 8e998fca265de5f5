"""The projections: what is rendered from a game's state and stored next to its events.

``render_views`` makes every projection of one state (the public view, each seat's part of its
view, the lobby summary) as JSON; ``seat_view`` puts a seat's whole view together from the stored
public view and its part; ``feed_item`` is one event as a viewer may see it (the engine's
``redact``). ``events.games.service`` renders the summary on every command and the other views when a game
is created, when it ends and when a reader asks for a version not rendered yet; the store keeps
each with the stream position it reflects.

Viewers: ``"public"``, a seat number, or ``"server"``.
"""

from __future__ import annotations

from typing import Any

import orjson

import engine
from engine.state import GameState
from events.envelope import Envelope, iso_utc
from events.games.time_control import Clocks

Viewer = int | str


def render_views(
    game_id: str,
    state: GameState,
    created_at: str,
    finished_at: str | None,
    clocks: Clocks | None = None,
    memo: dict[str, Any] | None = None,
) -> dict[str, str]:
    """Every projection of one state as JSON: the public view, each seat's part of its view
    (its own side, seat and decision: ``seat_view`` puts the whole view together from it and the
    public view, so an append carries each seat's public side once) and the lobby summary.

    ``clocks`` is the seats' time-control fold at this state (``events.games.time_control``); without it the
    clocks are taken as freshly started at ``created_at`` (right only for a new game). The public
    and seat views carry it as ``clock`` (deadlines are public). ``memo`` (an empty dict the
    caller keeps for one game and passes on each call) keeps what a seat whose state did not
    change can reuse: its sides (``engine.observe_all``) and their JSON; the output is the same.
    """
    if clocks is None:
        clocks = Clocks.for_table(state.table, len(state.players))
        clocks.apply(state, version=state.seq, ts=created_at, actor="system", seat=None)
    clock = clocks.to_view()
    sides = memo.setdefault("sides", {}) if memo is not None else None
    encoded_before = memo.setdefault("json", {}) if memo is not None else {}
    by_viewer = engine.observe_all(state, sides)
    if memo is not None:  # each seat's observe() of this state, for a bot deciding next
        memo["observed"] = (state, by_viewer)
    public = by_viewer.pop("public")
    # every seat's sides are encoded once and spliced into the views that show them
    shared = public["players"]
    encoded: list[orjson.Fragment] = []
    own: dict[int, orjson.Fragment] = {}
    for p in state.players:
        seat, view = p.seat, by_viewer[p.seat]
        pub, mine = shared[seat], view["players"][seat]
        before = encoded_before.get(seat)
        if before is None or before[0] is not pub or before[1] is not mine:
            before = (pub, mine, orjson.Fragment(view_json(pub)), orjson.Fragment(view_json(mine)))
            encoded_before[seat] = before
        encoded.append(before[2])
        own[seat] = before[3]
    views = {"public": view_json({**public, "players": encoded, "clock": clock})}
    # a seat's stored view holds only what the public view lacks; ``seat_view`` completes it
    for p in state.players:
        views[f"seat:{p.seat}"] = view_json(
            {"seat": p.seat, "player": own[p.seat], "decision": by_viewer[p.seat]["decision"]}
        )
    views["summary"] = view_json(summary(game_id, state, created_at, finished_at, clocks))
    return views


def render_summary(
    game_id: str,
    state: GameState,
    created_at: str,
    finished_at: str | None,
    clocks: Clocks | None = None,
) -> dict[str, str]:
    """Only the lobby summary of ``render_views`` (what every append writes)."""
    return {"summary": view_json(summary(game_id, state, created_at, finished_at, clocks))}


def seat_view(public: str, private: str) -> str:
    """A seat's whole view from the two stored projections: the public view with the seat's own
    side in its place among the players, and the seat and its decision (``engine.observe``'s
    view for that seat, plus the clock; the JSON ``render_views`` would write of it whole)."""
    view = orjson.loads(public)
    mine = orjson.loads(private)
    view["players"][mine["seat"]] = mine["player"]
    view["seat"] = mine["seat"]
    view["decision"] = mine["decision"]
    return view_json(view)


def view_json(obj: Any) -> str:
    """The JSON text of a projection: sorted keys, no spaces, UTF-8 (orjson; a rebuilt view is
    byte-identical to the live one because both are written by this function)."""
    return orjson.dumps(obj, option=orjson.OPT_SORT_KEYS).decode("utf-8")


def summary(
    game_id: str,
    state: GameState,
    created_at: str,
    finished_at: str | None,
    clocks: Clocks | None = None,
) -> dict[str, Any]:
    """The lobby projection of a game; its results say which seats timed out or were abandoned."""
    table = _table(state)
    seats = clocks.seats if clocks is not None else []
    deadlines = []
    if clocks is not None:
        deadlines = [d for s in seats if (d := clocks.deadline(s.seat)) is not None]
    return {
        "game_id": game_id,
        "status": "finished" if state.over else "active",
        "players": len(state.players),
        "seats": table.get("seats", [{"kind": "human"} for _ in state.players]),
        "options": state.options,
        "round": state.round,
        "version": state.seq,
        "created_at": created_at,
        "finished_at": finished_at,
        "winners": state.winners if state.over else None,
        "end_reason": state.end_reason,
        "timeouts": [s.timeouts_total for s in seats] or [0 for _ in state.players],
        "abandoned": [s.seat for s in seats if s.abandoned],
        "next_deadline": iso_utc(min(deadlines)) if deadlines else None,
    }


def _table(state: GameState) -> dict[str, Any]:
    return state.table


def feed_item(env: Envelope, viewer: Viewer) -> dict[str, Any]:
    event = env.event()
    visible = engine.redact(event, viewer) if env.visibility != "public" else event
    return {
        "seq": env.seq,
        "type": env.type,
        "actor": env.actor,
        "ts": env.ts,
        "command_id": env.command_id,
        "event": visible,
    }
