"""Self-description: the index ``/``, ``/openapi.yaml``, ``/catalogue`` (tiles, cards, dice),
``/bots`` (names a bot seat may use) and ``/problems/<slug>`` (the documentation of each problem
type an error's ``type`` points to)."""

from __future__ import annotations

from pathlib import Path

from flask import Blueprint, Response, current_app, request

from bots.base import bot_names
from service.backend import backend
from service.catalogue import catalogue, catalogue_etag
from service.errors import PROBLEM_TYPES, Problem
from service.http import load_query, respond
from service.schemas.requests import EmptyQuerySchema
from service.schemas.responses import (
    BotsSchema,
    CatalogueSchema,
    IndexSchema,
    ProblemTypeSchema,
    SigningKeySchema,
)

bp = Blueprint("meta", __name__)
_empty = EmptyQuerySchema()


@bp.get("/")
def index() -> Response:
    load_query(_empty)
    if request.accept_mimetypes.best_match(["application/json", "text/html"]) == "text/html":
        return Response(
            status=303, headers={"Location": "/play/"}
        )  # a person's browser: the web client (API clients get JSON)
    links = {
        "openapi": "/openapi.yaml",
        "games": "/games",
        "catalogue": "/catalogue",
        "bots": "/bots",
        "health": "/healthz",
        "ready": "/readyz",
        "verify": "/replays/verify",
        "signing_key": "/signing-key",
        "play": "/play/",
        "docs": "/docs",
    }
    return respond(IndexSchema(), {"name": "Roll for the Galaxy API", "links": links})


@bp.get("/openapi.yaml")
def openapi() -> Response:
    load_query(_empty)
    path = Path(current_app.config["OPENAPI_PATH"])
    if not path.is_file():
        raise Problem("not-found", "this installation ships no openapi.yaml")
    return Response(path.read_bytes(), mimetype="application/yaml")


@bp.get("/catalogue")
def get_catalogue() -> Response:
    load_query(_empty)
    tag = catalogue_etag()
    if request.headers.get("If-None-Match") == tag:
        return Response(status=304, headers={"ETag": tag})
    return respond(
        CatalogueSchema(),
        catalogue(),
        headers={"ETag": tag, "Cache-Control": "public, max-age=3600"},
    )


@bp.get("/signing-key")
def signing_key() -> Response:
    """The public key that signs this server's exports (``rfg replay --key``)."""
    load_query(_empty)
    signer = backend().signer
    if signer is None:
        raise Problem("not-found", "this server signs no exports")
    return respond(
        SigningKeySchema(), signer.public_info(), headers={"Cache-Control": "public, max-age=300"}
    )


@bp.get("/bots")
def bots() -> Response:
    load_query(_empty)
    return respond(BotsSchema(), {"bots": bot_names()})


@bp.get("/problems/<slug>")
def problem_type(slug: str) -> Response:
    load_query(_empty)
    t = PROBLEM_TYPES.get(slug)
    if t is None:
        raise Problem("not-found", f"no problem type {slug!r}; known: {sorted(PROBLEM_TYPES)}")
    return respond(
        ProblemTypeSchema(),
        {"type": t.uri, "title": t.title, "status": t.status, "description": t.description},
    )
