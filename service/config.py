"""Configuration of the API app: defaults, the environment, and what ``create_app`` is given.

A setting the environment gives is its variable's name without ``RFG_`` (``FROM_ENV``;
``STORE_URL`` comes from ``RFG_STORE_URL`` or ``REDIS_URL``, ``DISPATCH_TURNS`` from
``RFG_DISPATCH``): what each sets, what it accepts and its default are in
``docs/configuration.md``, generated from ``events.config``. The settings no variable gives:

| key | default |
| --- | --- |
| ``MAX_CONTENT_LENGTH`` | 64 KiB (JSON bodies) |
| ``REPLAY_MAX_BYTES`` | 32 MiB (uploaded logs) |
| ``SSE_KEEPALIVE_SECONDS`` | 15 |
| ``STREAM_OPENINGS`` | 8: event streams one API process opens at a time (``service.openings``: the others wait their turn, so short requests are not queued behind a crowd of openings) |
| ``API_REDIS_CONNECTIONS`` | 64: the most Redis connections one API process opens (requests beyond wait for one, up to ``RFG_REDIS_TIMEOUT``, then 503); event streams hold none while they wait |
| ``DECISIONS_POLL_SECONDS`` | 5 (how often a bot account's decisions stream looks at its games, a safety net: decisions are pushed by the append) |
| ``MAX_OPEN_CHALLENGES`` | 10 open challenges per bot account (``POST /challenges``; 0: no quota; with ``RATE_LIMITS`` off too) |
| ``CHALLENGES_PER_MINUTE`` | 10 challenges to other accounts a bot account makes a minute (0: no limit; with ``RATE_LIMITS`` off too); challenges of the built-in bots only have no rate: at most ``MAX_OPEN_CHALLENGES`` of their games unfinished |
| ``CHALLENGE_SECONDS`` | 120: an open challenge expires after this long unanswered |

Limits are rate strings of the `limits` library (``"20 per minute;200 per hour"``), kept on the store (the app's
Redis, under ``<prefix>:limits``; its fakeredis for a ``memory://`` store); the admin token is exempt.

Store URLs are those of ``events.store.connect``: ``redis://``, ``unix://``, ``embedded://<dir>``,
``memory://<name>`` (fakeredis, one process only: tests).
"""

from __future__ import annotations

import os
from collections.abc import Mapping
from typing import Any

from events import config as environment
from events.config import IPV6_PREFIX_BOUNDS, LIMIT_NUMBERS, LIMIT_RATES

#: the settings the environment may give: setting -> variable (``events.config`` reads and
#: checks them all, and holds their defaults); ``STORE_URL`` comes from ``RFG_STORE_URL`` or
#: ``REDIS_URL``
FROM_ENV: dict[str, str] = {
    "QUEUE_URL": "RFG_QUEUE_URL",
    "STORE_PREFIX": "RFG_STORE_PREFIX",
    "ADMIN_TOKEN": "RFG_ADMIN_TOKEN",
    "AMBITION_COMPONENTS": "RFG_AMBITION_COMPONENTS",
    "DISPATCH_TURNS": "RFG_DISPATCH",
    "BOT_REGISTRATION": "RFG_BOT_REGISTRATION",
    "SSE_MAX_SECONDS": "RFG_SSE_MAX_SECONDS",
    "SSE_SEND_SECONDS": "RFG_SSE_SEND_SECONDS",
    "BODY_READ_SECONDS": "RFG_BODY_READ_SECONDS",
    "RATE_LIMITS": "RFG_RATE_LIMITS",
    "LIMIT_IPV6_PREFIX": "RFG_LIMIT_IPV6_PREFIX",
    **{key: f"RFG_{key}" for key in (*LIMIT_RATES, *LIMIT_NUMBERS)},
}

DEFAULTS: dict[str, Any] = {
    "STORE_URL": None,
    **{key: environment.VARIABLES[var].default for key, var in FROM_ENV.items()},
    "MAX_CONTENT_LENGTH": 64 * 1024,
    "REPLAY_MAX_BYTES": 32 * 1024 * 1024,
    "SSE_KEEPALIVE_SECONDS": 15.0,
    "API_REDIS_CONNECTIONS": 64,
    "STREAM_OPENINGS": 8,
    "DECISIONS_POLL_SECONDS": 5.0,
    "MAX_OPEN_CHALLENGES": 10,
    "CHALLENGES_PER_MINUTE": 10,
    "CHALLENGE_SECONDS": 120,
    "OPENAPI_PATH": os.path.join(os.path.dirname(os.path.dirname(__file__)), "openapi.yaml"),
}


def from_env(environ: Mapping[str, str]) -> dict[str, Any]:
    """The settings the environment sets (``events.config.read``: raises ``ValueError``
    naming a variable whose value is not accepted)."""
    env = environment.read(environ)
    out: dict[str, Any] = {key: env.get(var) for key, var in FROM_ENV.items() if env.is_set(var)}
    if env.store_url:
        out["STORE_URL"] = env.store_url
    return out


def _check_limits(out: dict[str, Any]) -> None:
    """The limits given to ``create_app`` (the environment's are checked when read)."""
    from limits import parse_many

    for key in LIMIT_RATES:
        try:
            parse_many(str(out[key]))
        except ValueError:
            raise ValueError(
                f"{key} (RFG_{key}) is {out[key]!r}; give rates such as "
                "'20 per minute;200 per hour'"
            ) from None
    for key in LIMIT_NUMBERS:
        if not isinstance(out[key], int) or isinstance(out[key], bool) or out[key] < 0:
            raise ValueError(f"{key} (RFG_{key}) is {out[key]!r}; give a whole number >= 0")
    low, high = IPV6_PREFIX_BOUNDS
    prefix = out["LIMIT_IPV6_PREFIX"]
    if not isinstance(prefix, int) or isinstance(prefix, bool) or not low <= prefix <= high:
        raise ValueError(
            f"LIMIT_IPV6_PREFIX (RFG_LIMIT_IPV6_PREFIX) is {prefix!r}; give a whole number "
            f"from {low} to {high} (the prefix length whose IPv6 addresses share the limits)"
        )


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
