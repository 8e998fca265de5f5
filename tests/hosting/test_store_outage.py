"""The API while its Redis is gone or stalled: every endpoint answers 503 problem+json with
``Retry-After`` (not 500), a stalled Redis (SIGSTOP) within a bounded time, and everything works
again with every acknowledged write kept once Redis is back. Real processes: a redis-server of the
test's own (AOF always) and the API under gunicorn."""

from __future__ import annotations

import json
import signal
import time
import urllib.request
from collections.abc import Callable
from typing import Any
from urllib.error import HTTPError

import pytest

from events.config import COMMAND_TIMEOUT
from tests.processes import Proc

from .conftest import RedisServer

pytestmark = pytest.mark.slow


def call(
    base: str,
    method: str,
    path: str,
    body: Any = None,
    token: str | None = None,
    timeout: float = 30,
) -> tuple[int, dict[str, str], Any, float]:
    """(status, headers, parsed body, seconds) of one request."""
    data = None if body is None else json.dumps(body).encode()
    req = urllib.request.Request(base + path, data=data, method=method)
    if data is not None:
        req.add_header("Content-Type", "application/json")
    if token:
        req.add_header("Authorization", f"Bearer {token}")
    started = time.monotonic()
    try:
        with urllib.request.urlopen(req, timeout=timeout) as resp:
            status, headers, raw = resp.status, dict(resp.headers.items()), resp.read()
    except HTTPError as exc:
        status, headers, raw = exc.code, dict(exc.headers.items()), exc.read()
    took = time.monotonic() - started
    return status, headers, json.loads(raw) if raw else None, took


def assert_unavailable(answer: tuple[int, dict[str, str], Any, float], bound: float) -> None:
    status, headers, body, took = answer
    assert status == 503, (status, body)
    assert headers["Content-Type"].startswith("application/problem+json")
    assert body["type"] == "/problems/store-unavailable" and body["status"] == 503
    assert "retry" in body["detail"].lower()
    assert int(headers["Retry-After"]) > 0
    assert took < bound, f"the 503 took {took:.1f}s (bound {bound}s)"


def test_the_api_answers_503_while_redis_is_down_or_stalled(
    own_redis: RedisServer, start_api: Callable[..., tuple[Proc, str]]
) -> None:
    api_proc, base = start_api(own_redis.url, "outage")
    status, _, game, _ = call(
        base, "POST", "/games", {"seats": [{"kind": "human"}, {"kind": "human"}]}
    )
    assert status == 201, game
    gid = game["game_id"]
    _, _, claim, _ = call(base, "POST", f"/games/{gid}/seats/0/claim")
    token = claim["token"]
    _, _, view, _ = call(base, "GET", f"/games/{gid}/seats/0/view", token=token)
    version = view["version"]

    own_redis.kill()
    probes = [
        ("GET", f"/games/{gid}", None, None),
        ("GET", f"/games/{gid}/seats/0/view", None, token),
        ("GET", "/games", None, None),
        ("POST", "/games", {"seats": [{"kind": "human"}, {"kind": "human"}]}, None),
        ("POST", f"/games/{gid}/seats/1/claim", None, None),
        ("GET", f"/games/{gid}/events", None, None),
    ]
    down: list[float] = []
    for method, path, body, tok in probes:
        answer = call(base, method, path, body, tok)
        assert_unavailable(answer, bound=3.0)
        down.append(round(answer[3], 3))
    status, headers, body, _ = call(base, "GET", "/readyz")
    assert status == 503 and "Retry-After" in headers

    own_redis.start()  # same port, same AOF: what was acknowledged is there
    status, _, view2, _ = call(base, "GET", f"/games/{gid}/seats/0/view", token=token)
    assert status == 200 and view2["version"] == version, "the seat token and the game survived"

    # stalled, not gone: the process still holds the port but answers nothing
    own_redis.signal(signal.SIGSTOP)
    try:
        bound = COMMAND_TIMEOUT + 2.5
        stalled = [
            call(base, "GET", f"/games/{gid}", timeout=60),
            call(base, "GET", f"/games/{gid}/seats/0/view", token=token, timeout=60),
        ]
        for answer in stalled:
            assert_unavailable(answer, bound=bound)
    finally:
        own_redis.signal(signal.SIGCONT)
    status, _, _, took = call(base, "GET", f"/games/{gid}")
    assert status == 200 and took < 2.0
    print(json.dumps({"down_s": down, "stalled_s": [round(a[3], 2) for a in stalled]}))
    log = api_proc.log()
    assert "unhandled error" not in log, log[-3000:]
