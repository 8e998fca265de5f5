"""Every error of the API as RFC 9457 ``application/problem+json``.

``Problem`` is the one exception views raise; ``init_app`` installs handlers that turn it, the
engine's ``IllegalCommand``, the store's ``ConcurrencyConflict`` / ``GameNotFound``, marshmallow's
``ValidationError``, every werkzeug ``HTTPException`` (404, 405, 413, ...) and any unexpected
exception into the same shape: ``type``, ``title``, ``status``, ``detail`` (what to do next),
``instance`` (the request path), plus extension members (``code``/``field``/``value`` for an
illegal command, ``errors`` for an invalid request, ``current_version`` for a conflict).

Problem types are relative URIs ``/problems/<slug>``; ``GET /problems/<slug>`` documents each.
"""

from __future__ import annotations

import json
import logging
from dataclasses import dataclass
from typing import Any

from flask import Flask, Response, request
from marshmallow import ValidationError
from werkzeug.exceptions import HTTPException

import engine
from events.errors import DecisionChanged
from events.store import ConcurrencyConflict, GameNotFound, outage
from events.store.outage import describe, refusal
from service.schemas.responses import ProblemSchema

PROBLEM_JSON = "application/problem+json"
#: seconds a client is told to wait (Retry-After) while the event store is unreachable
STORE_RETRY_AFTER = 2
log = logging.getLogger(__name__)


@dataclass(frozen=True)
class ProblemType:
    slug: str
    title: str
    status: int
    description: str

    @property
    def uri(self) -> str:
        return f"/problems/{self.slug}"


