"""Fixtures shared by every test package: the real Redis at ``$REDIS_URL``.

Locally a missing server skips the tests that need it; when the ``CI`` environment variable is
set it fails them, so CI always proves the real-Redis paths.
"""

from __future__ import annotations

import os
from collections.abc import Iterator
from typing import Any, NoReturn

import pytest
import redis

REDIS_URL = os.environ.get("REDIS_URL", "redis://127.0.0.1:6379/0")


def in_ci() -> bool:
    return os.environ.get("CI", "").strip().lower() not in ("", "0", "false", "no")


def unavailable(reason: str) -> NoReturn:
    """Skip locally; fail under CI, where every adapter must really be tested."""
    if in_ci():
        pytest.fail(f"{reason} (CI is set, so this is a failure, not a skip)")
    pytest.skip(reason)


@pytest.fixture(scope="session")
def real_redis() -> Iterator[Any]:
    """A client of the real Redis at ``$REDIS_URL`` (skip locally / fail under CI without one)."""
    client = redis.Redis.from_url(REDIS_URL, socket_connect_timeout=2)
    try:
        client.ping()
    except (redis.ConnectionError, redis.TimeoutError) as exc:
        client.close()
        unavailable(f"no Redis at REDIS_URL={REDIS_URL} ({exc}); start one or set REDIS_URL")
    yield client
    client.close()
