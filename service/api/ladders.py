"""Ladders: create one (admin), add entrants (admin: a built-in bot or a bot account), open it to
bot accounts (admin), and read the leaderboard, an entrant's rating history (JSON, or an SVG
plot), the head-to-head table and the ladder's games (to watch or replay them).

A bot account joins an open ladder itself (``POST /bots/me/ladders``, its bot token), leaves it
(``DELETE /bots/me/ladders/<ladder>``: paired no more, its history and rating kept) and lists its
entries with their ratings (``GET /bots/me/ladders``).
The games themselves are scheduled by the workers (``workers.ladders``) or ``rfg ladder run``."""

from __future__ import annotations

from datetime import UTC, datetime
from typing import Any

from flask import Blueprint, Response

from events.games.time_control import validate_table
from ladder.plot import history_svg
from ladder.service import (
    LadderClosed,
    LadderConfig,
    LadderError,
    Ladders,
    NotEntrant,
    UnknownLadder,
)
from service.auth import require_admin, require_bot
from service.backend import backend
from service.errors import Problem
from service.http import load_body, load_query, respond
from service.schemas.requests import (
    AddEntrantSchema,
    CreateLadderSchema,
    EmptyQuerySchema,
    JoinLadderSchema,
    LadderGamesQuerySchema,
    UpdateLadderSchema,
)
from service.schemas.responses import (
    EntrantSchema,
    HeadToHeadSchema,
    HistorySchema,
    LadderGamesSchema,
    LadderListSchema,
    LadderSchema,
    LeaderboardSchema,
    MyLaddersSchema,
)

bp = Blueprint("ladders", __name__)
_empty = EmptyQuerySchema()
_create = CreateLadderSchema()
_add = AddEntrantSchema()
_update = UpdateLadderSchema()
_games_query = LadderGamesQuerySchema()


def ladders() -> Ladders:
    b = backend()
    return Ladders(b.client, b.games, prefix=b.store.prefix)


def _config(lad: Ladders, name: str) -> LadderConfig:
    try:
        return lad.config(name)
    except LadderError as exc:
        raise Problem("not-found", f"{exc} (GET /ladders lists ladders)") from None


def _links(name: str) -> dict[str, str]:
    base = f"/ladders/{name}"
    return {
        "self": base,
        "entrants": f"{base}/entrants",
        "leaderboard": f"{base}/leaderboard",
        "head_to_head": f"{base}/head-to-head",
        "games": f"{base}/games",
        "history": base + "/entrants/{entrant}/history",
    }


def _resource(lad: Ladders, cfg: LadderConfig) -> dict[str, Any]:
    entrants = [lad.entrants(cfg.name)[e] for e in sorted(lad.entrants(cfg.name))]
    return dict(
        cfg.to_dict(),
        entrants=entrants,
        running=len(lad.running(cfg.name)),
        results=len(lad.results(cfg.name)),
        links=_links(cfg.name),
    )


@bp.post("/ladders")
def create() -> Response:
    load_query(_empty)
    require_admin("creating a ladder")
    body = load_body(_create)
    try:
        validate_table({"time_control": body["time_control"]}, 2)
    except ValueError as exc:
        raise Problem("invalid-request", str(exc), errors={"time_control": [str(exc)]}) from None
    lad = ladders()
    try:
        cfg = lad.create(
            LadderConfig(
                body["name"],
                players=body["players"],
                concurrency=body["concurrency"],
                duplicate=body["duplicate"],
                time_control=body["time_control"],
                open=body["open"],
            )
        )
    except LadderError as exc:
        raise Problem("ladder-conflict", str(exc)) from None
    return respond(
        LadderSchema(),
        _resource(lad, cfg),
        status=201,
        headers={"Location": f"/ladders/{cfg.name}"},
    )


@bp.get("/ladders")
def list_ladders() -> Response:
    load_query(_empty)
    return respond(LadderListSchema(), {"ladders": ladders().names()})


@bp.get("/ladders/<ladder>")
def get_ladder(ladder: str) -> Response:
    load_query(_empty)
    lad = ladders()
    return respond(LadderSchema(), _resource(lad, _config(lad, ladder)))


@bp.patch("/ladders/<ladder>")
def update_ladder(ladder: str) -> Response:
    load_query(_empty)
    require_admin("changing a ladder")
    body = load_body(_update)
    lad = ladders()
    _config(lad, ladder)
    try:
        cfg = lad.update(
            ladder,
            paused=body.get("paused"),
            concurrency=body.get("concurrency"),
            open=body.get("open"),
        )
    except LadderError as exc:
        raise Problem("ladder-conflict", str(exc)) from None
    return respond(LadderSchema(), _resource(lad, cfg))


@bp.post("/ladders/<ladder>/entrants")
def add_entrant(ladder: str) -> Response:
    load_query(_empty)
    require_admin("adding a ladder entrant")
    body = load_body(_add)
    lad = ladders()
    _config(lad, ladder)
    if "account" in body:
        accounts = backend().accounts
        if accounts is None or accounts.get(body["account"]) is None:
            raise Problem(
                "invalid-request",
                f"no bot account {body['account']!r} (POST /bots/accounts registers one)",
                errors={"account": ["unknown bot account"]},
            )
    try:
        spec = lad.add_entrant(
            ladder, body["entrant"], bot=body.get("bot"), account=body.get("account")
        )
    except LadderError as exc:
        raise Problem("ladder-conflict", str(exc)) from None
    return respond(EntrantSchema(), spec, status=201)


