"""The web client: static files under ``/play/`` (``/play/`` is the page, the rest its modules).

The client is plain JavaScript modules and CSS with no build step; it talks to the server only
through the public REST API and its Server-Sent Events streams, like any third-party client
(the lobby, the table, the spectator view, the replay viewer and the ladder boards are all routes
of one page: ``/play/#/...``). Nothing is loaded from anywhere but this server.
"""

from __future__ import annotations

from pathlib import Path

from flask import Blueprint, Response, send_from_directory

from service.errors import Problem

STATIC = Path(__file__).resolve().parent / "static"

bp = Blueprint("web", __name__)

_TYPES = {
    ".js": "text/javascript",
    ".css": "text/css",
    ".html": "text/html",
    ".svg": "image/svg+xml",
}


def _send(name: str) -> Response:
    path = STATIC / name
    if not name or "/" in name or name.startswith(".") or not path.is_file():
        raise Problem("not-found", f"the web client has no file {name!r}; open /play/ to play")
    resp = send_from_directory(STATIC, name, mimetype=_TYPES.get(path.suffix, "text/plain"))
    resp.headers["Cache-Control"] = "no-cache"  # revalidate (ETag / Last-Modified): no stale client
    resp.headers["X-Content-Type-Options"] = "nosniff"
    return resp


@bp.get("/play/")
def page() -> Response:
    return _send("index.html")


@bp.get("/play/<asset>")
def asset(asset: str) -> Response:
    return _send(asset)
