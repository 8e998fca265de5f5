"""The WSGI app as hosts run it: the API (``service.app.create_app``) with, under ``DISPATCH_TURNS``
(``RFG_DISPATCH=1``), the workers' dispatcher attached to its ``GameService``, so that the bot turns and
timeouts a command makes due are enqueued right after it is stored.

This is where the two layers meet: the service never imports the workers (``make lint`` checks
it), so the app that needs both is put together here. Run it with
``gunicorn 'rfgcli.wsgi:create_app()'`` (``rfg run`` and ``make run`` do). ``service:create_app()``
is the API alone: it refuses ``RFG_DISPATCH=1``, which only this app can honour.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from flask import Flask

from service import app as api
from workers.runtime import attach


def create_app(config: Mapping[str, Any] | None = None) -> Flask:
    app = api.create_app(config)
    if app.config.get("DISPATCH_TURNS"):  # the backend has refused a cluster without a queue URL
        b = app.extensions["rfg"]
        b.dispatcher = attach(b.games, b.client, queue_client=b.queue_client)
    return app
