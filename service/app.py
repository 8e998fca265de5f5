"""The Flask app factory: ``create_app(config=None)``.

It resolves the configuration (see ``service.config``), connects the store (``service.backend``),
installs the problem+json error handlers (``service.errors``) and registers one blueprint per
resource (``service.api``). Run it with ``make run`` (gunicorn) or ``flask --app service run``.

The app is a ``ServiceFlask``: Flask whose ``ensure_sync`` (asked of every hook, view and handler
a request calls) knows the app's own plain ``def`` functions without inspecting them each time.
"""

from __future__ import annotations

import inspect
import os
from collections.abc import Callable, Mapping
from typing import Any

from flask import Flask

from service import backend, deadlines, errors, headers, http, limits, logs, metrics, web
from service.api import BLUEPRINTS
from service.config import resolve
from service.routing import AsciiIntConverter, GameIdConverter


class ServiceFlask(Flask):
    """Flask, whose ``ensure_sync`` answers the app's own views, hooks and error handlers without
    inspecting each again on every request (Flask asks it of each one it calls: four hooks and a
    view per request at least).

    ``remember_plain_functions`` (once the app is built) keeps those of its functions that are
    not coroutine functions; ``ensure_sync`` returns them as they are - what Flask's own does with
    a plain function. Any other (one registered later, an ``after_this_request`` callback) goes
    through Flask's own check."""

    _plain: frozenset[Callable[..., Any]] = frozenset()

    def ensure_sync(self, func: Callable[..., Any]) -> Callable[..., Any]:
        try:
            if func in self._plain:
                return func
        except TypeError:  # an unhashable callable: not one of those kept
            pass
        return super().ensure_sync(func)

    def remember_plain_functions(self) -> None:
        """Keep the app's views, request hooks and error handlers that are plain functions."""
        found: list[Callable[..., Any]] = [*self.view_functions.values()]
        for table in (
            self.url_value_preprocessors,
            self.before_request_funcs,
            self.after_request_funcs,
            self.teardown_request_funcs,
        ):
            for funcs in table.values():
                found.extend(funcs)
        found.extend(self.teardown_appcontext_funcs)
        for by_code in self.error_handler_spec.values():
            for handlers in by_code.values():
                found.extend(handlers.values())
        self._plain = frozenset(func for func in found if _plain(func))


def _plain(func: Callable[..., Any]) -> bool:
    """Whether ``func`` is hashable and not a coroutine function."""
    try:
        hash(func)
    except TypeError:
        return False
    return not inspect.iscoroutinefunction(func)


def create_app(config: Mapping[str, Any] | None = None) -> Flask:
    app = ServiceFlask("service", static_folder=None)
    app.config.update(resolve(config, os.environ))
    app.url_map.converters["gid"] = GameIdConverter
    app.url_map.converters["int"] = AsciiIntConverter  # /seats/3, never /seats/٣
    app.url_map.strict_slashes = False
    logs.init_app(app)  # request id, JSON log context, one access line per request
    headers.init_app(app)  # nosniff, no framing, CSP (service.headers)
    errors.init_app(app)
    http.init_app(app)  # bodies: size limits on chunked bodies too, UTF-8 only
    deadlines.init_app(app)  # bodies: time limits (under gevent)
    store = backend.init_app(app)
    for bp in BLUEPRINTS:
        app.register_blueprint(bp)
    app.register_blueprint(web.bp)  # the web client under /play/
    metrics.init_app(app, store.client, store.games, store.queue_client)  # GET /metrics
    limits.init_app(
        app, store.client, store.store.prefix, gates=store.store.gates
    )  # after the routes
    app.remember_plain_functions()  # last: every hook, view and handler registered
    return app
