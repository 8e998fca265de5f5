"""The rate limits' storage (``events.store.limits.RateLimitStore``) on every adapter: counters
counted in order with another owner's read in the same round trip, and on a server that lost
its scripts."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import fakeredis

from events.store import RedisStore
from events.store.limits import Count, RateLimitStore


class _Get:
    """A read of one key, as another owner would send beside the counting."""

    def __init__(self, key: str) -> None:
        self.key = key

    def queue(self, pipe: Any) -> int:
        pipe.get(self.key)
        return 1

    def answer(self, replies: Sequence[Any]) -> str | None:
        return None if replies[0] is None else str(replies[0], "utf-8")


def test_counters_refuse_past_their_quota_and_answer_a_read_beside(store: RedisStore) -> None:
    limits = RateLimitStore(store.client, store.prefix)
    other = f"{store.prefix}:other"
    store.client.set(other, "v")
    counts = [
        Count("address:a", ":all:5/1/minute", True, 5, 60),
        Count("token:t", ":commands:2/1/minute", True, 2, 60),
    ]
    got = [limits.count(counts, beside=_Get(other)) for _ in range(3)]
    assert [refused for _windows, refused, _answer in got] == [None, None, 1]
    assert all(answer == "v" for _windows, _refused, answer in got)
    # the window after each hit: (previous, its ttl ms, current, its ttl ms)
    assert [windows[1][2] for windows, _refused, _answer in got] == [1, 2, 2]
    assert [windows[0][2] for windows, _refused, _answer in got] == [1, 2, 3]
    # stopped at the first refusal: a counter after it is neither checked nor counted
    windows, refused, answer = limits.count([counts[1], counts[0]])
    assert refused == 0 and len(windows) == 1 and answer is None
    assert int(store.client.get(limits.key("address:a", ":all:5/1/minute"))) == 3


def test_the_counting_loads_its_script_again_on_a_server_that_lost_it() -> None:
    client = fakeredis.FakeRedis(server=fakeredis.FakeServer())
    limits = RateLimitStore(client, "t")
    count = [Count("address:a", ":all:5/1/minute", True, 5, 60)]
    client.set("t:other", "v")
    assert limits.count(count, beside=_Get("t:other"))[2] == "v"
    client.script_flush()  # a restarted server
    windows, refused, answer = limits.count(count, beside=_Get("t:other"))
    assert refused is None and windows[0][2] == 2 and answer == "v"
