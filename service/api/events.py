"""The event feed of a game, redacted for the viewer by the engine (``GameService.feed``):

* ``GET /games/<id>/events`` and ``.../events/stream`` - what spectators may see;
* ``GET /games/<id>/seats/<n>/events`` and ``.../events/stream`` - what seat n may see
  (its seat token).

``events`` pages with ``after`` (the last seq the client has) and ``limit``; ``stream`` is
Server-Sent Events (see ``service.sse``), resuming after ``Last-Event-ID`` (or ``after``); a
seat's stream also carries the turn signal (``event: decision``, ``turn_signal``).
"""

from __future__ import annotations

import re
from collections.abc import Callable
from typing import Any

import orjson
from flask import Blueprint, Response, current_app, request

from events.errors import GameNotFound
from events.games.projections import Viewer
from events.games.service import GameService
from service import limits
from service.auth import credential_check, require_seat
from service.backend import backend
from service.errors import Problem
from service.http import load_query, respond
from service.players import game_players
from service.schemas.requests import MAX_SEQ, FeedQuerySchema, StreamQuerySchema
from service.schemas.responses import FeedSchema
from service.sse import GameFeed, TurnReader, response, serve

bp = Blueprint("events", __name__)
_feed_q = FeedQuerySchema()
_stream_q = StreamQuerySchema()
_feed_schema = FeedSchema()


def _viewer_name(viewer: Viewer) -> str:
    return viewer if isinstance(viewer, str) else f"seat:{viewer}"


def _feed(game_id: str, viewer: Viewer) -> Response:
    q = load_query(_feed_q)
    after, limit = q["after"], q["limit"]
    items = backend().games.feed(game_id, viewer, after=after, limit=limit + 1)
    more = len(items) > limit
    items = items[:limit]
    body = {
        "game_id": game_id,
        "viewer": _viewer_name(viewer),
        "events": items,
        "next_after": items[-1]["seq"] if items else after,
        "more": more,
    }
    return respond(_feed_schema, body, headers={"Cache-Control": "no-cache"})


def turn_signal(
    games: GameService,
    game_id: str,
    seat: int,
    players: Callable[[], list[dict[str, Any]]] | None = None,
) -> TurnReader:
    """The reader of a seat stream's turn signal: one read of the seat's view (``GameService.view``,
    the stored bytes ``GET .../seats/{n}/view`` serves) -> (its ``decision_id``, the view's game
    version, the signal's data: the decision the seat owes, its id, deadline, links, the view
    itself, spliced in as it is stored, and the table's ``players`` with names and ratings,
    ``service.players``), or None when it owes nothing. ``players`` is read once per stream, at its first signal."""
    table: list[list[dict[str, Any]]] = []

    def read() -> tuple[int, int, bytes] | None:
        version, text = games.view(game_id, seat)
        view = orjson.loads(text)
        decision = view.get("decision")
        if not isinstance(decision, dict) or decision.get("decision_id") is None:
            return None
        clock: dict[str, Any] = next(
            (c for c in (view.get("clock") or {}).get("seats") or [] if c.get("seat") == seat),
            {},
        )
        data = {
            "game_id": game_id,
            "seat": seat,
            "kind": decision["kind"],
            "decision_id": decision["decision_id"],
            "game_version": version,
            "deadline": clock.get("deadline"),
            "decision": decision,
            "players": _players(),
            "view": orjson.Fragment(text),
            "links": {
                "view": f"/games/{game_id}/seats/{seat}/view",
                "commands": f"/games/{game_id}/seats/{seat}/commands",
            },
        }
        return int(decision["decision_id"]), version, orjson.dumps(data)

    def _players() -> list[dict[str, Any]]:
        if not table:
            table.append(players() if players is not None else [])
        return table[0]

    return read


def _opening(game_id: str) -> tuple[int, str]:
    """A stream's first step (``limits.CHECKED_IN_VIEW``): its limits, 429 when one refuses,
    and the game's summary (``GameService.view``'s ``"summary"``: 404 for an unknown game),
    read in the round trip that counts them."""
    store = backend().store
    read = store.view_read(game_id, "summary")
    summary = limits.check(read) if limits.limits() is not None else read.run()
    if summary is None:
        raise GameNotFound(game_id)
    return summary


def _stream(game_id: str, viewer: Viewer, summary: tuple[int, str]) -> Response:
    q = load_query(_stream_q)
    # a seat stream ends once its token is revoked (bot) or rotated (seat)
    allowed = credential_check(game_id, viewer) if isinstance(viewer, int) else None
    after = q["after"]
    last_id = request.headers.get("Last-Event-ID")
    if last_id is not None and last_id.strip():
        if not re.fullmatch(r"[0-9]{1,19}", last_id.strip()) or int(last_id.strip()) > MAX_SEQ:
            raise Problem(
                "malformed-request",
                f"Last-Event-ID must be the seq of an event (an integer), not {last_id!r}",
            )
        after = int(last_id.strip())
    b = backend()
    pos, text = summary
    finished = orjson.loads(text).get("status") == "finished"
    cfg = current_app.config
    assert b.pages is not None
    feed = GameFeed(
        b.pages,
        b.store,
        game_id,
        viewer,
        after,
        finished=finished,
        version=pos,
        turn=(
            turn_signal(b.games, game_id, viewer, lambda: game_players(b, orjson.loads(text)))
            if isinstance(viewer, int)
            else None
        ),
    )
    gen = serve(
        feed,
        max_seconds=float(cfg["SSE_MAX_SECONDS"]),
        keepalive=float(cfg["SSE_KEEPALIVE_SECONDS"]),
        allowed=allowed,
        name=game_id,
    )
    return response(gen)


@bp.get("/games/<gid:game_id>/events")
def public_feed(game_id: str) -> Response:
    return _feed(game_id, "public")


@bp.get("/games/<gid:game_id>/events/stream")
def public_stream(game_id: str) -> Response:
    return _stream(game_id, "public", _opening(game_id))


@bp.get("/games/<gid:game_id>/seats/<int:seat>/events")
def seat_feed(game_id: str, seat: int) -> Response:
    require_seat(game_id, seat)
    return _feed(game_id, seat)


@bp.get("/games/<gid:game_id>/seats/<int:seat>/events/stream")
def seat_stream(game_id: str, seat: int) -> Response:
    summary = _opening(game_id)
    require_seat(game_id, seat)
    return _stream(game_id, seat, summary)
