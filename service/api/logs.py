"""Game logs: export (JSON Lines) and replay verification.

* ``GET /games/<id>/log`` - once the game is over, the full log (hash-chained envelopes, seed
  included) for anyone; while it is live, the public redacted feed. The admin token gets the full
  log at any time. A finished game of a duplicate set that still runs (``events.games.seeds``): the
  public feed under a ``seed_withheld`` line, ``Log-Kind: withheld``, until the set has ended.
* ``GET /games/<id>/seats/<n>/log`` - the seat's own redacted log while live; the full log after.
* ``POST /replays/verify`` - upload a log (the export above or ``rfg simulate --export``); the
  answer is the verdict ``rfg replay --key <this server's key>`` gives (``events.verify.replay``), with
  one difference and one field more. This server vouches only for what it signed: a log without
  its signature is never ``ok`` (a bare engine log, which ``rfg replay`` accepts, is
  ``not-authentic`` here: anyone can write a consistent, complete log for any seed), and
  ``origin`` says where the log comes from: ``this-server``, ``unsigned``, ``other`` (a
  signature, not this server's over this log) or ``unknown`` (it failed before its signature
  was looked at). The upload is verified as it streams in.

Full logs end with the server's signature line (``events.verify.signing``); the key is at
``GET /signing-key``.
"""

from __future__ import annotations

import logging
from collections.abc import Iterable, Iterator
from typing import Any

import orjson
from flask import Blueprint, Response, current_app, request

from events.games.projections import Viewer
from events.games.seeds import is_withheld
from events.verify.replay import Verdict, verify_stream
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
    b = backend()
    lines = b.games.export(game_id, viewer, b.signer)
    full = bool(lines) and '"hash"' in lines[0] and '"payload"' in lines[0]
    resp = Response("".join(line + "\n" for line in lines), mimetype=NDJSON)
    resp.headers["Content-Disposition"] = f'attachment; filename="game-{game_id}.jsonl"'
    resp.headers["Log-Kind"] = "full" if full else "withheld" if is_withheld(lines) else "redacted"
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


def _upload(limit: int) -> Iterator[bytes]:
    """The request body in pieces, refusing (413) past ``limit`` bytes whatever its framing."""
    seen = 0
    stream = request.stream
    while True:
        chunk = stream.read(64 * 1024)
        if not chunk:
            return
        seen += len(chunk)
        if seen > limit:
            raise Problem(
                "payload-too-large",
                max_bytes=limit,
                detail=f"the log is larger than {limit} bytes; this server verifies "
                "logs up to that size (rfg replay has no such limit)",
            )
        yield chunk


class _Tail:
    """The last few KiB of an upload as it passes to the verifier: enough to tell whether the
    log ends with a signature line (one a few hundred bytes long, always the last)."""

    KEEP = 16 * 1024

    def __init__(self, chunks: Iterable[bytes]) -> None:
        self.chunks, self.tail, self.whole = chunks, b"", True

    def __iter__(self) -> Iterator[bytes]:
        for chunk in self.chunks:
            joined = self.tail + chunk
            if len(joined) > self.KEEP:
                joined, self.whole = joined[-self.KEEP :], False
            self.tail = joined
            yield chunk

    def signed(self) -> bool:
        """Whether the last line is a signature record (``{"signature": {...}}``)."""
        lines = self.tail.rstrip().split(b"\n")
        if len(lines) == 1 and not self.whole:
            return False  # a last line longer than what is kept: not a signature record
        try:
            last = orjson.loads(lines[-1])
        except orjson.JSONDecodeError:
            return False
        return isinstance(last, dict) and set(last) == {"signature"}


UNSIGNED = (
    "not signed: this log carries no signature (a bare engine log, as rfg simulate --export "
    "writes, never does), so nothing shows that this server played this game; anyone can write "
    "a consistent, complete log for any seed"
)


def _answer(verdict: Verdict, signed: bool) -> dict[str, Any]:
    """The API's verdict: ``ok`` only for a log this server signed, and where the log comes from
    (``origin``)."""
    out = verdict.to_dict()
    if not (out["consistent"] and out["complete"]):
        out["origin"] = "unknown"  # failed before its end: its signature was not looked at
    elif out["authentic"] is True:
        out["origin"] = "this-server"
    elif signed:
        out["origin"] = "other"
    else:
        out["origin"] = "unsigned"
        if out["authentic"] is None:  # a bare engine log: rfg replay's ok, not this server's
            out.update(ok=False, verdict="not-authentic", authentic=False, authenticity=UNSIGNED)
            out["reason"] = UNSIGNED
    return out


@bp.post("/replays/verify")
def verify() -> Response:
    load_query(_empty)
    limit = int(current_app.config["REPLAY_MAX_BYTES"])
    if request.content_length is not None and request.content_length > limit:
        raise Problem(
            "payload-too-large",
            max_bytes=limit,
            detail=f"the log is larger than {limit} bytes; this server verifies "
            "logs up to that size (rfg replay has no such limit)",
        )
    if request.mimetype not in LOG_TYPES:
        raise Problem(
            "unsupported-media-type",
            f"send the log as JSON Lines with Content-Type: {NDJSON} (or text/plain), "
            f"not {request.mimetype or 'none'!r}",
        )
    charset = request.mimetype_params.get("charset", "utf-8").lower()
    if charset not in ("utf-8", "utf8"):
        raise Problem("unsupported-media-type", f"send the log as UTF-8 (charset={charset} given)")
    b = backend()
    key = b.signer.public if b.signer is not None else None
    upload = _Tail(_upload(limit))
    try:
        verdict = verify_stream(upload, key, require_signature=True)
    except Problem:
        raise
    except Exception as exc:  # noqa: BLE001 - a log the verifier trips on is a failed verification
        log.warning(
            "replay verifier raised %s on an uploaded log", type(exc).__name__, exc_info=True
        )
        verdict = Verdict(False, reason=f"the log cannot be verified: {type(exc).__name__}: {exc}")
    return respond(_verdict, _answer(verdict, upload.signed()))
