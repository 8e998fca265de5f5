"""``Idempotency-Key`` on ``POST /games``: a creation sent again makes one game.

A client that got no answer to ``POST /games`` (a timeout, a dropped connection, a 503) cannot
tell whether its game was created. Sent again with the same ``Idempotency-Key`` header (IETF
draft-ietf-httpapi-idempotency-key-header) and the same body, the request answers the same game
with the same status (201, same ``Location``), and at most one game is created:

* **the key**: 1 to ``MAX_KEY`` characters of ``A-Z a-z 0-9 - _ . : ~ + / =`` (a UUID fits),
  bare or in double quotes (the draft's structured-field string); anything else is 400;
* **per client**: keys are scoped by the request's bearer token when it carries one, else by
  its address (``service.limits.client_key``); two clients using the same key get two games,
  and nobody reaches another client's game by guessing its key;
* **remembered** ``REMEMBER_SECONDS`` (24 hours) from the first request, under
  ``<prefix>:idem:<sha256 of scope and key>``: ``"<state> <game id> <sha256 of the body>"``,
  state ``p`` (reserved: the game id is chosen, the game maybe not stored yet) then ``c`` (the
  game was stored and answered);
* **the same key with another body** (canonical JSON, so key order and spacing do not matter) is
  422 ``idempotency-key-mismatch``, nothing done.

The first request reserves the key (``SET NX``) with a new game id, then creates the game under
that id. A retry reads the record: a game stored and answered (``c``) is answered again (its
current state, ``Idempotent-Replayed: true``; 404 once it has expired by retention); a
reservation (``p``) is created again under the same id - the store's creation is keyed by game id
(``RedisStore.create_game``), so whether the first attempt stored the game or not, and even when
both run at once, one game is stored and both answer it.
"""

from __future__ import annotations

import hashlib
import json
import re
from dataclasses import dataclass
from typing import Any

from flask import request

from events.store.idempotency import IdempotencyRecords
from service.errors import Problem

HEADER = "Idempotency-Key"
#: the longest key accepted
MAX_KEY = 128
KEY_RE = re.compile(rf"^[A-Za-z0-9_.:~+/=-]{{1,{MAX_KEY}}}$")
#: seconds a key is remembered from the first request that used it
REMEMBER_SECONDS = 24 * 3600


@dataclass(frozen=True)
class Reservation:
    """A key's record: the game id it stands for, and what a request before this one did."""

    record: str  # its name on the store (``IdempotencyRecords.record``)
    game_id: str
    fingerprint: str
    #: a request with this key came before (this one is a retry)
    replay: bool
    #: ... and its game was stored and answered
    created: bool


def requested_key() -> str | None:
    """The request's ``Idempotency-Key`` (quotes taken off), None without one; 400 if malformed."""
    raw = request.headers.get(HEADER)
    if raw is None:
        return None
    value = raw.strip()
    if len(value) >= 2 and value[0] == value[-1] == '"':
        value = value[1:-1]
    if not KEY_RE.match(value):
        raise Problem(
            "malformed-request",
            f"{HEADER} must be 1 to {MAX_KEY} characters of A-Z a-z 0-9 - _ . : ~ + / = "
            f"(a UUID fits), optionally in double quotes",
        )
    return value


def fingerprint(body: Any) -> str:
    """sha256 of the body as canonical JSON."""
    data = json.dumps(body, sort_keys=True, separators=(",", ":"), default=str)
    return hashlib.sha256(data.encode()).hexdigest()


def reserve(
    client: Any, prefix: str, scope: str, key: str, body: Any, new_game_id: str
) -> Reservation:
    """The key's record, made now for ``new_game_id`` unless a request came before with it;
    422 when that request's body was another."""
    digest = hashlib.sha256(f"{scope}\n{key}".encode("utf-8", "surrogatepass")).hexdigest()
    records = IdempotencyRecords(client, prefix)
    record = records.record(digest)
    fp = fingerprint(body)
    for _ in range(3):  # (a record that expires between the SET and the GET: once more)
        if records.reserve(record, f"p {new_game_id} {fp}", REMEMBER_SECONDS):
            return Reservation(record, new_game_id, fp, replay=False, created=False)
        old = records.get(record)
        if old is None:
            continue
        state, game_id, their_fp = old.split(" ")
        if their_fp != fp:
            raise Problem(
                "idempotency-key-mismatch",
                f"{HEADER} {key!r} was used by this client for another request body (game "
                f"{game_id}) within the last {REMEMBER_SECONDS // 3600} hours: resend that "
                f"body to get that game, or use a new key for a new game",
            )
        return Reservation(record, game_id, fp, replay=True, created=state == "c")
    raise Problem(
        "store-unavailable",
        f"the record of {HEADER} {key!r} keeps expiring under this request; retry",
        headers={"Retry-After": "1"},
    )


def created(client: Any, reservation: Reservation) -> None:
    """The game of ``reservation`` was stored and is being answered."""
    if not reservation.created:
        IdempotencyRecords(client).settle(
            reservation.record, f"c {reservation.game_id} {reservation.fingerprint}"
        )
