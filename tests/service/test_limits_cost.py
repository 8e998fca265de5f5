"""What the rate limits cost a request, against the real Redis, and that the cheaper way counts
and answers exactly as limits' own sliding-window counter does.

* one Redis round trip per limit and request: a command (bad-token check, per-address and
  per-token hits) makes three, the ``RateLimit`` header read no fourth;
* the hit (``service.limits.ACQUIRE_SLIDING_WINDOW_LUA``) leaves the same counters and expiries
  on the same keys as limits' ``acquire_sliding_window.lua``, accepts and refuses alike, and the
  window it answers is the one limits' ``sliding_window.lua`` reads right after (window shifts
  included);
* the headers carry what limits' ``get_window_stats`` reads from the store after the request.
"""

from __future__ import annotations

import math
import re
import time
import uuid
from collections.abc import Callable, Iterator
from typing import Any

import pytest
import redis
from flask import Flask
from limits import parse
from limits.storage import RedisStorage
from limits.strategies import SlidingWindowCounterRateLimiter

from service.limits import HitWindowRedisStorage
from tests.conftest import REDIS_URL

from .conftest import ValidatingClient, bearer, new_game
from .test_limits import limited as _limited

pytestmark = pytest.mark.redis
limited = _limited  # the fixture: API clients on the real Redis, limits on


@pytest.fixture
def storages(real_redis: Any) -> Iterator[tuple[HitWindowRedisStorage, RedisStorage, str]]:
    """(the app's storage, limits' own storage) on the real Redis, each under its own prefix."""
    prefix = f"t{uuid.uuid4().hex[:12]}"
    pool = redis.ConnectionPool.from_url(REDIS_URL)
    ours = HitWindowRedisStorage("rfg+redis://", connection_pool=pool, key_prefix=f"{prefix}:a")
    theirs = RedisStorage("redis://", connection_pool=pool, key_prefix=f"{prefix}:b")
    yield ours, theirs, prefix
    for key in real_redis.scan_iter(match=f"{prefix}:*", count=1000):
        real_redis.delete(key)
    pool.disconnect()


def _state(client: Any, prefix: str, key: str) -> tuple[Any, ...]:
    """(previous count, previous ttl ms, current count, current ttl ms) of a limit's keys."""
    cur, prev = f"{prefix}:{{{key}}}", f"{prefix}:{{{key}}}/-1"
    return client.get(prev), client.pttl(prev), client.get(cur), client.pttl(cur)


def _same_state(a: tuple[Any, ...], b: tuple[Any, ...]) -> None:
    assert (a[0], a[2]) == (b[0], b[2]), (a, b)  # the counts
    for ta, tb in ((a[1], b[1]), (a[3], b[3])):  # the expiries (ms; the calls are ms apart)
        assert (ta < 0) == (tb < 0) and abs(ta - tb) <= 150, (a, b)


def _same_window(a: tuple[Any, ...], b: tuple[Any, ...]) -> None:
    assert (a[0], a[2]) == (b[0], b[2]), (a, b)
    assert abs(a[1] - b[1]) <= 0.15 and abs(a[3] - b[3]) <= 0.15, (a, b)


def test_the_hit_counts_as_limits_does_and_answers_the_window_read_after_it(
    storages: tuple[HitWindowRedisStorage, RedisStorage, str], real_redis: Any
) -> None:
    ours, theirs, prefix = storages
    app = Flask(__name__)  # the answered window is kept for the request that hit
    for amount, expiry, cost in ((3, 1, 1), (2, 60, 1), (1, 60, 2)):
        key = f"LIMITS/k{amount}/{expiry}"
        results: list[tuple[bool, bool]] = []
        for step in range(6):
            if step == 4:
                time.sleep(1.05)  # a 1-second limit: its current window ends; the next hit shifts
            with app.test_request_context():
                a = ours.acquire_sliding_window_entry(key, amount, expiry, cost)
                b = theirs.acquire_sliding_window_entry(key, amount, expiry, cost)
                results.append((a, b))
                _same_state(
                    _state(real_redis, f"{prefix}:a", key), _state(real_redis, f"{prefix}:b", key)
                )
                # the window the hit answered, as limits reads it right after (theirs reads Redis)
                _same_window(
                    ours.get_sliding_window(key, expiry), theirs.get_sliding_window(key, expiry)
                )
                # read once: the next read is the store's again
                _same_window(
                    ours.get_sliding_window(key, expiry), theirs.get_sliding_window(key, expiry)
                )
        assert all(a == b for a, b in results), results
        assert {a for a, _ in results} == ({False} if cost > amount else {True, False})


