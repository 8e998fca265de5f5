"""What the rate limits cost a request, against the real Redis, and that the cheap way counts and
answers exactly as limits' own sliding-window counter does.

* one Redis round trip per request at most (two for a refused token: its count after the
  answer): a command (its token's general limit and its commands limit) sends one ``EVALSHA``,
  the ``RateLimit`` headers read nothing; measured twice, by what the server receives
  (``MONITOR``) and by the round trips of the limiter's client (a connection class that counts
  them);
* each limit is still enforced on that one path, in order (the general limit, the route's
  limit), a refused request consuming none of the limits after the one that refused it; the
  bad-token lockout refuses only refused tokens, after their answer;
* the counters (``events.store.limits.SLIDING_WINDOW_LUA``) count, accept and refuse as limits'
  ``SlidingWindowCounterRateLimiter`` on its Redis storage does, window shifts included, and
  answer the windows its ``get_window_stats`` reads right after;
* the headers carry what the store holds after the request.
"""

from __future__ import annotations

import hashlib
import math
import re
import time
import uuid
from collections.abc import Callable, Iterator
from typing import Any

import pytest
import redis
from limits.storage import RedisStorage
from limits.strategies import SlidingWindowCounterRateLimiter

from service import limits as service_limits
from service.backend import backend
from service.limits import Counters, Seen, aged, rates, stats
from tests.conftest import REDIS_URL

from .conftest import ADMIN, ValidatingClient, bearer, make_app, new_game
from .test_limits import limited as _limited

pytestmark = pytest.mark.redis
limited = _limited  # the fixture: API clients on the real Redis, limits on


class Monitor:
    """The commands Redis servers receive from clients (not those their scripts run) that name
    ``marker``, as the servers see them (``MONITOR``)."""

    def __init__(self, servers: list[Any], marker: str) -> None:
        self.servers, self.marker = servers, marker

    def __enter__(self) -> Monitor:
        self.monitors = [server.monitor() for server in self.servers]
        for m in self.monitors:
            m.__enter__()
        return self

    def __exit__(self, *exc: object) -> None:
        for m in self.monitors:
            m.__exit__()

    def commands(self) -> list[str]:
        """What they received since the last call: each server's, up to a marker sent now."""
        got: list[str] = []
        for server, m in zip(self.servers, self.monitors, strict=True):
            end = f"end-{uuid.uuid4().hex}"
            server.echo(end)
            while end not in (c := m.next_command())["command"]:
                if c["client_type"] != "lua" and self.marker in c["command"]:
                    got.append(c["command"])
        return got


def _command(api: Any, gid: str, token: str, cid: str, seat: int = 0, **kwargs: Any) -> Any:
    return api.post(
        f"/games/{gid}/seats/{seat}/commands",
        headers=bearer(token),
        json={"command_id": cid, "command": {"kind": "start_tiles", "development": 1}},
        **kwargs,
    )


#: what a command that got through the limits answers (applied, stale, or illegal in its deal)
ANSWERED = (201, 409, 422)


def _token_owner(token: str) -> str:
    return "token:" + hashlib.sha256(token.encode()).hexdigest()[:32]


def _read(client: Any, key: str, amount: int, window: int) -> tuple[int, float]:
    """(remaining, seconds to reset) of a counter, read from its keys the way limits'
    ``get_window_stats`` reads them (no shift: the current window here is fresh)."""
    previous, previous_ttl = int(client.get(key + "/-1") or 0), client.pttl(key + "/-1")
    current, current_ttl = int(client.get(key) or 0), client.pttl(key)
    previous_ttl, current_ttl = max(0, previous_ttl) / 1000, max(0, current_ttl) / 1000
    remaining = max(0, amount - math.floor(previous * previous_ttl / window + current))
    resets = [previous_ttl % (window / previous)] if previous else []
    resets += [current_ttl % window] if current else []
    return remaining, min(resets, default=0.0)


