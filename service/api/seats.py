"""Seats: claim a human seat (``POST /games/<id>/seats/<n>/claim`` -> a bearer token for that
seat), rotate its token (``POST /games/<id>/seats/<n>/token``: a new token, the old one stops
working at once; the holder or the admin) and read the seat's private view (``GET /games/<id>/seats/<n>/view``), which holds
everything the seat may see, including ``decision``: the decision it owes now, with its legal
choices (``engine.legal``), or null. Once the game is over, ``?at=N`` gives the seat's view at
event N of its log to anyone (``service.api.steps``; never while the game is under way).

Friends at the table:

* a claim may give the seat's display name (``name``: 1 to 24 printable characters, trimmed;
  shown wherever the seat is named: ``GET /games``, ``GET /games/<id>``, the web client);
* the game's host (the holder of the seat claimed first) or the admin invites someone to an
  open human seat (``POST /games/<id>/seats/<n>/invite``): a one-time invite code, shown once,
  and a web link carrying it in its fragment (``/play/#/join/<id>/<n>/<code>``: a browser never
  sends a fragment, so the code reaches no server log). While the invite is outstanding only
  that code claims the seat (the lobby's claim is refused 409); it claims once. With
  ``{"replace": true}`` the host (for any human seat but its own) or the admin re-invites a
  claimed seat: the seat's token is revoked at once, its display name stays, and the new
  invite claims it (a friend who lost their browser comes back this way);
* a seat holder moves its seat to another device (``POST /games/<id>/seats/<n>/move``): a
  one-time move code, valid ``MOVE_SECONDS``, and a link carrying it
  (``/play/#/move/<id>/<n>/<code>``); the other device claims with ``{"move": code}`` and gets
  a new token, and the old one stops working at that moment;
* the host or the admin abandons a game everyone walked away from
  (``POST /games/<id>/abandon``): the command ``abandon``, which ends it with nobody winning;
* a seat holder resigns (``POST /games/<id>/seats/<n>/resign``): the command ``resign``; with
  three or more seats the seat leaves and the others play on (it owes no decision any more, so
  no clock runs and no bot plays for it), with two it ends the game at once, the other seat
  winning (``engine.leaving`` has the house rule and its events);
* a seat that timed out ``abandon_after`` times in a row is away (a bot plays it); its holder
  comes back (``POST /games/<id>/seats/<n>/back``): the command ``back``, after which the seat's
  decisions are its player's again (``events.games.time_control``); 409 ``back-unavailable``
  saying why when the seat is not away;
* a seat of a game made from a challenge (its table names the challenge: ``table.challenge``)
  aborts it until its first round ends (``POST /games/<id>/seats/<n>/abort``): the command
  ``abort``, which ends it with no result and nobody winning; later, or in another game, 409
  ``abort-unavailable`` saying why (resign instead)."""

from __future__ import annotations

import secrets
from datetime import UTC, datetime
from typing import Any

import orjson
from flask import Blueprint, Response

import engine
from engine.leaving import ABORT_UNTIL_ROUND
from events.games.seeds import withholds
from events.store import ConcurrencyConflict
from service.api.games import game_state, read_summary
from service.api.links import seat_links
from service.api.steps import step_view
from service.auth import bearer_token, is_admin, require_seat
from service.backend import backend
from service.errors import Problem
from service.http import etag, load_body, load_query, not_modified, not_modified_response, respond
from service.schemas.requests import (
    AbandonRequestSchema,
    AbortRequestSchema,
    BackRequestSchema,
    ClaimSeatRequestSchema,
    ClaimSeatSchema,
    EmptyQuerySchema,
    InviteRequestSchema,
    MoveRequestSchema,
    ResignRequestSchema,
    ViewQuerySchema,
)
from service.schemas.responses import (
    GameSchema,
    InviteSchema,
    MoveSchema,
    SeatClaimSchema,
    SeatViewSchema,
)
from service.tokens import MOVE_SECONDS