_TYPES = [
    ProblemType(
        "malformed-request",
        "Malformed request",
        400,
        "The body is not valid JSON (or not UTF-8), or a header is malformed. Fix the "
        "syntax and send the request again.",
    ),
    ProblemType(
        "invalid-parameters",
        "Invalid query parameters",
        400,
        "A query parameter is unknown, of the wrong type or out of range; 'errors' maps "
        "each parameter to what is wrong.",
    ),
    ProblemType(
        "unauthorized",
        "Authentication required",
        401,
        "This endpoint needs 'Authorization: Bearer <token>': the seat token that "
        "POST /games/{game_id}/seats/{seat}/claim returned (or the admin token).",
    ),
    ProblemType(
        "forbidden",
        "Not allowed",
        403,
        "The token is valid but does not allow this: a seat token reads and acts only "
        "for its own seat, a bot token only in the seats a ladder gave its account and only "
        "its own account; choosing a seed, creating ladders and adding entrants need the "
        "admin token.",
    ),
    ProblemType(
        "not-found",
        "Not found",
        404,
        "No such resource: check the path, the game id (GET /games lists games) and "
        "the seat number (0 to players-1).",
    ),
    ProblemType(
        "method-not-allowed",
        "Method not allowed",
        405,
        "The path exists but not with this method; the Allow header lists the methods it accepts.",
    ),
    ProblemType(
        "not-acceptable",
        "Not acceptable",
        406,
        "The server cannot answer in a media type the Accept header allows.",
    ),
    ProblemType(
        "version-conflict",
        "Version conflict",
        409,
        "The game moved on since the version you sent (If-Match or expected_version); "
        "nothing was stored. 'current_version' is the game's version: read the seat "
        "view again, decide on its decision and send a new command with that version.",
    ),
    ProblemType(
        "decision-changed",
        "Decision changed",
        409,
        "The command named its seat's decision by 'decision_id', and the seat no longer "
        "owes that decision: it was answered already (perhaps by another command id) or "
        "the game moved the seat on; nothing was stored. 'current_decision_id' is the "
        "seat's decision now (null: none; wait for the other seats): read the seat view "
        "again, decide on its 'decision' and send a new command with that decision_id.",
    ),
    ProblemType(
        "abort-unavailable",
        "Abort not available",
        409,
        "The game cannot be aborted: only a game made from a challenge can be, and only "
        "until its first round ends ('code': not_from_challenge, too_late, or game_over when "
        "it is over already); nothing was stored. To leave a game under way, resign "
        "(POST /games/{game_id}/seats/{seat}/resign).",
    ),
    ProblemType(
        "back-unavailable",
        "Not away",
        409,
        "The seat is not away, so there is nothing to come back from: it was never away or "
        "came back already (code not_away: answer its decision, GET "
        "/games/{game_id}/seats/{seat}/view), a bot took it for good (handed_over: the table "
        "was created with hand_over: true), or the game is over (game_over); nothing was "
        "stored.",
    ),
    ProblemType(
        "seat-unavailable",
        "Seat unavailable",
        409,
        "The seat cannot be claimed: it was claimed already, a bot plays it, the "
        "game is over, or its invite or move link was used already or expired. Pick another "
        "seat (GET /games/{game_id} lists the seats), or ask for a new link: the host for an "
        "invite, the device that holds the seat for a move link.",
    ),
    ProblemType(
        "replay-unavailable",
        "Replay not available yet",
        409,
        "A replay step (?at=N) is served only for a finished game, and a seat's replay "
        "only once every game dealt the same seed (a duplicate set) has ended: nothing of a "
        "game under way is given this way. Watch the live view meanwhile "
        "(GET /games/{game_id}/view) and come back when the game is over.",
    ),
    ProblemType(
        "ladder-conflict",
        "Ladder conflict",
        409,
        "The ladder or entrant exists already (names are unique), or the ladder cannot "
        "take this entrant; 'detail' says which. Pick another name.",
    ),
    ProblemType(
        "request-timeout",
        "Request timeout",
        408,
        "The request body did not arrive in time (BODY_READ_SECONDS, plus a second per "
        "32 KiB announced); nothing was done. Send the whole body right after the head.",
    ),
    ProblemType(
        "payload-too-large",
        "Payload too large",
        413,
        "The body exceeds the limit given in 'max_bytes'; send a smaller one.",
    ),
    ProblemType(
        "unsupported-media-type",
        "Unsupported media type",
        415,
        "Send the body with the Content-Type this endpoint documents "
        "(application/json for JSON bodies).",
    ),
    ProblemType(
        "rate-limited",
        "Too many requests",
        429,
        "A limit against abuse was reached: too many requests of this kind from this "
        "address or token, too many open streams, or too many refused tokens. 'limit' "
        "names it; wait the Retry-After header's seconds (also in 'retry_after') before "
        "trying again. The RateLimit and RateLimit-Policy headers of every answer say "
        "how much is left.",
    ),
    ProblemType(
        "too-many-open-games",
        "Too many open games",
        429,
        "This address has as many unfinished games as the server allows: play or finish "
        "one (games nobody claimed expire after a while without a command) before "
        "creating another.",
    ),
    ProblemType(
        "invalid-request",
        "Invalid request body",
        422,
        "The JSON body does not match the endpoint's schema: 'errors' maps each "
        "offending field (dotted path) to what is wrong. Unknown fields are refused.",
    ),
    ProblemType(
        "ambition-unavailable",
        "Ambition unavailable",
        422,
        "The table asks for the Ambition expansion and this server has no Ambition component "
        "file: the Leader and Entrepreneur die faces and the objective tiles are not shipped "
        "with the server. The host supplies them in a component file named by "
        "RFG_AMBITION_COMPONENTS (docs/ambition.md) and restarts the server; until then, "
        "leave out expansions to play the base game.",
    ),
    ProblemType(
        "illegal-command",
        "Illegal command",
        422,
        "The rules do not allow this command now; nothing was stored. 'code' is the "
        "engine's reason, 'field' the offending part of the command and 'value' its "
        "value. The seat view's 'decision' lists the legal choices.",
    ),
    ProblemType(
        "idempotency-key-reused",
        "Command id reused",
        422,
        "This command id was already used by this seat for a different command; a "
        "retry must resend the identical command. Use a new command id for a new "
        "command.",
    ),
    ProblemType(
        "http-error", "HTTP error", 400, "The request cannot be served as sent; 'detail' says why."
    ),
    ProblemType(
        "internal-error",
        "Internal server error",
        500,
        "The server failed; nothing about the request was wrong. Retrying with the "
        "same command id is safe.",
    ),
    ProblemType(
        "not-ready",
        "Service not ready",
        503,
        "The event store (Redis) cannot be reached or refuses writes (full, a read-only "
        "replica, failing to write its disk, too few replicas); 'detail' says which. Retry "
        "later.",
    ),
    ProblemType(
        "store-unavailable",
        "Event store unavailable",
        503,
        "The event store (Redis) is down, restarting or too slow to answer, or it refuses "
        "writes for now (full, a read-only replica, failing to write its disk, too few "
        "replicas: 'detail' says which); nothing about the request was wrong. Retry after "
        "the Retry-After header's seconds. A command may or may not have been stored: "
        "resend it with the same command id and it is applied at most once; a game "
        "creation, with the same Idempotency-Key.",
    ),
    ProblemType(
        "server-busy",
        "Server busy",
        503,
        "This server is opening more event streams than it takes at once (a crowd "
        "reconnecting); nothing about the request was wrong. Reconnect after the Retry-After "
        "header's seconds.",
    ),
    ProblemType(
        "idempotency-key-mismatch",
        "Idempotency key reused",
        422,
        "This Idempotency-Key was used by this client (token, else address) for a "
        "different request body within the time keys are remembered; a retry must resend "
        "the identical body. Use a new key for a new game.",
    ),
]
PROBLEM_TYPES: dict[str, ProblemType] = {t.slug: t for t in _TYPES}
_BY_STATUS: dict[int, ProblemType] = {}
for _t in _TYPES:
    if _t.slug != "http-error":
        _BY_STATUS.setdefault(_t.status, _t)

