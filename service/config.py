"""Configuration of the API app: defaults, the environment, and what ``create_app`` is given.

| key | default | environment |
| --- | --- | --- |
| ``STORE_URL`` (alias ``REDIS_URL``) | ``None``: the embedded server in ``./run/redis`` | ``REDIS_URL`` (or ``RFG_STORE_URL``) |
| ``STORE_PREFIX`` | ``rfg`` (key prefix in Redis) | ``RFG_STORE_PREFIX`` |
| ``ADMIN_TOKEN`` | none: no admin | ``RFG_ADMIN_TOKEN`` |
| ``MAX_CONTENT_LENGTH`` | 64 KiB (JSON bodies) | |
| ``REPLAY_MAX_BYTES`` | 32 MiB (uploaded logs) | |
| ``SSE_MAX_SECONDS`` | 300 (then the client reconnects) | ``RFG_SSE_MAX_SECONDS`` |
| ``SSE_KEEPALIVE_SECONDS`` | 15 | |
| ``DECISIONS_POLL_SECONDS`` | 0.2 (how often a bot account's decisions stream looks at its games) | |
| ``BOT_REGISTRATION`` | ``open``: anybody may register a bot account; ``admin``: only with the admin token | ``RFG_BOT_REGISTRATION`` |
| ``DISPATCH_TURNS`` | off: the workers' sweep finds bot turns and timeouts; on: they are enqueued right after each command | ``RFG_DISPATCH=1`` |

Store URLs are those of ``events.connect``: ``redis://``, ``unix://``, ``embedded://<dir>``,
``memory://<name>`` (fakeredis, one process only: tests).
"""

from __future__ import annotations

import os
from collections.abc import Mapping
from typing import Any

DEFAULTS: dict[str, Any] = {
    "STORE_URL": None,
    "STORE_PREFIX": "rfg",
    "ADMIN_TOKEN": None,
    "MAX_CONTENT_LENGTH": 64 * 1024,
    "REPLAY_MAX_BYTES": 32 * 1024 * 1024,
    "SSE_MAX_SECONDS": 300.0,
    "SSE_KEEPALIVE_SECONDS": 15.0,
    "DECISIONS_POLL_SECONDS": 0.2,
    "DISPATCH_TURNS": False,
    "BOT_REGISTRATION": "open",
    "OPENAPI_PATH": os.path.join(os.path.dirname(os.path.dirname(__file__)), "openapi.yaml"),
}


def from_env(environ: Mapping[str, str]) -> dict[str, Any]:
    out: dict[str, Any] = {}
    url = environ.get("RFG_STORE_URL") or environ.get("REDIS_URL")
    if url:
        out["STORE_URL"] = url
    if environ.get("RFG_STORE_PREFIX"):
        out["STORE_PREFIX"] = environ["RFG_STORE_PREFIX"]
    if environ.get("RFG_ADMIN_TOKEN"):
        out["ADMIN_TOKEN"] = environ["RFG_ADMIN_TOKEN"]
    if environ.get("RFG_DISPATCH"):
        out["DISPATCH_TURNS"] = environ["RFG_DISPATCH"].strip().lower() not in ("0", "false", "no", "off")
    if environ.get("RFG_BOT_REGISTRATION"):
        out["BOT_REGISTRATION"] = environ["RFG_BOT_REGISTRATION"].strip().lower()
    if environ.get("RFG_SSE_MAX_SECONDS"):
        out["SSE_MAX_SECONDS"] = float(environ["RFG_SSE_MAX_SECONDS"])
    return out


def resolve(config: Mapping[str, Any] | None, environ: Mapping[str, str]) -> dict[str, Any]:
    """Defaults, then the environment, then ``config`` (``REDIS_URL`` there means ``STORE_URL``).

    Raises ``ValueError`` for a setting the server cannot run with, naming what to set instead."""
    out = dict(DEFAULTS)
    out.update(from_env(environ))
    given = dict(config or {})
    if "REDIS_URL" in given and "STORE_URL" not in given:
        given["STORE_URL"] = given.pop("REDIS_URL")
    out.update(given)
    if out["BOT_REGISTRATION"] not in ("open", "admin"):
        raise ValueError(f"BOT_REGISTRATION (RFG_BOT_REGISTRATION) is {out['BOT_REGISTRATION']!r}; "
                         "set it to 'open' (anybody registers bot accounts) or 'admin' (only with "
                         "the admin token)")  # fmt: skip
    if out["BOT_REGISTRATION"] == "admin" and not out.get("ADMIN_TOKEN"):
        raise ValueError("BOT_REGISTRATION=admin needs an admin token: set RFG_ADMIN_TOKEN too")
    return out
