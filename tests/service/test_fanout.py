"""The process's one reader of the Redis streams event streams wait on (``service.fanout``), on
fakeredis, on the real Redis and in the cluster's polling mode: a waiter wakes when its key gets
an entry newer than what it has, not before, not for another key's entry; many waiters on many
keys share one Redis connection; a store that goes away wakes them instead of hanging them."""

from __future__ import annotations

import threading
import time
import uuid
from collections.abc import Iterator
from typing import Any

import fakeredis
import pytest
import redis

from events.store.redis_adapter import StreamWatch
from service.fanout import Fanout, parse_id
from tests.conftest import REDIS_URL
from tests.processes import wait_for


@pytest.fixture(params=["fakeredis", "redis", "polled"])
def client(request: pytest.FixtureRequest) -> Iterator[tuple[Any, bool]]:
    """(client, polled): fakeredis, the real Redis, and fakeredis read the cluster's way."""
    if request.param == "redis":
        request.getfixturevalue("real_redis")  # skip locally / fail under CI without a server
        c = redis.Redis.from_url(REDIS_URL, socket_timeout=10)
        yield c, False
        return
    yield fakeredis.FakeRedis(server=fakeredis.FakeServer()), request.param == "polled"


def _later(seconds: float, fn: Any) -> threading.Thread:
    t = threading.Thread(target=lambda: (time.sleep(seconds), fn()), daemon=True)
    t.start()
    return t


def test_a_waiter_wakes_on_a_newer_entry_of_its_key_only(client: tuple[Any, bool]) -> None:
    c, polled = client
    mine, other = f"t:{uuid.uuid4().hex}", f"t:{uuid.uuid4().hex}"
    c.xadd(mine, {"e": "1"}, id="1-0")
    fan = Fanout(StreamWatch(c), cluster=polled, block_ms=100, poll_seconds=0.05)
    try:
        # nothing after 1-0 yet, and another key's entry is not news
        _later(0.1, lambda: c.xadd(other, {"e": "x"}, id="5-0"))
        assert fan.wait(mine, "1-0", 0.4) is False
        # an entry after 1-0 wakes it
        _later(0.2, lambda: c.xadd(mine, {"e": "2"}, id="2-0"))
        assert fan.wait(mine, "1-0", 10) is True
        # a waiter behind what the reader has seen returns at once: it needs no time to wait
        assert fan.wait(mine, "1-0", 0) is True
        # a waiter that has everything waits again
        assert fan.wait(mine, "2-0", 0.3) is False
    finally:
        c.delete(mine, other)


def test_many_waiters_on_many_keys_all_wake(client: tuple[Any, bool]) -> None:
    c, polled = client
    keys = [f"t:{uuid.uuid4().hex}" for _ in range(10)]
    fan = Fanout(StreamWatch(c), cluster=polled, block_ms=100, poll_seconds=0.05)
    woke: list[tuple[str, bool]] = []
    lock = threading.Lock()

    def waiter(key: str) -> None:
        got = fan.wait(key, "0-0", 10)
        with lock:
            woke.append((key, got))

    threads = [threading.Thread(target=waiter, args=(k,)) for k in keys for _ in range(5)]
    for t in threads:
        t.start()
    wait_for(lambda: fan.watched() == len(keys), 10, "the waiters to watch their keys")
    assert not woke, "nothing was written yet"
    try:
        for k in keys:
            c.xadd(k, {"e": "1"})
        for t in threads:
            t.join(timeout=15)
        assert sorted(woke) == sorted((k, True) for k in keys for _ in range(5))
        assert fan.watched() == len(keys)
    finally:
        c.delete(*keys)