_schema = ProblemSchema()


class Problem(Exception):
    """An error answered as problem+json: ``Problem("not-found", "game 'x' does not exist")``."""

    def __init__(
        self,
        slug: str,
        detail: str,
        status: int | None = None,
        headers: dict[str, str] | None = None,
        **extensions: Any,
    ) -> None:
        super().__init__(detail)
        self.type = PROBLEM_TYPES[slug]
        self.detail = detail
        self.status = status or self.type.status
        self.headers = headers or {}
        self.extensions = extensions


def problem_response(p: Problem) -> Response:
    body: dict[str, Any] = {
        "type": p.type.uri,
        "title": p.type.title,
        "status": p.status,
        "detail": p.detail,
        "instance": request.path,
        **p.extensions,
    }
    resp = Response(
        json.dumps(_schema.dump(body), default=str), status=p.status, mimetype=PROBLEM_JSON
    )
    for k, v in p.headers.items():
        resp.headers[k] = v
    if p.status == 401:
        resp.headers.setdefault("WWW-Authenticate", 'Bearer realm="rfg"')
    return resp


def _flatten(errors: Any, prefix: str = "") -> dict[str, list[str]]:
    """marshmallow's nested error dict -> {"command.select.die": ["..."]}."""
    out: dict[str, list[str]] = {}
    if isinstance(errors, dict):
        for k, v in errors.items():
            if isinstance(k, int):
                key = f"{prefix}[{k}]"
            else:
                key = f"{prefix}.{k}" if prefix else str(k)
            if k == "_schema":
                key = prefix or "body"
            out.update(_flatten(v, key))
    elif isinstance(errors, list) and all(isinstance(x, str) for x in errors):
        out[prefix or "body"] = list(errors)
    elif isinstance(errors, list):
        for i, v in enumerate(errors):
            out.update(_flatten(v, f"{prefix}[{i}]"))
    else:
        out[prefix or "body"] = [str(errors)]
    return out


def invalid_body(exc: ValidationError) -> Problem:
    errors = _flatten(exc.messages)
    first = next(iter(errors.items()), ("body", ["invalid"]))
    return Problem(
        "invalid-request",
        f"{first[0]}: {first[1][0]}"
        + (f" (and {len(errors) - 1} more)" if len(errors) > 1 else ""),
        errors=errors,
    )


def invalid_query(exc: ValidationError) -> Problem:
    errors = _flatten(exc.messages)
    first = next(iter(errors.items()), ("query", ["invalid"]))
    return Problem("invalid-parameters", f"{first[0]}: {first[1][0]}", errors=errors)


def _problem(exc: Problem) -> Response:
    return problem_response(exc)


def _illegal(exc: engine.IllegalCommand) -> Response:
    return problem_response(
        Problem("illegal-command", exc.message, code=exc.code, field=exc.field, value=exc.value)
    )


