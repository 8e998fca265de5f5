"""``GET /docs``: the API's documentation in the browser, Swagger UI rendering ``/openapi.yaml``.

The Swagger UI files come from the ``flask-swagger-ui`` distribution (its ``dist`` folder) and are
served by this server under ``/docs/<asset>``: nothing is loaded from a CDN, the page works
offline. The page has no inline script or style (its Content-Security-Policy, ``service.headers``,
runs none): the few lines that start Swagger UI and the page's own styles are files of
``service/web/docs/``, served under ``/docs/`` too. Below the Swagger UI the page lists every operation of the spec as plain HTML (method,
path, summary, a deep link into Swagger UI), so it is useful without JavaScript too.
"""

from __future__ import annotations

import html
from functools import lru_cache
from pathlib import Path
from typing import Any

import flask_swagger_ui
import yaml
from flask import Blueprint, Response, current_app, send_from_directory

from service.errors import Problem
from service.http import load_query
from service.schemas.requests import EmptyQuerySchema

DIST = Path(flask_swagger_ui.__file__).resolve().parent / "dist"
OWN = Path(__file__).resolve().parents[1] / "web" / "docs"
#: the page's own files (``OWN``) -> their type
_OWN_ASSETS = {"swagger-init.js": "text/javascript", "docs.css": "text/css"}
_ASSETS = {
    "swagger-ui-bundle.js": "text/javascript",
    "swagger-ui.css": "text/css",
    "index.css": "text/css",
    "favicon-16x16.png": "image/png",
    "favicon-32x32.png": "image/png",
}
_METHODS = ("get", "put", "post", "delete", "patch", "head", "options")

bp = Blueprint("docs", __name__)
_empty = EmptyQuerySchema()

_PAGE = """<!DOCTYPE html>
<html lang="en">
<head>
<meta charset="utf-8">
<title>{title} - API docs</title>
<link rel="stylesheet" href="/docs/swagger-ui.css">
<link rel="stylesheet" href="/docs/index.css">
<link rel="stylesheet" href="/docs/docs.css">
<link rel="icon" type="image/png" href="/docs/favicon-32x32.png" sizes="32x32">
</head>
<body>
<p class="links">
The spec: <a href="/openapi.yaml">/openapi.yaml</a> &middot; the API index: <a href="/">/</a>
&middot; play in the browser: <a href="/play/">/play/</a></p>
<div id="swagger-ui"></div>
<nav class="ops"><details><summary>Every operation ({count})</summary><ul>
{operations}
</ul></details></nav>
<script src="/docs/swagger-ui-bundle.js"></script>
<script src="/docs/swagger-init.js"></script>
</body>
</html>
"""


def operations(spec: dict[str, Any]) -> list[dict[str, str]]:
    """Every operation of the spec: method, path, operationId, first tag, summary."""
    out = []
    for path, item in (spec.get("paths") or {}).items():
        for method in _METHODS:
            op = item.get(method)
            if isinstance(op, dict):
                out.append(
                    {
                        "method": method.upper(),
                        "path": path,
                        "operation_id": str(op.get("operationId", "")),
                        "tag": str((op.get("tags") or ["default"])[0]),
                        "summary": str(op.get("summary", "")),
                    }
                )
    return out


@lru_cache(maxsize=4)
def _page(spec_path: str, mtime: float) -> str:
    spec = yaml.safe_load(Path(spec_path).read_text(encoding="utf-8"))
    ops = operations(spec)
    items = "\n".join(
        f'<li><a href="#/{html.escape(o["tag"])}/{html.escape(o["operation_id"])}">'
        f"<code>{o['method']}</code> {html.escape(o['path'])}</a> - {html.escape(o['summary'])} "
        f'(<span class="operation-id">{html.escape(o["operation_id"])}</span>)</li>'
        for o in ops
    )
    title = html.escape(str((spec.get("info") or {}).get("title", "API")))
    return _PAGE.format(title=title, operations=items, count=len(ops))


@bp.get("/docs")
def docs() -> Response:
    load_query(_empty)
    path = Path(current_app.config["OPENAPI_PATH"])
    if not path.is_file():
        raise Problem("not-found", "this installation ships no openapi.yaml, so no docs page")
    resp = Response(_page(str(path), path.stat().st_mtime), mimetype="text/html")
    resp.headers["Cache-Control"] = "no-cache"
    return resp


@bp.get("/docs/<asset>")
def docs_asset(asset: str) -> Response:
    load_query(_empty)
    if asset in _OWN_ASSETS:
        folder, mimetype = OWN, _OWN_ASSETS.get(asset)
    else:
        folder, mimetype = DIST, _ASSETS.get(asset)
    if mimetype is None or not (folder / asset).is_file():
        raise Problem("not-found", f"the docs page has no file {asset!r}; open /docs")
    resp = send_from_directory(folder, asset, mimetype=mimetype)
    # the page's own files change with the server: revalidated; Swagger UI's with its package
    resp.headers["Cache-Control"] = "no-cache" if folder == OWN else "public, max-age=86400"
    return resp
