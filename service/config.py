"""Configuration of the API app: defaults, the environment, and what ``create_app`` is given.

| key | default | environment |
| --- | --- | --- |
| ``STORE_URL`` (alias ``REDIS_URL``) | ``None``: the embedded server in ``./run/redis`` | ``REDIS_URL`` (or ``RFG_STORE_URL``) |
| ``STORE_PREFIX`` | ``rfg`` (key prefix in Redis) | ``RFG_STORE_PREFIX`` |
| ``QUEUE_URL`` | ``None``: the store's URL (a plain Redis for RQ; required with a ``redis+cluster://`` store and ``DISPATCH_TURNS``) | ``RFG_QUEUE_URL`` |
| ``ADMIN_TOKEN`` | none: no admin | ``RFG_ADMIN_TOKEN`` |
| ``MAX_CONTENT_LENGTH`` | 64 KiB (JSON bodies) | |
| ``REPLAY_MAX_BYTES`` | 32 MiB (uploaded logs) | |
| ``SSE_MAX_SECONDS`` | 300 (then the client reconnects) | ``RFG_SSE_MAX_SECONDS`` |
| ``SSE_KEEPALIVE_SECONDS`` | 15 | |
| ``DECISIONS_POLL_SECONDS`` | 0.2 (how often a bot account's decisions stream looks at its games) | |
| ``BOT_REGISTRATION`` | ``open``: anybody may register a bot account; ``admin``: only with the admin token | ``RFG_BOT_REGISTRATION`` |
| ``DISPATCH_TURNS`` | off: the workers' sweep finds bot turns and timeouts; on: they are enqueued right after each command | ``RFG_DISPATCH=1`` |
| ``RATE_LIMITS`` | on: every limit below applies (off: none does; benchmarks, tests) | ``RFG_RATE_LIMITS=0`` |
| ``LIMIT_PER_ADDRESS`` | ``1200 per minute``: every request of one client address (health checks excepted) | ``RFG_LIMIT_PER_ADDRESS`` |
| ``LIMIT_CREATE_GAME`` | ``20 per minute;200 per hour`` per address (``POST /games``) | ``RFG_LIMIT_CREATE_GAME`` |
| ``LIMIT_REGISTER_BOT`` | ``5 per minute;20 per day`` per address (``POST /bots/accounts``) | ``RFG_LIMIT_REGISTER_BOT`` |
| ``LIMIT_CLAIM`` | ``30 per minute`` per address (seat claims and token rotations) | ``RFG_LIMIT_CLAIM`` |
| ``LIMIT_COMMANDS`` | ``600 per minute`` per token (per address without one) | ``RFG_LIMIT_COMMANDS`` |
| ``LIMIT_REPLAY_UPLOADS`` | ``6 per minute;60 per hour`` per address (``POST /replays/verify``) | ``RFG_LIMIT_REPLAY_UPLOADS`` |
| ``LIMIT_STREAM_OPENS`` | ``60 per minute`` per token or address (SSE streams opened) | ``RFG_LIMIT_STREAM_OPENS`` |
| ``LIMIT_SAMPLES`` | ``30 per minute`` per token (``GET .../seats/{n}/samples``: each request draws up to 20 states) | ``RFG_LIMIT_SAMPLES`` |
| ``MAX_STREAMS_PER_TOKEN`` | 4 streams open at once per token (per address without one) | ``RFG_MAX_STREAMS_PER_TOKEN`` |
| ``MAX_STREAMS_PER_ADDRESS`` | 20 streams open at once per address | ``RFG_MAX_STREAMS_PER_ADDRESS`` |
| ``LIMIT_BAD_TOKENS`` | ``20 per minute`` per address: requests that carried a token and got 401; past it, every request with a token gets 429 | ``RFG_LIMIT_BAD_TOKENS`` |
| ``MAX_OPEN_GAMES_PER_ADDRESS`` | 20 unfinished games created by one address (0: no quota) | ``RFG_MAX_OPEN_GAMES_PER_ADDRESS`` |
| ``ABANDONED_GAME_SECONDS`` | 3600: a game created over the API that no one claimed expires, with every key it holds, after this long without a command (0: never) | ``RFG_ABANDONED_GAME_SECONDS`` |
| ``FINISHED_GAME_SECONDS`` | 0: finished games are kept for good; N: they expire N seconds after their last event | ``RFG_FINISHED_GAME_SECONDS`` |
| ``PROXY_HOPS`` | 0: the client address is the peer's; N: trust N reverse proxies' ``X-Forwarded-For`` | ``RFG_PROXY_HOPS`` |

Limits are Flask-Limiter strings (``"20 per minute;200 per hour"``), kept on the store (the app's
Redis, under ``<prefix>:limits``; in-memory for a ``memory://`` store); the admin token is exempt.

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
    "QUEUE_URL": None,
    "ADMIN_TOKEN": None,
    "MAX_CONTENT_LENGTH": 64 * 1024,
    "REPLAY_MAX_BYTES": 32 * 1024 * 1024,
    "SSE_MAX_SECONDS": 300.0,
    "SSE_KEEPALIVE_SECONDS": 15.0,
    "DECISIONS_POLL_SECONDS": 0.2,
    "DISPATCH_TURNS": False,
    "BOT_REGISTRATION": "open",
    "RATE_LIMITS": True,
    "LIMIT_PER_ADDRESS": "1200 per minute",
    "LIMIT_CREATE_GAME": "20 per minute;200 per hour",
    "LIMIT_REGISTER_BOT": "5 per minute;20 per day",
    "LIMIT_CLAIM": "30 per minute",
    "LIMIT_COMMANDS": "600 per minute",
    "LIMIT_REPLAY_UPLOADS": "6 per minute;60 per hour",
    "LIMIT_STREAM_OPENS": "60 per minute",
    "LIMIT_SAMPLES": "30 per minute",
    "MAX_STREAMS_PER_TOKEN": 4,
    "MAX_STREAMS_PER_ADDRESS": 20,
    "LIMIT_BAD_TOKENS": "20 per minute",
    "MAX_OPEN_GAMES_PER_ADDRESS": 20,
    "ABANDONED_GAME_SECONDS": 3600,
    "FINISHED_GAME_SECONDS": 0,
    "PROXY_HOPS": 0,
    "OPENAPI_PATH": os.path.join(os.path.dirname(os.path.dirname(__file__)), "openapi.yaml"),
}


def from_env(environ: Mapping[str, str]) -> dict[str, Any]:
    out: dict[str, Any] = {}
    url = environ.get("RFG_STORE_URL") or environ.get("REDIS_URL")
    if url:
        out["STORE_URL"] = url
    if environ.get("RFG_QUEUE_URL"):
        out["QUEUE_URL"] = environ["RFG_QUEUE_URL"]
    if environ.get("RFG_STORE_PREFIX"):
        out["STORE_PREFIX"] = environ["RFG_STORE_PREFIX"]
    if environ.get("RFG_ADMIN_TOKEN"):
        out["ADMIN_TOKEN"] = environ["RFG_ADMIN_TOKEN"]
    if environ.get("RFG_DISPATCH"):
        out["DISPATCH_TURNS"] = environ["RFG_DISPATCH"].strip().lower() not in (
            "0",
            "false",
            "no",
            "off",
        )
    if environ.get("RFG_BOT_REGISTRATION"):
        out["BOT_REGISTRATION"] = environ["RFG_BOT_REGISTRATION"].strip().lower()
    if environ.get("RFG_SSE_MAX_SECONDS"):
        out["SSE_MAX_SECONDS"] = float(environ["RFG_SSE_MAX_SECONDS"])
    for key in _LIMIT_STRINGS + _LIMIT_NUMBERS:
        value = environ.get(f"RFG_{key}", "").strip()
        if value:
            out[key] = int(value) if key in _LIMIT_NUMBERS and value.isdigit() else value
    if environ.get("RFG_RATE_LIMITS"):
        out["RATE_LIMITS"] = _on(environ["RFG_RATE_LIMITS"])
    return out


_LIMIT_STRINGS = (
    "LIMIT_PER_ADDRESS",
    "LIMIT_CREATE_GAME",
    "LIMIT_REGISTER_BOT",
    "LIMIT_CLAIM",
    "LIMIT_COMMANDS",
    "LIMIT_REPLAY_UPLOADS",
    "LIMIT_STREAM_OPENS",
    "LIMIT_BAD_TOKENS",
    "LIMIT_SAMPLES",
)
_LIMIT_NUMBERS = (
    "MAX_STREAMS_PER_TOKEN",
    "MAX_STREAMS_PER_ADDRESS",
    "MAX_OPEN_GAMES_PER_ADDRESS",
    "ABANDONED_GAME_SECONDS",
    "FINISHED_GAME_SECONDS",
    "PROXY_HOPS",
)


def _on(value: str) -> bool:
    return value.strip().lower() not in ("0", "false", "no", "off")


def _check_limits(out: dict[str, Any]) -> None:
    from limits import parse_many

    for key in _LIMIT_STRINGS:
        try:
            parse_many(str(out[key]))
        except ValueError:
            raise ValueError(
                f"{key} (RFG_{key}) is {out[key]!r}; give rates such as "
                "'20 per minute;200 per hour'"
            ) from None
    for key in _LIMIT_NUMBERS:
        if not isinstance(out[key], int) or isinstance(out[key], bool) or out[key] < 0:
            raise ValueError(f"{key} (RFG_{key}) is {out[key]!r}; give a whole number >= 0")


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
        raise ValueError(
            f"BOT_REGISTRATION (RFG_BOT_REGISTRATION) is {out['BOT_REGISTRATION']!r}; "
            "set it to 'open' (anybody registers bot accounts) or 'admin' (only with "
            "the admin token)"
        )
    if out["BOT_REGISTRATION"] == "admin" and not out.get("ADMIN_TOKEN"):
        raise ValueError("BOT_REGISTRATION=admin needs an admin token: set RFG_ADMIN_TOKEN too")
    _check_limits(out)
    return out
