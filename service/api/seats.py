"""Seats: claim a human seat (``POST /games/<id>/seats/<n>/claim`` -> a bearer token for that
seat), rotate its token (``POST /games/<id>/seats/<n>/token``: a new token, the old one stops
working at once; the holder or the admin) and read the seat's private view (``GET /games/<id>/seats/<n>/view``), which holds
everything the seat may see, including ``decision``: the decision it owes now, with its legal
choices (``engine.legal``), or null."""

from __future__ import annotations

import json

from flask import Blueprint, Response

from events.seeds import withholds
from service.api.games import read_summary
from service.api.links import seat_links
from service.auth import bearer_token, is_admin, require_seat
from service.backend import backend
from service.errors import Problem
from service.http import etag, load_body, load_query, not_modified, not_modified_response, respond
from service.schemas.requests import ClaimSeatSchema, EmptyQuerySchema
from service.schemas.responses import SeatClaimSchema, SeatViewSchema
from service.views import served_view

bp = Blueprint("seats", __name__)
_claim_body = ClaimSeatSchema()
_empty = EmptyQuerySchema()
_claim = SeatClaimSchema()
_view = SeatViewSchema()


@bp.post("/games/<gid:game_id>/seats/<int:seat>/claim")
def claim(game_id: str, seat: int) -> Response:
    load_query(_empty)
    _pos, summary = read_summary(game_id)
    load_body(_claim_body, optional=True)
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
            "the game is over; its seats can no longer be claimed (GET /games/{id}/log has the full log)",
        )
    token = backend().tokens.claim(game_id, seat)
    if token is None:
        raise Problem(
            "seat-unavailable", f"seat {seat} was claimed already; claim another human seat"
        )
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


@bp.get("/games/<gid:game_id>/seats/<int:seat>/view")
def seat_view(game_id: str, seat: int) -> Response:
    load_query(_empty)
    require_seat(game_id, seat)
    pos, text = backend().games.view(game_id, seat)
    final = not withholds(text)  # a held-back seed comes later at this very version: no ETag
    if final and not_modified(pos):
        return not_modified_response(pos)
    view = served_view(json.loads(text), seat)  # + decision_id and help, named bonuses
    body = {"game_id": game_id, "seat": seat, "version": pos, "view": view}
    headers = {"ETag": etag(pos), "Cache-Control": "private, no-cache"}
    return respond(_view, body, headers=headers if final else {"Cache-Control": "no-store"})


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