bp = Blueprint("seats", __name__)
_claim_body = ClaimSeatSchema()
_claim_request = ClaimSeatRequestSchema()
_invite_body = InviteRequestSchema()
_resign_body = ResignRequestSchema()
_abandon_body = AbandonRequestSchema()
_abort_body = AbortRequestSchema()
_back_body = BackRequestSchema()
_invite = InviteSchema()
_move_body = MoveRequestSchema()
_move = MoveSchema()
_game = GameSchema()
_empty = EmptyQuerySchema()
_claim = SeatClaimSchema()
_view = SeatViewSchema()
_view_query = ViewQuerySchema()


@bp.post("/games/<gid:game_id>/seats/<int:seat>/claim")
def claim(game_id: str, seat: int) -> Response:
    load_query(_empty)
    _pos, summary = read_summary(game_id)
    body = load_body(_claim_request, optional=True) or {}
    _claimable(game_id, seat, summary)
    if "move" in body:
        return _redeem(game_id, seat, body["move"])
    outcome, token = backend().tokens.claim(game_id, seat, body.get("name"), body.get("invite"))
    if outcome == "nogame":
        raise Problem("not-found", f"game {game_id!r} does not exist; GET /games lists games")
    if outcome == "invited":
        raise Problem(
            "seat-unavailable",
            f"seat {seat} is kept for an invited player: only the invite link the host sent "
            "claims it; take another open seat, or ask the host for an invite",
        )
    if outcome == "used":
        raise Problem(
            "seat-unavailable",
            f"this invite link was used already: seat {seat} is taken. An invite claims its "
            "seat once; ask the host for a new invite link",
        )
    if outcome == "badcode":
        raise Problem(
            "forbidden",
            f"this invite code is not the one for seat {seat} (the host may have made a new "
            "link since, or it was mistyped); ask the host for the current invite link",
        )
    if outcome == "taken" or token is None:
        raise Problem(
            "seat-unavailable", f"seat {seat} was claimed already; claim another human seat"
        )
    if body.get("name"):  # the views show the seats' names: rendered again with this one
        backend().games.render(game_id)
    return _claimed(game_id, seat, token)


def _claimed(game_id: str, seat: int, token: str) -> Response:
    """201: the seat's new token (shown once)."""
    body = {
        "game_id": game_id,
        "seat": seat,
        "token": token,
        "token_type": "Bearer",
        "links": seat_links(game_id, seat),
    }
    return respond(
        _claim,
        body,
        status=201,
        headers={"Location": f"/games/{game_id}/seats/{seat}/view", "Cache-Control": "no-store"},
    )


def _redeem(game_id: str, seat: int, code: str) -> Response:
    """Claim with a move code: the seat moves to this device, its old token is revoked."""
    outcome, token = backend().tokens.redeem(game_id, seat, code)
    move = f"POST /games/{game_id}/seats/{seat}/move"
    if outcome == "nogame":
        raise Problem("not-found", f"game {game_id!r} does not exist; GET /games lists games")
    if outcome == "used":
        raise Problem(
            "seat-unavailable",
            f"this move link was used already: seat {seat} moved with it. A move link works "
            f"once; on the device that holds the seat now, make a new one ({move})",
        )
    if outcome == "expired":
        raise Problem(
            "seat-unavailable",
            f"this move link expired (it works {MOVE_SECONDS // 60} minutes); on the device "
            f"that holds seat {seat}, make a new one ({move}), or ask the host for a new invite",
        )
    if outcome != "ok" or token is None:
        raise Problem(
            "forbidden",
            f"this move code is not seat {seat}'s (a newer one replaced it, or it was "
            f"mistyped); make a new one on the device that holds the seat ({move}), or ask "
            "the host for a new invite",
        )
    return _claimed(game_id, seat, token)


def _claimable(game_id: str, seat: int, summary: dict[str, Any]) -> None:
    """Refuse a seat that is not an open human seat of a game under way."""
    players = summary["players"]
    if seat >= players:
        raise Problem("not-found", f"game {game_id!r} has seats 0 to {players - 1}, not {seat}")
    cfg = (summary.get("seats") or [{}] * players)[seat]
    if cfg.get("kind") == "bot":
        raise Problem(
            "seat-unavailable",
            f"seat {seat} is played by the bot {cfg.get('bot')!r}; claim a human seat",
        )
    if cfg.get("kind") == "external":
        raise Problem(
            "seat-unavailable",
            f"seat {seat} belongs to bot account {cfg.get('account')!r}, which plays it "
            "with its bot token; claim a human seat",
        )
    if summary.get("status") == "finished":
        raise Problem(
            "seat-unavailable",
            "the game is over, so its seats can no longer be taken; its replay shows how it went",
        )