def test_a_command_makes_one_round_trip_and_its_headers_are_the_stores(
    limited: Callable[..., ValidatingClient], real_redis: Any
) -> None:
    api = limited(LIMIT_COMMANDS="50 per minute", LIMIT_PER_TOKEN="1000 per minute")
    prefix = api.prefix  # type: ignore[attr-defined]
    gid, tokens = new_game(api, players=2)
    assert _command(api, gid, tokens[0], "warm").status_code in ANSWERED
    with Monitor([real_redis], f"{prefix}:limits") as monitor:
        r = _command(api, gid, tokens[0], "c1")
        sent = monitor.commands()
    assert r.status_code in ANSWERED
    # one EVALSHA: the token's general limit, its commands limit, its address's general count
    assert len(sent) == 1 and sent[0].startswith("EVALSHA "), sent
    base = f"{prefix}:limits"
    owner = _token_owner(tokens[0])
    for key in (
        f"{base}:{{{owner}}}:per-token:1000/1/minute",
        f"{base}:{{{owner}}}:commands:50/1/minute",
        f"{base}:{{address:127.0.0.1}}:per-address:1200/1/minute",
    ):
        assert f" {key}/-1 {key} " in sent[0], (key, sent[0])
    assert "bad-tokens" not in sent[0], sent[0]
    # the headers: what the store holds right after (two commands counted)
    m = re.fullmatch(r'"commands";r=(\d+);t=(\d+)', r.headers["RateLimit"])
    assert m and r.headers["RateLimit-Policy"] == '"commands";q=50;w=60'
    remaining, reset = _read(real_redis, f"{base}:{{{owner}}}:commands:50/1/minute", 50, 60)
    assert int(m.group(1)) == remaining == 48
    assert abs(int(m.group(2)) - math.ceil(reset + 1)) <= 1


def test_round_trips_of_each_kind_of_request(
    limited: Callable[..., ValidatingClient], real_redis: Any
) -> None:
    """One for any request a limit applies to, none where none does; two for a request whose
    token was refused (the count after the answer)."""
    api = limited()
    prefix = api.prefix  # type: ignore[attr-defined]
    gid, tokens = new_game(api, players=2)
    view = f"/games/{gid}/seats/0/view"
    seats = {"seats": [{"kind": "human"}] * 2}
    requests: list[tuple[str, Callable[[], Any], tuple[int, ...], int]] = [
        ("a command", lambda: _command(api, gid, tokens[0], "c2"), ANSWERED, 1),
        ("a read", lambda: api.get(f"/games/{gid}"), (200,), 1),
        ("a read with a token", lambda: api.get(view, headers=bearer(tokens[0])), (200,), 1),
        ("a claim", lambda: api.post(f"/games/{gid}/seats/1/claim"), (409,), 1),
        ("a health check", lambda: api.get("/healthz"), (200,), 0),
        ("the admin", lambda: api.post("/games", json=seats, headers=bearer(ADMIN)), (201,), 0),
        ("an unknown URL", lambda: api.get("/nowhere", validate=False), (404,), 0),
        ("a refused token", lambda: api.get(view, headers=bearer("guess")), (401,), 2),
    ]
    assert _command(api, gid, tokens[0], "c1").status_code in ANSWERED  # the script is loaded
    with Monitor([real_redis], f"{prefix}:limits") as monitor:
        for what, send, status, trips in requests:
            r = send()
            assert r.status_code in status, (what, r.status_code)
            sent = monitor.commands()
            assert len(sent) == trips and all(c.startswith("EVALSHA ") for c in sent), (what, sent)


class _CountingConnection(redis.Connection):
    """A connection that counts its round trips: each write of commands (a pipeline's too)."""

    trips = 0

    def send_packed_command(self, command: Any, check_health: bool = True) -> None:
        type(self).trips += 1
        super().send_packed_command(command, check_health)


