"""Bot accounts: register (``POST /bots/accounts`` -> a bot token, shown once), read one's own
account (``GET /bots/accounts/<id>``, ``GET /bots/me``), revoke the token
(``DELETE /bots/accounts/<id>/token``), replace it by a new one (``POST /bots/me/token``: the same
account, its ladder entries and ratings kept), follow every pending decision of the account across
its games (``GET /bots/me/decisions/stream``, see ``service.decisions``), everything that happens
to it (``GET /bots/me/events``: challenges, games started and finished, ``service.account_events``)
and its games (``GET /bots/me/games``, ``service.account_games``).

A bot token sees only its own account (403 for another one); it reads and acts only in the seats
a ladder gave the account (``service.auth.require_seat``)."""

from __future__ import annotations

import re
from typing import Any

from flask import Blueprint, Response, current_app, request

from service import account_games
from service.account_events import account_events
from service.accounts import BotAccounts
from service.api.challenges import resource as challenge_resource
from service.auth import (
    bearer_token,
    credential_check,
    is_admin,
    require_account,
    require_admin,
    require_bot,
)
from service.backend import backend
from service.decisions import decision_stream
from service.errors import Problem
from service.http import load_body, load_query, respond
from service.players import challenge_seats
from service.schemas.requests import AccountGamesQuerySchema, EmptyQuerySchema, RegisterBotSchema
from service.schemas.responses import (
    AccountGamesSchema,
    BotAccountSchema,
    BotRegistrationSchema,
    BotTokenSchema,
)
from service.sse import response

bp = Blueprint("accounts", __name__)
#: an events stream's id: a notices stream entry id
EVENT_ID = re.compile(r"[0-9]{1,20}-[0-9]{1,20}")
_empty = EmptyQuerySchema()
_register = RegisterBotSchema()
_account = BotAccountSchema()
_registration = BotRegistrationSchema()
_new_token = BotTokenSchema()
_games_query = AccountGamesQuerySchema()
_games = AccountGamesSchema()


def _accounts() -> BotAccounts:
    accounts = backend().accounts
    assert accounts is not None
    return accounts


def _links(account_id: str) -> dict[str, str]:
    return {
        "self": f"/bots/accounts/{account_id}",
        "token": f"/bots/accounts/{account_id}/token",
        "rotate_token": "/bots/me/token",
        "decisions": "/bots/me/decisions/stream",
    }


def _resource(account: dict[str, Any]) -> dict[str, Any]:
    return dict(account, links=_links(account["account_id"]))


@bp.post("/bots/accounts")
def register() -> Response:
    load_query(_empty)
    if current_app.config.get("BOT_REGISTRATION") == "admin":
        require_admin("registering a bot account on this server (RFG_BOT_REGISTRATION=admin)")
    body = load_body(_register)
    account, token = _accounts().register(body["name"], body["description"], body["contact"])
    out = dict(_resource(account), token=token, token_type="Bearer")
    return respond(
        _registration,
        out,
        status=201,
        headers={
            "Location": f"/bots/accounts/{account['account_id']}",
            "Cache-Control": "no-store",
        },
    )


@bp.get("/bots/me")
def me() -> Response:
    load_query(_empty)
    account_id = require_bot("reading your bot account")
    account = _accounts().get(account_id)
    assert account is not None
    return respond(_account, _resource(account), headers={"Cache-Control": "private, no-cache"})


@bp.get("/bots/accounts/<account_id>")
def get_account(account_id: str) -> Response:
    load_query(_empty)
    require_account(account_id, "reading a bot account")
    account = _accounts().get(account_id)
    if account is None:  # a live token of a deleted account: not reachable today
        raise Problem("not-found", f"no bot account {account_id!r}")
    return respond(_account, _resource(account), headers={"Cache-Control": "private, no-cache"})


@bp.delete("/bots/accounts/<account_id>/token")
def revoke(account_id: str) -> Response:
    load_query(_empty)
    accounts = _accounts()
    if not is_admin():
        require_account(account_id, "revoking a bot token")
    if accounts.get(account_id) is None:
        raise Problem("not-found", f"no bot account {account_id!r}")
    accounts.revoke(account_id)
    return Response(status=204)


@bp.post("/bots/me/token")
def rotate_token() -> Response:
    """A new bot token for the caller's account; the one that asked stops working at once (its
    open streams end within one keep-alive: they check their credential at each)."""
    load_query(_empty)
    account_id = require_bot("replacing your bot token")
    token = bearer_token()
    assert token is not None
    new = _accounts().rotate(account_id, token)
    if new is None:  # another rotation or a revocation with this token won the race
        raise Problem(
            "unauthorized",
            "this bot token was replaced or revoked meanwhile; use the newest token of the "
            "account (a revoked account needs a new registration: POST /bots/accounts)",
        )
    body = {
        "account_id": account_id,
        "token": new,
        "token_type": "Bearer",
        "links": _links(account_id),
    }
    return respond(_new_token, body, headers={"Cache-Control": "no-store"})


@bp.get("/bots/me/decisions/stream")
def decisions() -> Response:
    load_query(_empty)
    account_id = require_bot("the decisions stream")
    last = _last_event_id("decision event")
    cfg = current_app.config
    b = backend()
    assert b.fanout is not None
    gen = decision_stream(
        b.games,
        b.store,
        _accounts(),
        account_id,
        last_event_id=last,
        max_seconds=float(cfg["SSE_MAX_SECONDS"]),
        keepalive=float(cfg["SSE_KEEPALIVE_SECONDS"]),
        poll=float(cfg["DECISIONS_POLL_SECONDS"]),
        allowed=credential_check(),
        fanout=b.fanout,
        served=lambda seats, ladder, entrants: challenge_seats(b, seats, ladder, entrants),
    )
    return response(gen)


def _last_event_id(what: str) -> str | None:
    last = (request.headers.get("Last-Event-ID") or "").strip() or None
    if last is not None and len(last) > 200:
        raise Problem(
            "malformed-request",
            f"Last-Event-ID is longer than 200 characters; send the id of the last {what} "
            "you had (or none)",
        )
    return last


def _event_id(text: str) -> bool:
    """Whether ``text`` is a notices stream entry id (two numbers below 2**64)."""
    m = EVENT_ID.fullmatch(text)
    return m is not None and all(int(n) < 2**64 for n in text.split("-"))


@bp.get("/bots/me/events")
def events() -> Response:
    load_query(_empty)
    account_id = require_bot("the account's events stream")
    last = _last_event_id("event")
    if last is not None and not _event_id(last):
        raise Problem(
            "malformed-request",
            f"Last-Event-ID {last!r} is not an id this stream sent (<ms>-<n>); send the id of "
            "the last event you had, or none to get the state first",
        )
    cfg = current_app.config
    b = backend()
    gen = account_events(
        b,
        account_id,
        last_event_id=last,
        max_seconds=float(cfg["SSE_MAX_SECONDS"]),
        keepalive=float(cfg["SSE_KEEPALIVE_SECONDS"]),
        allowed=credential_check(),
        resource=lambda c: challenge_resource(c, b),
    )
    return response(gen)


@bp.get("/bots/me/games")
def my_games() -> Response:
    q = load_query(_games_query)
    account_id = require_bot("listing your games")
    games, cursor = account_games.page(
        backend(), account_id, status=q.get("status"), limit=q["limit"], cursor=q.get("cursor")
    )
    return respond(
        _games, {"games": games, "next_cursor": cursor}, headers={"Cache-Control": "no-store"}
    )
