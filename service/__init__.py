"""The REST API of the game server: a Flask app factory, one blueprint per resource
(``service.api``), marshmallow schemas (``service.schemas``), seat-token auth and one problem+json
error shape. The contract is openapi.yaml; its Python client is ``rfg-client`` (``clients/python/``).

``service.create_app`` is the API alone. It cannot dispatch bot turns (the service never imports
the workers), so it refuses ``DISPATCH_TURNS`` (``RFG_DISPATCH=1``) rather than start an API that
silently enqueues nothing: the app hosts run is ``rfgcli.wsgi:create_app()``, which attaches the
workers' dispatcher (``rfg run`` serves it).
"""

from __future__ import annotations

import os
from collections.abc import Mapping
from typing import Any

from flask import Flask

from service import app as _app
from service.config import resolve

__all__ = ["create_app"]

DISPATCH_NEEDS_WSGI = (
    "RFG_DISPATCH=1 (DISPATCH_TURNS) asks the API to enqueue bot turns, but service:create_app() "
    "is the API alone and has no dispatcher: it would enqueue nothing and bot games would crawl "
    "on the workers' sweep. Serve gunicorn 'rfgcli.wsgi:create_app()' instead (as rfg run does), "
    "or unset RFG_DISPATCH."
)


def create_app(config: Mapping[str, Any] | None = None) -> Flask:
    """The API app without the workers' dispatcher; ``ValueError`` under ``DISPATCH_TURNS``."""
    if resolve(config, os.environ).get("DISPATCH_TURNS"):
        raise ValueError(DISPATCH_NEEDS_WSGI)
    return _app.create_app(config)