def test_the_limiter_makes_one_round_trip_per_command_on_its_client(real_redis: Any) -> None:
    """The limits installed on a client whose connections count their round trips: one a
    command."""
    prefix = f"t{uuid.uuid4().hex[:12]}"
    app = make_app(REDIS_URL, STORE_PREFIX=prefix)  # limits off: installed below
    app.config["RATE_LIMITS"] = True
    pool = redis.ConnectionPool.from_url(REDIS_URL, connection_class=_CountingConnection)
    counted = redis.Redis(connection_pool=pool)
    try:
        assert service_limits.init_app(app, counted, prefix) is not None
        api = app.test_client()
        gid, tokens = new_game(api, players=2)
        trips = []
        for i in range(4):
            before = _CountingConnection.trips
            r = _command(api, gid, tokens[0], f"c{i}")
            assert r.status_code in ANSWERED and r.headers["RateLimit"].startswith('"commands";r=')
            trips.append(_CountingConnection.trips - before)
        assert trips == [1, 1, 1, 1], trips
    finally:
        pool.disconnect()
        for key in real_redis.scan_iter(match=f"{prefix}:*", count=1000):
            real_redis.delete(key)


def test_each_limit_is_enforced_on_the_one_path_and_a_refusal_consumes_no_later_limit(
    limited: Callable[..., ValidatingClient], real_redis: Any
) -> None:
    """One round trip each: the general limit refuses before the route's limit is looked at; a
    refused request counts in the limits before the one that refused it (as with
    Flask-Limiter), none after it; the bad-token lockout refuses a refused token only, after
    the view."""
    api = limited(
        LIMIT_PER_TOKEN="6 per minute",
        LIMIT_COMMANDS="2 per minute",
        LIMIT_BAD_TOKENS="2 per minute",
    )
    base = f"{api.prefix}:limits"  # type: ignore[attr-defined]
    gid, tokens = new_game(api, players=2)
    view = f"/games/{gid}/seats/1/view"

    def at(addr: str) -> dict[str, Any]:  # (the validating client drops environ_base)
        return {"environ_base": {"REMOTE_ADDR": addr}, "validate": False}

    def counted(owner: str, limit: str) -> int:
        return int(real_redis.get(f"{base}:{{{owner}}}:{limit}") or 0)

    token1 = _token_owner(tokens[1])
    with Monitor([real_redis], base) as monitor:
        # the route's limit: a token's third command is refused (its general limit counted all
        # three, its address the two let through)
        token0 = _token_owner(tokens[0])
        got = [_command(api, gid, tokens[0], f"a{i}", **at("192.0.2.1")) for i in range(3)]
        assert [r.status_code in ANSWERED for r in got] == [True, True, False]
        assert got[2].status_code == 429
        assert got[2].get_json()["limit"] == "commands"
        assert got[2].headers["RateLimit"].startswith('"commands";r=0;')
        assert len(monitor.commands()) == 3  # (before the test's own reads below)
        assert counted(token0, "per-token:6/1/minute") == 3
        assert counted("address:192.0.2.1", "per-address:1200/1/minute") == 2

        # the bad-token lockout: a valid token's command at a locked-out address goes through,
        # a refused one is answered 429 after its view (two round trips: the check, the count)
        assert [
            api.get(view, headers=bearer(f"x{i}"), **at("192.0.2.2")).status_code for i in range(2)
        ] == [401, 401]
        monitor.commands()
        r = _command(api, gid, tokens[1], "b0", 1, **at("192.0.2.2"))
        assert r.status_code in ANSWERED and r.headers["RateLimit"].startswith('"commands";r=1;')
        assert len(monitor.commands()) == 1
        r = _command(api, gid, "x2", "b1", 1, **at("192.0.2.2"))
        assert r.status_code == 429 and r.get_json()["limit"] == "bad-tokens"
        assert len(monitor.commands()) == 2
        assert counted("address:192.0.2.2", "bad-tokens:2/1/minute") == 2
        assert counted(token1, "commands:2/1/minute") == 1

        # the general limit: before the route's (the token's sixth request, its seventh refused)
        for _ in range(5):
            assert api.get(view, headers=bearer(tokens[1]), **at("192.0.2.3")).status_code == 200
        monitor.commands()
        r = _command(api, gid, tokens[1], "c1", 1, **at("192.0.2.3"))
        assert r.status_code == 429 and r.get_json()["limit"] == "per-token"
        assert r.headers["RateLimit"].startswith('"per-token";r=0;')
        assert len(monitor.commands()) == 1
        assert counted(token1, "commands:2/1/minute") == 1, "the refused command: not counted"


