"""Who is calling: bearer tokens for seats and the admin.

* ``require_seat(game_id, seat)`` - the seat-scoped endpoints: 404 for an unknown game or seat,
  401 without a token or with a token this game never issued, 403 with another seat's token.
  A seat of kind ``external`` (a ladder game's bot seat) also accepts the bot token of the
  account seated there (``{"kind": "external", "account": id}``); any other bot token gets 403.
* ``require_seat_command(game_id, seat)`` - the same check for a seat's command, with the
  request's rate limits: both before the view's first step, in one round trip (``service.limits``
  counts them, the seat token's digest is read beside), 429 before any other answer; a token
  that is not the seat's then gets exactly what ``require_seat`` answers.
* ``require_bot()`` / ``require_account(id)`` - bot-account endpoints: 401 without a live bot
  token, 403 with another account's token.
* ``require_admin()`` - operations reserved to the operator (choosing a seed): 401 / 403.
* ``is_admin()`` - whether the request carries the admin token (``ADMIN_TOKEN``, env
  ``RFG_ADMIN_TOKEN``; without one configured nobody is admin).
* ``token_is_valid()`` - whether the request's token is a live bot token or a seat token of the
  route's game, before any view looks at it (``service.limits``: past its address's general
  limit only such a token is let through).

``require_admin`` tells ``service.limits`` of a token offered as the admin token that is not it
(``token_refused``: counted as a refused token, as a 401 is).
"""

from __future__ import annotations

import hmac
import json
from collections.abc import Callable

from flask import current_app, request

from service import limits
from service.accounts import TOKEN_PREFIX, seats_of
from service.backend import backend
from service.errors import Problem


def bearer_token() -> str | None:
    raw = request.headers.get("Authorization")
    if raw is None:
        return None
    scheme, _, token = raw.strip().partition(" ")
    token = token.strip()
    if scheme.lower() != "bearer" or not token or " " in token:
        raise Problem("unauthorized", "the Authorization header must be 'Bearer <token>'")
    return token


def is_admin(token: str | None = None) -> bool:
    token = token if token is not None else bearer_token()
    admin = current_app.config.get("ADMIN_TOKEN")
    return bool(admin and token and hmac.compare_digest(token.encode(), str(admin).encode()))


def require_admin(what: str) -> None:
    token = bearer_token()
    if token is None:
        raise Problem(
            "unauthorized", f"{what} needs the admin token: Authorization: Bearer <admin token>"
        )
    if not is_admin(token):
        limits.token_refused()
        raise Problem("forbidden", f"{what} needs the admin token; this token is not it")


def players_of(game_id: str) -> int:
    _pos, text = backend().games.view(game_id, "summary")
    players: int = json.loads(text)["players"]
    return players


def require_seat(game_id: str, seat: int) -> None:
    """Allow the request only with the token issued for this seat of this game."""
    token = bearer_token()
    tokens = backend().tokens
    claims = tokens.claims(game_id)
    if not claims.exists:
        raise Problem("not-found", f"game {game_id!r} does not exist; GET /games lists games")
    accounts = backend().accounts
    account = accounts.account_of(token) if token and accounts is not None else None
    if account is not None:
        _pos, text = backend().games.view(game_id, "summary")
        summary = json.loads(text)
        if not 0 <= seat < summary["players"]:
            raise Problem(
                "not-found", f"game {game_id!r} has seats 0 to {summary['players'] - 1}, not {seat}"
            )
        if seat in seats_of(summary, account):
            return
        raise Problem(
            "forbidden",
            f"bot account {account!r} is not seated at seat {seat} of game {game_id!r}; "
            "a bot token reads and acts only in the seats a ladder gave its account",
        )
    owner = claims.seat_of(token) if token else None
    if owner == seat:
        return
    players = players_of(game_id)
    if not 0 <= seat < players:
        raise Problem("not-found", f"game {game_id!r} has seats 0 to {players - 1}, not {seat}")
    if token is None:
        raise Problem(
            "unauthorized",
            f"seat {seat} of game {game_id!r} needs its seat token: Authorization: Bearer <token> "
            f"(POST /games/{game_id}/seats/{seat}/claim issues it)",
        )
    if owner is None:
        raise Problem(
            "unauthorized",
            f"this token was not issued for game {game_id!r}; claim a seat of this game to get one",
        )
    raise Problem(
        "forbidden", f"this token is for seat {owner}; it cannot read or act for seat {seat}"
    )


def require_seat_command(game_id: str, seat: int) -> None:
    """Before a seat's command (as ``login_required`` before a view): its rate limits, 429 when
    one refuses, then the seat's token (``require_seat``'s answers). One round trip when the
    token is the seat's: the limits' counting and the read of the seat's token digest are sent
    together; any other token, or none, gets ``require_seat``'s own check."""
    try:
        token = bearer_token()
    except Problem:
        token = None  # a malformed header: counted, then refused by require_seat
    tokens = backend().tokens
    read = None
    if token is not None and not token.startswith(TOKEN_PREFIX):  # (a bot token: require_seat)
        read = tokens.seat_holds(game_id, seat, token)
    held = limits.check(read)
    if held is None and read is not None:  # no limits on this app: the read alone
        held = tokens.read(read)
    if not held:
        require_seat(game_id, seat)


def credential_check(game_id: str | None = None, seat: int | None = None) -> Callable[[], bool]:
    """Whether the request's token still works (for long-lived streams: a revoked bot token or a
    rotated seat token ends them). Without a token there is nothing to revoke: always True."""
    token = bearer_token()
    b = backend()
    if token is None or is_admin(token):
        return lambda: True
    accounts = b.accounts
    if accounts is not None and accounts.account_of(token) is not None:
        account = accounts.account_of(token)
        return lambda: accounts.account_of(token) == account
    if game_id is None or seat is None:
        return lambda: False
    tokens = b.tokens
    return lambda: tokens.claims(game_id).seat_of(token) == seat


def bot_account(token: str | None) -> str | None:
    """The account a live bot token belongs to; None for no token, another kind of token or a
    revoked one (and where the service keeps no accounts)."""
    accounts = backend().accounts
    return accounts.account_of(token) if token and accounts is not None else None


def token_is_valid() -> bool:
    """Whether the request's token is a live bot token or, on a route of one game, one of its
    seat tokens (for a view that did not look at it: ``service.limits``)."""
    token = bearer_token()
    if token is None:
        return False
    if token.startswith(TOKEN_PREFIX):
        return bot_account(token) is not None
    game_id: str | None = (request.view_args or {}).get("game_id")
    return game_id is not None and backend().tokens.claims(game_id).seat_of(token) is not None


def require_bot(what: str = "this endpoint") -> str:
    """The account of the request's live bot token (401 without one)."""
    account = bot_account(bearer_token())
    if account is None:
        raise Problem(
            "unauthorized",
            f"{what} needs a bot token: Authorization: Bearer <bot token> "
            "(POST /bots/accounts issues one; a revoked token no longer works)",
        )
    return account


def require_account(account_id: str, what: str = "this account") -> str:
    """Only the account's own bot token (403 with another account's; 401 without a bot token)."""
    account = require_bot(what)
    if account != account_id:
        raise Problem(
            "forbidden",
            f"this bot token belongs to account {account!r}; it cannot read or "
            f"change account {account_id!r}",
        )
    return account
