"""Game logs: export (JSON Lines) and replay verification.

* ``GET /games/<id>/log`` - once the game is over, the full log (hash-chained envelopes, seed
  included) for anyone; while it is live, the public redacted feed. The admin token gets the full
  log at any time.
* ``GET /games/<id>/seats/<n>/log`` - the seat's own redacted log while live; the full log after.
* ``POST /replays/verify`` - upload a log (the export above or ``rfg simulate --export``); the
  answer is the verdict ``rfg replay`` gives (``events.replay.verify_text``).
"""

from __future__ import annotations

import logging

from flask import Blueprint, Response, current_app, request

from events.games import Viewer
from events.replay import Verdict, verify_text
from service.auth import bearer_token, is_admin, require_seat
from service.backend import backend
from service.errors import Problem
from service.http import load_query, respond
from service.schemas.requests import EmptyQuerySchema
from service.schemas.responses import VerdictSchema

bp = Blueprint("logs", __name__)
_empty = EmptyQuerySchema()
_verdict = VerdictSchema()
NDJSON = "application/x-ndjson"
LOG_TYPES = (NDJSON, "application/jsonl", "application/x-jsonlines", "text/plain")
log = logging.getLogger(__name__)


def _export(game_id: str, viewer: Viewer) -> Response:
    lines = backend().games.export(game_id, viewer)
    full = bool(lines) and '"hash"' in lines[0] and '"payload"' in lines[0]
    resp = Response("".join(line + "\n" for line in lines), mimetype=NDJSON)
    resp.headers["Content-Disposition"] = f'attachment; filename="game-{game_id}.jsonl"'
    resp.headers["Log-Kind"] = "full" if full else "redacted"
    resp.headers["Cache-Control"] = "no-cache" if not full else "public, max-age=60"
    return resp


@bp.get("/games/<gid:game_id>/log")
def public_log(game_id: str) -> Response:
    load_query(_empty)
    token = bearer_token()
    if token and is_admin(token):
        resp = _export(game_id, "server")
        resp.headers["Cache-Control"] = "no-store"
        return resp
    return _export(game_id, "public")


@bp.get("/games/<gid:game_id>/seats/<int:seat>/log")
def seat_log(game_id: str, seat: int) -> Response:
    load_query(_empty)
    require_seat(game_id, seat)
    resp = _export(game_id, seat)
    resp.headers["Cache-Control"] = "private, no-cache"
    return resp


@bp.post("/replays/verify")
def verify() -> Response:
    load_query(_empty)
    request.max_content_length = int(current_app.config["REPLAY_MAX_BYTES"])
    raw = request.get_data(cache=False)  # 413 past the limit
    if request.mimetype not in LOG_TYPES:
        raise Problem("unsupported-media-type",
                      f"send the log as JSON Lines with Content-Type: {NDJSON} (or text/plain), "
                      f"not {request.mimetype or 'none'!r}")  # fmt: skip
    try:
        text = raw.decode("utf-8")
    except UnicodeDecodeError:
        raise Problem("malformed-request", "the log is not UTF-8 text") from None
    try:
        verdict = verify_text(text)
    except Exception as exc:  # noqa: BLE001 - a log the verifier trips on is a failed verification
        log.warning("replay verifier raised %s on an uploaded log", type(exc).__name__, exc_info=True)
        verdict = Verdict(False, reason=f"the log cannot be verified: {type(exc).__name__}: {exc}")
    return respond(_verdict, verdict.to_dict())
