"""Games: create (``POST /games``), list and filter (``GET /games``), read one
(``GET /games/<id>``) and its public view (``GET /games/<id>/view``; ``?at=N``: the view at event
N of a finished game, ``service.api.steps``).

A game created here expires, with every key it holds, after ``ABANDONED_GAME_SECONDS`` without a
command as long as no seat is claimed; once over it is kept (``FINISHED_GAME_SECONDS``: 0 for
good). Each address may have ``MAX_OPEN_GAMES_PER_ADDRESS`` unfinished games (``service.limits``).
A creation is one atomic write (``GameService.create``); sent again with the same ``Idempotency-Key`` it
answers the same game (``service.idempotency``)."""

from __future__ import annotations

import json
import secrets
from typing import Any
from urllib.parse import urlencode

import orjson
from flask import Blueprint, Response, current_app

from events.games.seeds import withholds
from events.games.time_control import validate_table
from service import idempotency
from service.ambition import require_available
from service.api.links import game_links
from service.api.steps import step_view
from service.auth import require_admin
from service.backend import backend
from service.errors import Problem
from service.http import (
    etag,
    load_body,
    load_query,
    not_modified,
    not_modified_response,
    respond,
)
from service.limits import check_open_games, client_key, opened_game
from service.lobby import list_games
from service.schemas.requests import (
    CreateGameSchema,
    EmptyQuerySchema,
    ListGamesQuerySchema,
    ViewQuerySchema,
    engine_options,
)
from service.schemas.responses import GamePageSchema, GameSchema, ViewSchema
from service.tokens import Table

bp = Blueprint("games", __name__)
#: create-game fields recorded in the table (time control: events/games/time_control.py)
TABLE_KEYS = ("time_control", "timeout_policy", "abandon_after", "hand_over", "bot_pace_seconds")
_create = CreateGameSchema()
_list = ListGamesQuerySchema()
_empty = EmptyQuerySchema()
_game = GameSchema()
_page = GamePageSchema()
_view = ViewSchema()
_view_query = ViewQuerySchema()


def game_resource(
    summary: dict[str, Any], claimed: set[int], table: Table | None = None
) -> dict[str, Any]:
    """The game as the API shows it: its lobby projection plus which seats are taken, their
    display names and which open seats are kept for an invited player (``table``)."""
    if table is not None:
        claimed = table.claimed
    seats = []
    for i, cfg in enumerate(summary.get("seats") or []):
        seat: dict[str, Any] = {"seat": i, "kind": cfg.get("kind", "human")}
        if cfg.get("bot"):
            seat["bot"] = cfg["bot"]
        for key in ("account", "entrant"):
            if cfg.get(key):
                seat[key] = cfg[key]
        seat["claimed"] = i in claimed or seat["kind"] in ("bot", "external")
        if table is not None:  # (each only when it says something: a new game's seats are bare)
            if i in table.names:
                seat["name"] = table.names[i]
            if i in table.invited and i not in claimed:
                seat["invited"] = True
            if i == table.host:
                seat["host"] = True
        seats.append(seat)
    return dict(summary, seats=seats, links=game_links(summary["game_id"]))


def game_state(game_id: str, summary: dict[str, Any]) -> dict[str, Any]:
    """``game_resource`` of one game, its table read now."""
    return game_resource(summary, set(), backend().tokens.tables([game_id])[0])


def read_summary(game_id: str) -> tuple[int, dict[str, Any]]:
    pos, text = backend().games.view(game_id, "summary")
    return pos, json.loads(text)


@bp.post("/games")
def create_game() -> Response:
    load_query(_empty)
    body = load_body(_create)
    if "seed" in body:
        require_admin("choosing the seed of a game")
    options = body.get("options", {})
    require_available(options)
    seats = body["seats"]
    table: dict[str, Any] = {"seats": seats}
    for key in TABLE_KEYS:
        if key in body:
            table[key] = body[key]
    try:
        validate_table(table, len(seats))
    except ValueError as exc:
        raise Problem("invalid-request", str(exc), errors={"time_control": [str(exc)]}) from None
    b = backend()
    game_id = secrets.token_hex(6)
    idem_key = idempotency.requested_key()
    reservation = None
    replayed = False
    if idem_key is not None:  # (service.idempotency: a retry answers the game of the first request)
        reservation = idempotency.reserve(
            b.client, b.store.prefix, client_key(), idem_key, body, game_id
        )
        game_id = reservation.game_id
        if reservation.replay:
            replayed = b.store.version(game_id) > 0
            if reservation.created and not replayed:
                raise Problem(
                    "not-found",
                    f"game {game_id}, created with this {idempotency.HEADER}, no longer exists "
                    f"(it expired); use a new key to create another game",
                )
    if not replayed:
        check_open_games(b.store)
    if reservation is None or not reservation.created:
        cfg = current_app.config
        retention = (int(cfg["ABANDONED_GAME_SECONDS"]), int(cfg["FINISHED_GAME_SECONDS"]))
        # one atomic write: events, views, lobby entry, retention (a retry: the stored game)
        b.games.create(
            len(seats),
            engine_options(options),
            seed=body.get("seed"),
            table=table,
            game_id=game_id,
            retention=retention,
        )
        opened_game(game_id)
        if reservation is not None:
            idempotency.created(b.client, reservation)
    pos, summary = read_summary(game_id)
    headers = {"Location": f"/games/{game_id}", "ETag": etag(pos)}
    if replayed:
        headers["Idempotent-Replayed"] = "true"
    return respond(_game, game_resource(summary, set()), status=201, headers=headers)


@bp.get("/games")
def get_games() -> Response:
    q = load_query(_list)
    b = backend()
    page = list_games(b.store, b.tokens, **q)
    tables = b.tokens.tables([summary["game_id"] for summary, _claimed in page.items])
    items = [
        game_resource(summary, claimed, table)
        for (summary, claimed), table in zip(page.items, tables, strict=True)
    ]
    headers = {}
    if page.next_cursor:
        headers["Link"] = f'<{_next_url(q, page.next_cursor)}>; rel="next"'
    return respond(_page, {"items": items, "next_cursor": page.next_cursor}, headers=headers)


def _next_url(q: dict[str, Any], cursor: str) -> str:
    params = {
        k: (v.isoformat() if hasattr(v, "isoformat") else v) for k, v in q.items() if k != "cursor"
    }
    params["cursor"] = cursor
    return "/games?" + urlencode(params)


@bp.get("/games/<gid:game_id>")
def get_game(game_id: str) -> Response:
    load_query(_empty)
    pos, summary = read_summary(game_id)
    return respond(_game, game_state(game_id, summary), headers={"ETag": etag(pos)})


@bp.get("/games/<gid:game_id>/view")
def public_view(game_id: str) -> Response:
    q = load_query(_view_query)
    if "at" in q:  # a replay step of a finished game (service.api.steps)
        return step_view(game_id, "public", q["at"])
    pos, text = backend().games.view(game_id, "public")
    final = not withholds(text)  # a held-back seed comes later at this very version: no ETag
    if final and not_modified(pos):
        return not_modified_response(pos)
    headers = {"ETag": etag(pos), "Cache-Control": "no-cache"}
    # the stored view, served as it is (``events.games.projections``)
    body = {"game_id": game_id, "version": pos, "view": orjson.Fragment(text)}
    return respond(
        _view, body, headers=headers if final else {"Cache-Control": "no-store"}, dumped=True
    )