def test_a_refused_command_answers_429_with_the_stores_wait(
    limited: Callable[..., ValidatingClient],
) -> None:
    api = limited(LIMIT_COMMANDS="2 per minute")
    gid, tokens = new_game(api, players=2)
    got = [_command(api, gid, tokens[0], f"c{i}") for i in range(3)]
    assert [r.status_code in ANSWERED for r in got[:2]] == [True, True]
    assert [r.headers["RateLimit"].split(";")[1] for r in got[:2]] == ["r=1", "r=0"]
    refused = got[2]
    assert refused.status_code == 429
    wait = int(refused.headers["Retry-After"])
    assert refused.get_json()["retry_after"] == wait and 1 <= wait <= 61
    m = re.fullmatch(r'"commands";r=0;t=(\d+)', refused.headers["RateLimit"])
    assert m and int(m.group(1)) in (wait, wait - 1), (refused.headers, wait)


# --- the counting is limits' own ------------------------------------------------------------


@pytest.fixture
def both(real_redis: Any) -> Iterator[tuple[Counters, SlidingWindowCounterRateLimiter, str]]:
    """(the app's counters, limits' own strategy on its Redis storage), each under its prefix."""
    prefix = f"t{uuid.uuid4().hex[:12]}"
    pool = redis.ConnectionPool.from_url(REDIS_URL)
    theirs = RedisStorage("redis://", connection_pool=pool, key_prefix=f"{prefix}:b")
    yield Counters(real_redis, f"{prefix}:a"), SlidingWindowCounterRateLimiter(theirs), prefix
    for key in real_redis.scan_iter(match=f"{prefix}:*", count=1000):
        real_redis.delete(key)
    pool.disconnect()


def _state(client: Any, key: str) -> tuple[Any, ...]:
    """(previous count, previous ttl ms, current count, current ttl ms) of a counter's keys."""
    return client.get(key + "/-1"), client.pttl(key + "/-1"), client.get(key), client.pttl(key)


def _same_state(a: tuple[Any, ...], b: tuple[Any, ...]) -> None:
    assert (a[0], a[2]) == (b[0], b[2]), (a, b)  # the counts
    for ta, tb in ((a[1], b[1]), (a[3], b[3])):  # the expiries (ms; the calls are ms apart)
        assert (ta < 0) == (tb < 0) and abs(ta - tb) <= 150, (a, b)


def _same_window(a: tuple[Any, ...], b: tuple[Any, ...]) -> None:
    assert (a[0], a[2]) == (b[0], b[2]), (a, b)
    assert abs(a[1] - b[1]) <= 0.15 and abs(a[3] - b[3]) <= 0.15, (a, b)


def _same_reset(a: float, b: float, item: Any) -> bool:
    """The same reset, read ms apart: limits' is a remainder (of a window, or a window divided by
    the previous count), so a ttl just under a whole window reads a window later than one at it."""
    d, window = abs(a - b), item.get_expiry()
    return any(abs(d - window * k / n) <= 0.15 for n in range(1, item.amount + 2) for k in (0, 1))


