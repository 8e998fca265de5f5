"""Replay steps: a finished game's view at any event of its log (``?at=N`` on
``GET /games/<id>/view`` and ``GET /games/<id>/seats/<n>/view``).

The view at event N is the log's first N events folded and rendered by the projections
(``GameService.view_at``): what a spectator, or that seat, read at that moment. It is served only once
the game is over - a game under way gives nothing this way, whoever asks - and a seat's view
only once every game dealt the same seed has ended (``events.games.seeds``: the export of the full log
waits for the same). Once the game is over its whole log is public, so a seat's view at a step
needs no token. N runs from 1 (the game's creation) to the game's last event; the answer says how
many events the log holds (``events``), so a viewer can step to the end.

Every step is folded from the start: a whole game folds and renders in a few milliseconds, and a
finished game never changes, so the answers may be cached.
"""

from __future__ import annotations

import json

import orjson
from flask import Response

from events.games.projections import Viewer
from events.games.seeds import withholds
from service.backend import backend
from service.errors import Problem
from service.http import etag, not_modified, not_modified_response, respond
from service.schemas.responses import SeatViewSchema, ViewSchema

_view = ViewSchema()
_seat_view = SeatViewSchema()


def step_view(game_id: str, viewer: Viewer, at: int) -> Response:
    """The answer to ``?at=<at>``: the view of ``viewer`` ("public" or a seat) at that event."""
    b = backend()
    _pos, text = b.games.view(game_id, "summary")
    summary = json.loads(text)
    if summary["status"] != "finished":
        raise Problem(
            "replay-unavailable",
            f"game {game_id} is still being played: a replay step (?at=) is given once it is "
            f"over; watch it live meanwhile (GET /games/{game_id}/view without ?at=)",
        )
    seat = viewer if isinstance(viewer, int) else None
    if seat is not None:
        players = int(summary["players"])
        if not 0 <= seat < players:
            raise Problem("not-found", f"game {game_id!r} has seats 0 to {players - 1}, not {seat}")
        if b.games.holds.running(game_id):
            raise Problem(
                "replay-unavailable",
                f"game {game_id} is over, but other games dealt the same seed are still being "
                "played: each seat's replay comes when they have ended (the public replay is "
                "available now: drop the seat from the path)",
            )
    events = int(summary["version"])
    if at > events:
        raise Problem(
            "invalid-parameters",
            f"at: the log of game {game_id} has {events} events; give at from 1 to {events}",
            errors={"at": [f"must be between 1 and {events}, the log's length"]},
        )
    if not_modified(at):
        return not_modified_response(at)
    text = b.games.view_at(game_id, at, viewer)
    # a finished game never changes; only a seed held back at the last step comes later
    headers = (
        {"Cache-Control": "no-store"}
        if withholds(text)
        else {"ETag": etag(at), "Cache-Control": "public, max-age=60"}
    )
    view = orjson.Fragment(text)  # the view as rendered, served as it is
    body = {"game_id": game_id, "version": at, "at": at, "events": events, "view": view}
    if seat is None:
        return respond(_view, body, headers=headers, dumped=True)
    return respond(_seat_view, dict(body, seat=seat), headers=headers, dumped=True)