@bp.post("/games/<gid:game_id>/seats/<int:seat>/invite")
def invite(game_id: str, seat: int) -> Response:
    """A one-time invite code for an open human seat (the host or the admin)."""
    load_query(_empty)
    actor = require_host(game_id, "inviting a player")
    body = load_body(_invite_body, optional=True) or {}
    _pos, summary = read_summary(game_id)
    _claimable(game_id, seat, summary)
    tokens = backend().tokens
    if body.get("replace"):
        if actor == f"seat:{seat}":
            raise Problem(
                "forbidden",
                f"seat {seat} is your own seat; to play it on another device, move it there "
                f"(POST /games/{game_id}/seats/{seat}/move)",
            )
        code = tokens.reinvite(game_id, seat)
        if code is None:
            raise Problem("not-found", f"game {game_id!r} does not exist; GET /games lists games")
    else:
        code = tokens.invite(game_id, seat)
        if code is None:
            raise Problem(
                "seat-unavailable",
                f"seat {seat} was claimed already; invite your friend to another open human "
                'seat, or send {"replace": true} to invite someone anew to this one (its '
                "token is revoked, the player signed out)",
            )
    body = {
        "game_id": game_id,
        "seat": seat,
        "invite": code,
        "link": f"/play/#/join/{game_id}/{seat}/{code}",
        "claim": f"/games/{game_id}/seats/{seat}/claim",
    }
    return respond(_invite, body, status=201, headers={"Cache-Control": "no-store"})


@bp.post("/games/<gid:game_id>/seats/<int:seat>/move")
def move(game_id: str, seat: int) -> Response:
    """A one-time move code for the seat (its holder): another device claims the seat with it
    and the old token stops working then."""
    load_query(_empty)
    require_seat(game_id, seat)
    token = bearer_token()
    accounts = backend().accounts
    if token is None or (accounts is not None and accounts.account_of(token) is not None):
        raise Problem(
            "forbidden",
            "a bot token is not a seat token: a bot account's seats move with its token; "
            "replace it with POST /bots/me/token",
        )
    load_body(_move_body, optional=True)
    made = backend().tokens.move(game_id, seat, token)
    if made is None:
        raise Problem(
            "unauthorized",
            "this token was replaced meanwhile; use the newest token of the seat",
        )
    code, expires = made
    body = {
        "game_id": game_id,
        "seat": seat,
        "move": code,
        "link": f"/play/#/move/{game_id}/{seat}/{code}",
        "claim": f"/games/{game_id}/seats/{seat}/claim",
        "expires_at": datetime.fromtimestamp(expires, UTC)
        .isoformat(timespec="seconds")
        .replace("+00:00", "Z"),
    }
    return respond(_move, body, status=201, headers={"Cache-Control": "no-store"})


def require_host(game_id: str, what: str) -> str:
    """Allow the request only with the admin token or the host's seat token (the seat claimed
    first); returns the actor that names who asked ("admin" or "seat:<n>")."""
    token = bearer_token()
    if token is not None and is_admin(token):
        return "admin"
    tokens = backend().tokens
    claims = tokens.claims(game_id)
    if not claims.exists:
        raise Problem("not-found", f"game {game_id!r} does not exist; GET /games lists games")
    if token is None:
        raise Problem(
            "unauthorized",
            f"{what} needs the host's seat token (Authorization: Bearer <token> of the seat "
            "claimed first) or the admin token",
        )
    host = tokens.tables([game_id])[0].host
    seat = claims.seat_of(token)
    if seat is None:
        raise Problem(
            "unauthorized",
            f"this token was not issued for game {game_id!r}; {what} needs the host's seat token",
        )
    if host is None:  # (seats claimed before hosts were recorded)
        raise Problem("forbidden", f"this game has no host; {what} needs the admin token")
    if seat != host:
        raise Problem(
            "forbidden",
            f"{what} is for the game's host (the player in seat {host}); ask them",
        )
    return f"seat:{seat}"