def _conflict(exc: ConcurrencyConflict) -> Response:
    return problem_response(
        Problem(
            "version-conflict",
            f"the game is at version {exc.actual}, not {exc.expected}: nothing was stored. "
            f"Read your seat view again, decide on its 'decision' and resend with "
            f'If-Match: "{exc.actual}" (or expected_version {exc.actual}) and a new command id',
            current_version=exc.actual,
            expected_version=exc.expected,
            headers={"ETag": f'"{exc.actual}"'},
        )
    )


def _decision_changed(exc: DecisionChanged) -> Response:
    return problem_response(
        Problem(
            "decision-changed",
            str(exc),
            decision_id=exc.decision_id,
            current_decision_id=exc.current,
            current_decision_kind=exc.kind,
            current_version=exc.actual,
            headers={"ETag": f'"{exc.actual}"'},
        )
    )


def _not_found(exc: GameNotFound) -> Response:
    return problem_response(
        Problem("not-found", f"game {exc.game_id!r} does not exist; GET /games lists games")
    )


def _invalid(exc: ValidationError) -> Response:
    return problem_response(invalid_body(exc))


def _http(exc: HTTPException) -> Response:
    status = exc.code or 500
    kind = _BY_STATUS.get(status, PROBLEM_TYPES["http-error"])
    detail = exc.description or kind.description
    extra: dict[str, Any] = {}
    if status == 413:
        limit = request.max_content_length
        extra["max_bytes"] = limit
        detail = f"the body is larger than {limit} bytes; send a smaller one"
    elif status == 404:
        detail = f"no resource at {request.path}; the API's paths are listed in /openapi.yaml"
    elif status == 405:
        allowed = ", ".join(sorted(getattr(exc, "valid_methods", None) or []))
        detail = f"{request.method} is not allowed on {request.path}; allowed: {allowed}"
    p = Problem(kind.slug, detail, status=status, **extra)
    resp = problem_response(p)
    for k, v in exc.get_headers():
        if k.lower() not in ("content-type", "content-length"):
            resp.headers[k] = v
    return resp


def _store_unavailable(exc: Exception) -> Response:
    log.warning("event store unavailable on %s %s: %s", request.method, request.path, exc)
    return problem_response(
        Problem(
            "store-unavailable",
            "the event store (Redis) does not answer: retry in "
            f"{STORE_RETRY_AFTER} s; a command resent with the same command id is "
            "applied at most once",
            headers={"Retry-After": str(STORE_RETRY_AFTER), "Cache-Control": "no-store"},
        )
    )


def _store_refuses(exc: Exception) -> Response:
    """Redis answered with an error: an outage when it refuses writes for now (``OOM``,
    ``READONLY``, ``MISCONF``, ``NOREPLICAS``: ``events.store.outage``), else a failure (500)."""
    code = refusal(exc)
    if code is None:
        return _unexpected(exc)
    log.warning("event store refuses writes on %s %s: %s", request.method, request.path, exc)
    return problem_response(
        Problem(
            "store-unavailable",
            f"the event store (Redis) refuses writes for now ({describe(code)}): retry in "
            f"{STORE_RETRY_AFTER} s; a command resent with the same command id is applied at "
            "most once, a game creation resent with the same Idempotency-Key creates one game",
            headers={"Retry-After": str(STORE_RETRY_AFTER), "Cache-Control": "no-store"},
        )
    )


def _unexpected(exc: Exception) -> Response:
    log.exception("unhandled error on %s %s", request.method, request.path)
    return problem_response(
        Problem(
            "internal-error",
            "the server failed to handle this request; it was logged. "
            "Retrying with the same command id is safe.",
        )
    )


#: exception -> handler (Flask picks the handler of the nearest class in the exception's MRO)
HANDLERS: tuple[tuple[type[Exception], Any], ...] = (
    (Problem, _problem),
    (engine.IllegalCommand, _illegal),
    (ConcurrencyConflict, _conflict),
    (DecisionChanged, _decision_changed),
    (GameNotFound, _not_found),
    (ValidationError, _invalid),
    (HTTPException, _http),
    # down, stalled, or a cluster failover under way
    *((exc_type, _store_unavailable) for exc_type in outage.DOWN),
    (outage.REPLY_ERROR, _store_refuses),
    (Exception, _unexpected),
)


def init_app(app: Flask) -> None:
    """Install the error handlers: every error leaves as problem+json."""
    for exc_type, handler in HANDLERS:
        app.register_error_handler(exc_type, handler)
