"""The projections: what is rendered from a game's state and stored next to its events.

``render_views`` makes every projection of one state as the API serves it: the public view, each
seat's whole view (``engine.observe_all`` with the clock, and what ``events.games.served`` adds:
running scores, display names, the decision's ``decision_id`` and ``help``, named bonuses) and the
lobby summary, each as canonical JSON (``engine.canonical``). Readers serve these bytes as they
are (``GET .../view``, the turn signal), splicing them whole into their answers with
``orjson.Fragment``: orjson is the one JSON library on the wire. ``feed_item`` is one event as a
viewer may see it (the engine's ``redact``). ``events.games.service`` renders the summary on every
command and the other views when a game is created, when it ends and when a reader asks for a
version not rendered yet; the store keeps each with the stream position it reflects.

The public and seat views are stored under names that carry ``VIEW_FORMAT`` (``view_name``), so
a view stored by code that rendered another shape is never read: the reader finds none under the
current name and renders it again from the game's events.

Viewers: ``"public"``, a seat number, or ``"server"``.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

import orjson

import engine
from engine.canonical import canonical_json
from engine.observe import SidesMemo
from engine.state import GameState
from events.envelope import Envelope, iso_utc
from events.games.served import named_bonuses, served_decision, served_side
from events.games.time_control import Clocks, from_challenge

Viewer = int | str

#: the shape of the stored public and seat views: a change to what ``render_views`` renders for
#: them takes the next number (1: a seat's view was its own side alone, and neither view carried
#: what ``events.games.served`` adds)
VIEW_FORMAT = 2


def view_name(viewer: Viewer) -> str:
    """The name ``viewer``'s view (``"public"`` or a seat number) is stored under:
    ``public@<format>`` or ``seat:<n>@<format>``."""
    base = "public" if viewer == "public" else f"seat:{viewer}"
    return f"{base}@{VIEW_FORMAT}"


@dataclass(frozen=True, slots=True)
class _Side:
    """One seat's two sides as ``engine.observe_all`` built them, served and encoded."""

    public: dict[str, Any]
    own: dict[str, Any]
    name: str | None
    public_json: orjson.Fragment
    own_json: orjson.Fragment


@dataclass
class ViewMemo:
    """What rendering one game's views reuses from one version to the next (the caller keeps
    one per game and passes it on each call; the output is the same without it)."""

    #: each seat's sides as ``engine.observe_all`` built them, for a seat whose state is unchanged
    sides: SidesMemo = field(default_factory=dict)
    #: each seat's sides as served and encoded, for sides ``observe_all`` kept
    encoded: dict[int, _Side] = field(default_factory=dict)
    #: the state last rendered and ``engine.observe`` of it for every viewer (read-only), for a
    #: bot deciding next (``GameService.observed``)
    observed: tuple[GameState, dict[Viewer, dict[str, Any]]] | None = None


def render_views(
    game_id: str,
    state: GameState,
    created_at: str,
    finished_at: str | None,
    clocks: Clocks | None = None,
    memo: ViewMemo | None = None,
    names: Mapping[int, str] | None = None,
) -> dict[str, str]:
    """Every projection of one state as JSON, by the name it is stored under: the public view and
    each seat's (``view_name``) and ``"summary"``.

    ``clocks`` is the seats' time-control fold at this state (``events.games.time_control``);
    without it the clocks are taken as freshly started at ``created_at`` (right only for a new
    game). The public and seat views carry it as ``clock`` (deadlines are public). ``names`` are
    the seats' display names. Each seat's side is served and encoded once, and spliced into every
    view that shows it.
    """
    if clocks is None:
        clocks = Clocks.for_table(state.table, len(state.players))
        clocks.apply(state, version=state.seq, ts=created_at, actor="system", seat=None)
    memo = memo if memo is not None else ViewMemo()
    names = names or {}
    by_viewer = engine.observe_all(state, memo.sides)
    memo.observed = (state, by_viewer)
    public = dict(by_viewer["public"], clock=clocks.to_view())
    if isinstance(public.get("result"), dict):
        public["result"] = named_bonuses(public["result"])
    sides: list[_Side] = []
    for p in state.players:
        pub, own, name = (
            public["players"][p.seat],
            by_viewer[p.seat]["players"][p.seat],
            names.get(p.seat),
        )
        side = memo.encoded.get(p.seat)
        if side is None or side.public is not pub or side.own is not own or side.name != name:
            side = _Side(
                pub,
                own,
                name,
                orjson.Fragment(canonical_json(served_side(pub, name))),
                orjson.Fragment(canonical_json(served_side(own, name))),
            )
            memo.encoded[p.seat] = side
        sides.append(side)
    shown = [s.public_json for s in sides]
    views = {view_name("public"): canonical_json({**public, "players": shown})}
    for p in state.players:
        players = shown[:]
        players[p.seat] = sides[p.seat].own_json
        decision = by_viewer[p.seat]["decision"]
        if decision is not None:
            decision = served_decision(decision, clocks.seats[p.seat].decision_id)
        views[view_name(p.seat)] = canonical_json(
            {**public, "players": players, "seat": p.seat, "decision": decision}
        )
    views["summary"] = canonical_json(summary(game_id, state, created_at, finished_at, clocks))
    return views


def render_summary(
    game_id: str,
    state: GameState,
    created_at: str,
    finished_at: str | None,
    clocks: Clocks | None = None,
) -> dict[str, str]:
    """Only the lobby summary of ``render_views`` (what every append writes)."""
    return {"summary": canonical_json(summary(game_id, state, created_at, finished_at, clocks))}


def summary(
    game_id: str,
    state: GameState,
    created_at: str,
    finished_at: str | None,
    clocks: Clocks | None = None,
) -> dict[str, Any]:
    """The lobby projection of a game; its results say which seats timed out or were abandoned,
    ``ladder`` the ladder it is played for (None: an unrated game)."""
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
        "away": [s.seat for s in seats if s.away],
        "bot_decisions": [s.bot_decisions for s in seats] or [0 for _ in state.players],
        "resigned": [p.seat for p in state.players if p.resigned],
        "next_deadline": iso_utc(min(deadlines)) if deadlines else None,
        "bot_pace_seconds": table.get("bot_pace_seconds") or 0,
        "challenge": from_challenge(table),
        "ladder": table.get("ladder"),
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