@bp.post("/games/<gid:game_id>/seats/<int:seat>/resign")
def resign(game_id: str, seat: int) -> Response:
    """The seat resigns (``engine.leaving``): with three or more seats it leaves and the others
    play on, with two the game ends at once and the other seat wins. Answers the game as it
    now is."""
    load_query(_empty)
    require_seat(game_id, seat)
    load_body(_resign_body, optional=True)
    backend().games.submit(
        game_id,
        seat,
        {"kind": "resign"},
        f"seat:{seat}:resign-{secrets.token_hex(8)}",
        actor=f"seat:{seat}",
    )
    pos, summary = read_summary(game_id)
    return respond(_game, game_state(game_id, summary), status=201)


@bp.post("/games/<gid:game_id>/seats/<int:seat>/abort")
def abort(game_id: str, seat: int) -> Response:
    """The seat calls off a game made from a challenge before its first round ended: it ends
    with no result and nobody winning (``engine.leaving``). Answers the game as it now is
    (``end_reason: "aborted"``); 409 ``abort-unavailable`` when it cannot be aborted."""
    load_query(_empty)
    require_seat(game_id, seat)
    load_body(_abort_body, optional=True)
    _pos, summary = read_summary(game_id)
    _abortable(summary, seat)
    try:
        backend().games.submit(
            game_id,
            seat,
            {"kind": "abort"},
            f"seat:{seat}:abort-{secrets.token_hex(8)}",
            actor=f"seat:{seat}",
        )
    except engine.IllegalCommand as exc:  # the round (or the game) ended meanwhile
        if exc.code not in ("too_late", "game_over"):
            raise
        _abortable(read_summary(game_id)[1], seat)
        raise
    _pos, summary = read_summary(game_id)
    return respond(_game, game_state(game_id, summary), status=201)


def _abortable(summary: dict[str, Any], seat: int) -> None:
    """Refuse (409, saying why and what the seat can do instead) to abort a game that is over,
    was not made from a challenge, or is past its first round."""
    resign = f"/games/{summary['game_id']}/seats/{seat}/resign"
    if summary.get("status") == "finished":
        raise Problem(
            "abort-unavailable",
            f"the game is over already (it ended {summary.get('end_reason')}); there is "
            f"nothing to abort. GET /games/{summary['game_id']} has its result",
            code="game_over",
        )
    if not summary.get("challenge"):
        raise Problem(
            "abort-unavailable",
            "only a game made from a challenge can be aborted (POST /challenges), and this one "
            f"was not; to leave it, resign (POST {resign})",
            code="not_from_challenge",
        )
    if summary["round"] > ABORT_UNTIL_ROUND:
        raise Problem(
            "abort-unavailable",
            f"a game can be aborted only until its first round ends, and this one is in round "
            f"{summary['round']}; to leave it, resign (POST {resign})",
            code="too_late",
        )


#: how often ``back`` decides again when a bot's decision landed first (an away seat in a game of
#: otherwise bots is played on by one job, decision after decision: a few tries may meet one)
_BACK_ATTEMPTS = 8


@bp.post("/games/<gid:game_id>/seats/<int:seat>/back")
def back(game_id: str, seat: int) -> Response:
    """The seat's player is back: the command ``back`` ends the seat's absence (a bot played it
    since it timed out ``abandon_after`` times in a row), and its decisions are the player's
    again, with a fresh clock. Answers the game as it now is; 409 ``back-unavailable`` when the
    seat is not away (``code``: ``not_away``, ``handed_over``, ``game_over``)."""
    load_query(_empty)
    require_seat(game_id, seat)
    load_body(_back_body, optional=True)
    games = backend().games
    for attempt in range(_BACK_ATTEMPTS):
        state, version, clocks = games.load_clocks(game_id)
        _away(game_id, seat, state.over, clocks.seats[seat].away, clocks.seats[seat].abandoned)
        try:
            games.submit(
                game_id,
                seat,
                {"kind": "back"},
                f"seat:{seat}:back-{version}",
                expected_version=version,
                actor=f"seat:{seat}",
            )
            break
        except ConcurrencyConflict:  # a bot played the seat meanwhile: look again
            if attempt == _BACK_ATTEMPTS - 1:
                raise
    _pos, summary = read_summary(game_id)
    return respond(_game, game_state(game_id, summary), status=201)


