"""Ladders: create one (admin), add entrants (admin: a built-in bot or a bot account), and read
the leaderboard, an entrant's rating history (JSON, or an SVG plot) and the head-to-head table.
The games themselves are scheduled by the workers (``workers.ladders``) or ``rfg ladder run``."""

from __future__ import annotations

from typing import Any

from flask import Blueprint, Response

from events.games.time_control import validate_table
from ladder.plot import history_svg
from ladder.service import LadderConfig, LadderError, Ladders
from service.auth import require_admin
from service.backend import backend
from service.errors import Problem
from service.http import load_body, load_query, respond
from service.schemas.requests import (
    AddEntrantSchema,
    CreateLadderSchema,
    EmptyQuerySchema,
    UpdateLadderSchema,
)
from service.schemas.responses import (
    EntrantSchema,
    HeadToHeadSchema,
    HistorySchema,
    LadderListSchema,
    LadderSchema,
    LeaderboardSchema,
)

bp = Blueprint("ladders", __name__)
_empty = EmptyQuerySchema()
_create = CreateLadderSchema()
_add = AddEntrantSchema()
_update = UpdateLadderSchema()


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
    cfg = lad.update(ladder, paused=body.get("paused"), concurrency=body.get("concurrency"))
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


@bp.get("/ladders/<ladder>/head-to-head")
def head_to_head(ladder: str) -> Response:
    load_query(_empty)
    lad = ladders()
    _config(lad, ladder)
    return respond(HeadToHeadSchema(), {"ladder": ladder, "pairs": lad.head_to_head(ladder)})