def test_the_counters_count_as_limits_does_and_answer_the_window_read_after(
    both: tuple[Counters, SlidingWindowCounterRateLimiter, str], real_redis: Any
) -> None:
    ours, theirs, prefix = both
    storage: Any = theirs.storage
    for spec in ("3 per 1 second", "2 per minute", "0 per minute"):
        (rate,) = rates("x", spec)
        item, window = rate.item, rate.item.get_expiry()
        key = ours.key(f"k{item.amount}", rate)
        their_key = f"{prefix}:b:{{{item.key_for(f'k{item.amount}')}}}"
        results: list[tuple[bool, bool]] = []
        for step in range(7):
            if step == 4:
                time.sleep(1.05)  # a 1-second limit: its current window ends; the next hit shifts
            test = step == 3  # a test counts nothing
            seen, refused, _ = ours.run([(rate, f"k{item.amount}", "t" if test else "h")])
            a = refused is None
            b = (theirs.test if test else theirs.hit)(item, f"k{item.amount}")
            results.append((a, b))
            _same_state(_state(real_redis, key), _state(real_redis, their_key))
            # the window the hit answered is the one limits reads right after, and so its stats
            got = aged(seen[0].window, window, time.time() - seen[0].then)
            want = storage.get_sliding_window(item.key_for(f"k{item.amount}"), window)
            _same_window(got, want)
            (reset, remaining), (their_reset, their_remaining) = (
                stats(item, got),
                theirs.get_window_stats(item, f"k{item.amount}"),
            )
            assert remaining == their_remaining and _same_reset(reset, their_reset, item)
        assert all(a == b for a, b in results), (spec, results)
        assert {a for a, _ in results} == ({False} if item.amount == 0 else {True, False})


def test_a_window_that_ends_between_the_check_and_the_headers_is_read_shifted(
    both: tuple[Counters, SlidingWindowCounterRateLimiter, str],
) -> None:
    ours, theirs, _ = both
    (rate,) = rates("x", "5 per 1 second")
    (seen,), refused, _ = ours.run([(rate, "shift", "h")])
    assert refused is None and theirs.hit(rate.item, "shift")
    time.sleep(1.05)  # the current window (2 s from its first hit) has less than 1 s left
    storage: Any = theirs.storage
    got = aged(seen.window, 1, time.time() - seen.then)
    want = storage.get_sliding_window(rate.item.key_for("shift"), 1)
    assert got[0] == 1 and got[2] == 0, got  # the hit moved to the previous window
    _same_window(got, want)
    # what a request reports: the stats of the aged window, read once
    assert isinstance(seen, Seen) and seen.stats() == seen.stats()
    assert seen.stats()[1] == theirs.get_window_stats(rate.item, "shift")[1]


def test_counters_stop_at_the_first_refusal_or_count_them_all(
    both: tuple[Counters, SlidingWindowCounterRateLimiter, str], real_redis: Any
) -> None:
    ours, _, _ = both
    one, two = rates("one", "1 per minute")[0], rates("two", "5 per minute")[0]
    assert ours.run([(one, "a", "h"), (two, "a", "h")])[1] is None
    seen, refused, _ = ours.run([(one, "a", "h"), (two, "a", "h")])
    assert refused == 0 and len(seen) == 1  # stopped: "two" neither checked nor counted
    assert int(real_redis.get(ours.key("a", two))) == 1
    seen, refused, _ = ours.run([(one, "a", "h"), (two, "a", "h")], stop=False)
    assert refused == 0 and len(seen) == 2 and int(real_redis.get(ours.key("a", two))) == 2


def test_a_stream_opening_reads_its_games_summary_in_its_limits_round_trip(
    limited: Callable[..., ValidatingClient], real_redis: Any
) -> None:
    """An event stream's opening, up to its response head: its limits and its game's summary
    in one round trip, then its stream slot (``service.limits.hold_stream``); two in all, on
    the store's client, whose connections count them. An unknown game is still a 404."""
    api = limited()
    gid, _ = new_game(api, players=2)
    app = api.application
    with app.app_context():
        client = backend().client
    pool = client.connection_pool
    pool.connection_class = _CountingConnection
    pool.reset()  # (its connections from now on count)
    path = f"/games/{gid}/events/stream"
    api.get(path, buffered=False, validate=False).close()  # the scripts loaded
    trips = []
    for address in ("127.0.0.2", "127.0.0.3"):
        before = _CountingConnection.trips
        r = api.get(path, buffered=False, validate=False, environ_base={"REMOTE_ADDR": address})
        trips.append(_CountingConnection.trips - before)
        assert r.status_code == 200 and r.headers["RateLimit"].startswith('"streams";r=')
        r.close()
    assert trips == [2, 2], trips
    r = api.get("/games/000000000000/events/stream", validate=False)
    assert r.status_code == 404 and r.get_json()["type"] == "/problems/not-found"