def _away(game_id: str, seat: int, over: bool, away: bool, abandoned: bool) -> None:
    """Refuse (409, saying why and what to do instead) ``back`` for a seat that is not away."""
    if over:
        raise Problem(
            "back-unavailable",
            f"the game is over; there is no seat to come back to. GET /games/{game_id} has its "
            "result",
            code="game_over",
        )
    if abandoned:
        raise Problem(
            "back-unavailable",
            f"seat {seat} was handed over to a bot for good after its timeouts (the table was "
            "created with hand_over: true); a bot plays it to the end of the game",
            code="handed_over",
        )
    if not away:
        raise Problem(
            "back-unavailable",
            f"seat {seat} is not away: its decisions are yours. Read your seat view (GET "
            f"/games/{game_id}/seats/{seat}/view) and answer its decision",
            code="not_away",
        )


@bp.get("/games/<gid:game_id>/seats/<int:seat>/view")
def seat_view(game_id: str, seat: int) -> Response:
    q = load_query(_view_query)
    if "at" in q:  # a replay step: any seat's, by anyone, once the game is over
        return step_view(game_id, seat, q["at"])
    require_seat(game_id, seat)
    pos, text = backend().games.view(game_id, seat)
    final = not withholds(text)  # a held-back seed comes later at this very version: no ETag
    if final and not_modified(pos):
        return not_modified_response(pos)
    # the stored view, served as it is (``events.games.projections``)
    body = {"game_id": game_id, "seat": seat, "version": pos, "view": orjson.Fragment(text)}
    headers = {"ETag": etag(pos), "Cache-Control": "private, no-cache"}
    no_store = {"Cache-Control": "no-store"}
    return respond(_view, body, headers=headers if final else no_store, dumped=True)


@bp.post("/games/<gid:game_id>/seats/<int:seat>/token")
def rotate_token(game_id: str, seat: int) -> Response:
    load_query(_empty)
    token = bearer_token()
    old: str | None = None
    if not (token and is_admin(token)):
        require_seat(game_id, seat)
        accounts = backend().accounts
        if token and accounts is not None and accounts.account_of(token) is not None:
            raise Problem(
                "forbidden",
                "a bot token is not a seat token; revoke or replace it with "
                "DELETE /bots/accounts/{account_id}/token",
            )
        old = token
    load_body(_claim_body, optional=True)
    _pos, summary = read_summary(game_id)
    if seat >= summary["players"]:
        raise Problem(
            "not-found", f"game {game_id!r} has seats 0 to {summary['players'] - 1}, not {seat}"
        )
    outcome, new = backend().tokens.rotate(game_id, seat, old)
    if outcome == "nogame":
        raise Problem("not-found", f"game {game_id!r} does not exist; GET /games lists games")
    if outcome == "unclaimed":
        raise Problem(
            "seat-unavailable",
            f"seat {seat} has no token to rotate: nobody claimed it "
            f"(POST /games/{game_id}/seats/{seat}/claim)",
        )
    if outcome == "stale" or new is None:
        raise Problem(
            "unauthorized",
            "this token was replaced meanwhile; use the newest token of "
            "the seat (or ask the operator to rotate it)",
        )
    body = {
        "game_id": game_id,
        "seat": seat,
        "token": new,
        "token_type": "Bearer",
        "links": seat_links(game_id, seat),
    }
    return respond(
        _claim,
        body,
        status=201,
        headers={"Location": f"/games/{game_id}/seats/{seat}/view", "Cache-Control": "no-store"},
    )


@bp.post("/games/<gid:game_id>/abandon")
def abandon(game_id: str) -> Response:
    """End a game everyone walked away from: the command ``abandon`` (``engine.leaving``: nobody
    wins, the scores as they stand are recorded), from the host (the seat claimed first) or the
    admin. Answers the game as it now is (``end_reason: "abandoned"``)."""
    load_query(_empty)
    actor = require_host(game_id, "abandoning a game")
    load_body(_abandon_body, optional=True)
    seat = int(actor.split(":", 1)[1]) if actor.startswith("seat:") else 0
    backend().games.submit(
        game_id, seat, {"kind": "abandon"}, f"abandon-{secrets.token_hex(8)}", actor=actor
    )
    _pos, summary = read_summary(game_id)
    return respond(_game, game_state(game_id, summary), status=201)
