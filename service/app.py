"""The Flask app factory: ``create_app(config=None)``.

It resolves the configuration (see ``service.config``), connects the store (``service.backend``),
installs the problem+json error handlers (``service.errors``) and registers one blueprint per
resource (``service.api``). Run it with ``make run`` (gunicorn) or ``flask --app service run``.
"""

from __future__ import annotations

import os
from collections.abc import Mapping
from typing import Any

from flask import Flask

from service import (
    ambition,
    backend,
    deadlines,
    errors,
    headers,
    http,
    limits,
    logs,
    metrics,
    openings,
    web,
)
from service.api import BLUEPRINTS
from service.config import resolve
from service.routing import AsciiIntConverter, GameIdConverter


def create_app(config: Mapping[str, Any] | None = None) -> Flask:
    app = Flask("service", static_folder=None)
    app.config.update(resolve(config, os.environ))
    ambition.init_app(app)  # the host's Ambition component file, if any (a bad one stops here)
    app.url_map.converters["gid"] = GameIdConverter
    app.url_map.converters["int"] = AsciiIntConverter  # /seats/3, never /seats/٣
    app.url_map.strict_slashes = False
    logs.init_app(app)  # request id, JSON log context, one access line per request
    openings.init_app(app)  # event streams open a few at a time (first of the hooks)
    headers.init_app(app)  # nosniff, no framing, CSP (service.headers)
    errors.init_app(app)
    http.init_app(app)  # bodies: size limits on chunked bodies too, UTF-8 only
    deadlines.init_app(app)  # bodies: time limits (under gevent)
    store = backend.init_app(app)
    for bp in BLUEPRINTS:
        app.register_blueprint(bp)
    app.register_blueprint(web.bp)  # the web client under /play/
    metrics.init_app(app, store.client, store.games, store.queue_client)  # GET /metrics
    limits.init_app(app, store.client, store.store.prefix)  # after the routes
    return app
