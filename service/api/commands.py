"""Commands: ``POST /games/<id>/seats/<n>/commands`` submits the seat's decision.

The body is ``{command_id, expected_version? | decision_id?, command}``; the version may instead
come as ``If-Match: "<version>"`` (the ETag of the view the client decided on). Semantics:

* idempotent per (seat, command id): a retry returns the same answer (``Idempotent-Replayed:
  true``) and stores nothing; the same id with a different command is refused (422). The id is
  stored namespaced as ``seat:<n>:<command_id>``, so seats cannot collide;
* optimistic: a stale version -> 409 with ``current_version``, nothing appended; without a version
  the command applies to the game as it is (the engine still checks that it is legal);
* by decision: ``decision_id`` (the seat view's ``decision.decision_id``) instead of a version
  applies the command while the seat still owes that decision, whatever other seats did
  meanwhile; once the seat's own decision changed -> 409 ``decision-changed`` naming the current
  one (``GameService.submit`` checks it atomically with the append);
* the answer carries the new version and the appended events as this seat may see them; a view
  read right after is of the new version (``GameService.view`` renders a version's views for its first
  reader);
* before anything else, the rate limits and the seat's token, in one round trip
  (``service.auth.require_seat_command``): a 429 is the answer whatever else the request met, then
  a wrong credential gets 401/403/404, as on every seat endpoint; the body, the version and the
  game are looked at only after both passed.
"""

from __future__ import annotations

from typing import Any

from flask import Blueprint, Response

from engine.canonical import canonical_json
from events.games.projections import feed_item
from service.auth import require_seat_command
from service.backend import backend
from service.errors import Problem
from service.http import etag, if_match_version, load_body, load_query, respond
from service.schemas.requests import CommandRequestSchema, EmptyQuerySchema
from service.schemas.responses import CommandResultSchema

bp = Blueprint("commands", __name__)
_body = CommandRequestSchema()
_empty = EmptyQuerySchema()
_result = CommandResultSchema()


def stored_command_id(seat: int, command_id: str) -> str:
    return f"seat:{seat}:{command_id}"


@bp.post("/games/<gid:game_id>/seats/<int:seat>/commands")
def submit(game_id: str, seat: int) -> Response:
    require_seat_command(game_id, seat)
    load_query(_empty)
    body, expected, decision_id = _request()
    command = body["command"]
    cid = stored_command_id(seat, body["command_id"])
    out = backend().games.submit(
        game_id,
        seat,
        command,
        cid,
        expected_version=expected,
        actor=f"seat:{seat}",
        decision_id=decision_id,
    )
    headers = {"ETag": etag(out.version)}
    if out.result.duplicate:
        record = out.envelopes[0].event() if out.envelopes else {}
        if canonical_json(record.get("command")) != canonical_json(command):
            raise Problem(
                "idempotency-key-reused",
                f"command id {body['command_id']!r} was used before by seat {seat} for a different "
                f"command; resend the identical command to retry, or use a new command id",
            )
        headers["Idempotent-Replayed"] = "true"
    result = {
        "game_id": game_id,
        "seat": seat,
        "command_id": body["command_id"],
        "version": out.version,
        "first_seq": out.result.first_seq,
        "last_seq": out.result.last_seq,
        "events": [feed_item(env, seat) for env in out.envelopes],
    }
    # built field by field as CommandResultSchema dumps it (tests/service/
    # test_command_route_answers.py checks every command of whole games): sent as it is
    return respond(_result, result, status=201, headers=headers, dumped=True)


def _request() -> tuple[dict[str, Any], int | None, int | None]:
    """The body, and the version (``expected_version`` or ``If-Match``) or decision id."""
    body = load_body(_body)
    header_version = if_match_version()
    expected = body.get("expected_version")
    if expected is not None and header_version is not None and expected != header_version:
        raise Problem(
            "invalid-request",
            f'expected_version {expected} and If-Match "{header_version}" disagree; send one of them',
            errors={"expected_version": ["disagrees with If-Match"]},
        )
    if expected is None:
        expected = header_version
    decision_id = body.get("decision_id")
    if decision_id is not None and expected is not None:
        raise Problem(
            "invalid-request",
            "send either decision_id (applied while the seat owes that decision) or a version "
            "(expected_version / If-Match: applied only if the game has not moved), not both",
            errors={"decision_id": ["not together with expected_version or If-Match"]},
        )
    return body, expected, decision_id