def test_the_generation_moves_with_the_key(client: tuple[Any, bool]) -> None:
    c, polled = client
    key = f"t:{uuid.uuid4().hex}"
    fan = Fanout(StreamWatch(c), cluster=polled, block_ms=100, poll_seconds=0.05)
    assert fan.generation(key) == -1
    _later(0.2, lambda: c.xadd(key, {"e": "1"}, id="3-0"))
    assert fan.wait(key, "0-0", 10)
    first = fan.generation(key)
    _later(0.2, lambda: c.xadd(key, {"e": "2"}, id="4-0"))
    assert fan.wait(key, "3-0", 10)
    assert fan.generation(key) not in (first, -1)
    c.delete(key)


@pytest.mark.redis
def test_fifty_waiting_streams_share_one_redis_connection(real_redis: Any) -> None:
    name = f"fanout-{uuid.uuid4().hex[:8]}"
    c = redis.Redis.from_url(REDIS_URL, socket_timeout=10, client_name=name)
    keys = [f"t:{uuid.uuid4().hex}" for _ in range(50)]
    fan = Fanout(StreamWatch(c), block_ms=200)
    threads = [threading.Thread(target=fan.wait, args=(k, "0-0", 1.5)) for k in keys]
    for t in threads:
        t.start()

    def connections() -> int:
        return sum(cl.get("name") == name for cl in real_redis.client_list())

    wait_for(lambda: fan.watched() == len(keys) and connections() > 0, 10, "the reader to block")
    assert connections() == 1, f"{len(keys)} waiters hold {connections()} connections"
    for t in threads:
        t.join()


def test_a_store_that_goes_away_wakes_the_waiters() -> None:
    """The reader's client fails: waiters wake (their own reads then report the outage), and the
    reader carries on once the store answers again."""

    class Flaky:
        def __init__(self) -> None:
            self.real = fakeredis.FakeRedis(server=fakeredis.FakeServer())
            self.broken = False

        def xread(self, *args: Any, **kwargs: Any) -> Any:
            if self.broken:
                raise redis.exceptions.ConnectionError("Connection refused")
            return self.real.xread(*args, **kwargs)

        def pipeline(self, **kwargs: Any) -> Any:
            return self.real.pipeline(**kwargs)

    flaky = Flaky()
    fan = Fanout(StreamWatch(flaky), block_ms=100)
    assert fan.wait("k", "0-0", 0.3) is False
    flaky.broken = True
    assert fan.wait("k", "0-0", 5) is True and fan.down
    flaky.broken = False
    flaky.real.xadd("k", {"e": "1"}, id="1-0")
    deadline = time.monotonic() + 5
    while fan.down and time.monotonic() < deadline:
        fan.wait("k", "1-0", 0.2)
    assert not fan.down
    assert fan.wait("k", "1-0", 0.3) is False  # caught up: waits again


def test_stream_ids_compare_as_numbers() -> None:
    assert parse_id(b"10-0") > parse_id("9-5")
    assert parse_id("1700000000000-2") > parse_id("1700000000000-1")
    assert parse_id("12") == (12, 0)


def test_closing_wakes_every_waiter_at_once_and_for_good(client: tuple[Any, bool]) -> None:
    c, polled = client
    keys = [f"t:{uuid.uuid4().hex}" for _ in range(3)]
    fan = Fanout(StreamWatch(c), cluster=polled, block_ms=100, poll_seconds=0.05)
    woke: list[tuple[bool, float]] = []

    def waiter(key: str) -> None:
        started = time.monotonic()
        woke.append((fan.wait(key, "0-0", 30), time.monotonic() - started))

    threads = [threading.Thread(target=waiter, args=(k,), daemon=True) for k in keys]
    for t in threads:
        t.start()
    wait_for(lambda: fan.watched() == len(keys), 5, "every waiter to wait")
    fan.close()
    for t in threads:
        t.join(5)
    assert len(woke) == len(keys) and all(got and took < 5 for got, took in woke), woke
    started = time.monotonic()
    assert fan.wait(keys[0], "0-0", 30) is True  # a later wait does not wait
    assert time.monotonic() - started < 1