@bp.get("/ladders/<ladder>/leaderboard")
def leaderboard(ladder: str) -> Response:
    load_query(_empty)
    lad = ladders()
    _config(lad, ladder)
    body = {
        "ladder": ladder,
        "applied": lad.live_table(ladder).applied,
        "rows": lad.leaderboard(ladder),
    }
    return respond(LeaderboardSchema(), body, headers={"Cache-Control": "no-cache"})


def _history(lad: Ladders, ladder: str, entrant: str) -> list[dict[str, Any]]:
    _config(lad, ladder)
    try:
        return lad.history(ladder, entrant)
    except LadderError as exc:
        raise Problem("not-found", str(exc)) from None


@bp.get("/ladders/<ladder>/entrants/<entrant>/history")
def history(ladder: str, entrant: str) -> Response:
    load_query(_empty)
    hist = _history(ladders(), ladder, entrant)
    return respond(HistorySchema(), {"ladder": ladder, "entrant": entrant, "history": hist})


@bp.get("/ladders/<ladder>/entrants/<entrant>/history.svg")
def history_plot(ladder: str, entrant: str) -> Response:
    load_query(_empty)
    hist = _history(ladders(), ladder, entrant)
    svg = history_svg(
        {entrant: hist}, f"{entrant} on ladder {ladder}: conservative rating (mu - 3 sigma)"
    )
    return Response(svg + "\n", mimetype="image/svg+xml", headers={"Cache-Control": "no-cache"})


@bp.get("/ladders/<ladder>/games")
def ladder_games(ladder: str) -> Response:
    """The ladder's games, to watch (under way) or replay (finished): the running ones first,
    then the finished ones newest first, a page at a time (``Ladders.games_page``)."""
    q = load_query(_games_query)
    lad = ladders()
    _config(lad, ladder)
    before = int(q["cursor"]) if "cursor" in q else None
    games, after = lad.games_page(ladder, status=q.get("status"), limit=q["limit"], before=before)
    for g in games:
        gid = g["game_id"]
        g["links"] = {
            "game": f"/games/{gid}",
            "view": f"/games/{gid}/view",
            "log": f"/games/{gid}/log",
            "watch": f"/play/#/watch/{gid}",
            "replay": f"/play/#/replay/{gid}",
        }
    body = {"ladder": ladder, "games": games, "next_cursor": None if after is None else str(after)}
    return respond(LadderGamesSchema(), body, headers={"Cache-Control": "no-cache"})


@bp.get("/ladders/<ladder>/head-to-head")
def head_to_head(ladder: str) -> Response:
    load_query(_empty)
    lad = ladders()
    _config(lad, ladder)
    return respond(HeadToHeadSchema(), {"ladder": ladder, "pairs": lad.head_to_head(ladder)})


# --- a bot account's own entries ------------------------------------------------------------------


def _now() -> str:
    return datetime.now(UTC).isoformat(timespec="seconds").replace("+00:00", "Z")


@bp.post("/bots/me/ladders")
def join() -> Response:
    """The caller's bot account enters an open ladder (201; 200 when it is in already)."""
    load_query(_empty)
    account = require_bot("joining a ladder")
    name = load_body(JoinLadderSchema())["ladder"]
    lad = ladders()
    _config(lad, name)
    try:
        spec, new = lad.join(name, account, _now())
    except UnknownLadder as exc:  # deleted meanwhile
        raise Problem("not-found", f"{exc} (GET /ladders lists ladders)") from None
    except LadderClosed as exc:
        raise Problem("forbidden", str(exc)) from None
    except LadderError as exc:
        raise Problem("ladder-conflict", str(exc)) from None
    return respond(
        EntrantSchema(),
        spec,
        status=201 if new else 200,
        headers={"Location": f"/ladders/{name}/entrants/{spec['entrant']}/history"},
    )


@bp.delete("/bots/me/ladders/<ladder>")
def leave(ladder: str) -> Response:
    """The caller's bot account leaves a ladder: paired no more; results and rating kept."""
    load_query(_empty)
    account = require_bot("leaving a ladder")
    lad = ladders()
    _config(lad, ladder)
    try:
        lad.leave(ladder, account, _now())
    except UnknownLadder as exc:  # deleted meanwhile
        raise Problem("not-found", f"{exc} (GET /ladders lists ladders)") from None
    except NotEntrant as exc:
        raise Problem("not-found", f"{exc} (GET /bots/me/ladders lists yours)") from None
    return Response(status=204)


@bp.get("/bots/me/ladders")
def mine() -> Response:
    """The caller's ladder entries (left ones too), each with its leaderboard row."""
    load_query(_empty)
    account = require_bot("listing your ladders")
    out = []
    for entry in ladders().standings_of(account):
        name = entry["ladder"]
        entry["rating"] = entry["standing"]["rating"]
        entry["links"] = {
            "ladder": f"/ladders/{name}",
            "leaderboard": f"/ladders/{name}/leaderboard",
            "history": f"/ladders/{name}/entrants/{entry['entrant']}/history",
            "leave": f"/bots/me/ladders/{name}",
        }
        out.append(entry)
    return respond(MyLaddersSchema(), {"ladders": out}, headers={"Cache-Control": "no-store"})