def test_a_window_that_ends_between_the_hit_and_the_read_is_read_shifted(
    storages: tuple[HitWindowRedisStorage, RedisStorage, str],
) -> None:
    ours, theirs, _ = storages
    key = "LIMITS/shift"
    with Flask(__name__).test_request_context():
        assert ours.acquire_sliding_window_entry(key, 5, 1)
        assert theirs.acquire_sliding_window_entry(key, 5, 1)
        time.sleep(1.05)  # the current window (2 s from its first hit) has less than 1 s left
        got, want = ours.get_sliding_window(key, 1), theirs.get_sliding_window(key, 1)
    assert got[0] == 1 and got[2] == 0, got  # the hit moved to the previous window
    _same_window(got, want)


def test_a_hit_outside_a_request_keeps_nothing(
    storages: tuple[HitWindowRedisStorage, RedisStorage, str],
) -> None:
    ours, theirs, _ = storages
    assert ours.acquire_sliding_window_entry("LIMITS/bare", 5, 60)
    assert theirs.acquire_sliding_window_entry("LIMITS/bare", 5, 60)
    _same_window(
        ours.get_sliding_window("LIMITS/bare", 60), theirs.get_sliding_window("LIMITS/bare", 60)
    )


class _Sent:
    """The commands this process sends to Redis that touch the limits' keys."""

    def __init__(self, marker: str) -> None:
        self.marker = marker
        self.commands: list[tuple[Any, ...]] = []

    def __enter__(self) -> _Sent:
        self._original = original = redis.connection.AbstractConnection.send_command

        def send_command(conn: Any, *args: Any, **kwargs: Any) -> Any:
            if any(isinstance(a, str) and self.marker in a for a in args):
                self.commands.append(args)
            return original(conn, *args, **kwargs)

        redis.connection.AbstractConnection.send_command = send_command  # type: ignore[method-assign, assignment]
        return self

    def __exit__(self, *exc: object) -> None:
        redis.connection.AbstractConnection.send_command = self._original  # type: ignore[method-assign]


def _command(api: ValidatingClient, gid: str, token: str, cid: str) -> Any:
    return api.post(
        f"/games/{gid}/seats/0/commands",
        headers=bearer(token),
        json={"command_id": cid, "command": {"kind": "start_tiles", "development": 1}},
    )


def test_a_command_makes_one_round_trip_per_limit_and_its_headers_are_the_stores(
    limited: Callable[..., ValidatingClient], real_redis: Any
) -> None:
    api = limited(LIMIT_COMMANDS="50 per minute", LIMIT_PER_ADDRESS="1000 per minute")
    prefix = api.prefix  # type: ignore[attr-defined]
    gid, tokens = new_game(api, players=2)
    assert _command(api, gid, tokens[0], "warm").status_code in (201, 422)
    with _Sent(f"{prefix}:limits") as sent:
        r = _command(api, gid, tokens[0], "c1")
    assert r.status_code in (201, 422)
    # the bad-token check (a read), the per-address hit, the per-token hit: nothing more
    assert len(sent.commands) == 3, sent.commands
    assert all(c[0] == "EVALSHA" for c in sent.commands)
    # the headers: what limits' own strategy reads from the store right after
    m = re.fullmatch(r'"commands";r=(\d+);t=(\d+)', r.headers["RateLimit"])
    assert m and r.headers["RateLimit-Policy"] == '"commands";q=50;w=60'
    pool = redis.ConnectionPool.from_url(REDIS_URL)
    try:
        store = RedisStorage("redis://", connection_pool=pool, key_prefix=f"{prefix}:limits")
        reset, remaining = SlidingWindowCounterRateLimiter(store).get_window_stats(
            parse("50 per minute"), prefix, _token_key(tokens[0]), "commands"
        )
    finally:
        pool.disconnect()
    assert int(m.group(1)) == remaining == 48
    assert abs(int(m.group(2)) - max(0, math.ceil(int(reset + 1) - time.time()))) <= 1


def test_a_refused_command_answers_429_with_the_stores_wait(
    limited: Callable[..., ValidatingClient],
) -> None:
    api = limited(LIMIT_COMMANDS="2 per minute")
    gid, tokens = new_game(api, players=2)
    got = [_command(api, gid, tokens[0], f"c{i}") for i in range(3)]
    assert [r.status_code in (201, 422) for r in got[:2]] == [True, True]
    assert [r.headers["RateLimit"].split(";")[1] for r in got[:2]] == ["r=1", "r=0"]
    refused = got[2]
    assert refused.status_code == 429
    wait = int(refused.headers["Retry-After"])
    assert refused.get_json()["retry_after"] == wait and 1 <= wait <= 61
    m = re.fullmatch(r'"commands";r=0;t=(\d+)', refused.headers["RateLimit"])
    assert m and int(m.group(1)) in (wait, wait - 1), (refused.headers, wait)


def _token_key(token: str) -> str:
    import hashlib

    return "token:" + hashlib.sha256(token.encode()).hexdigest()[:32]
