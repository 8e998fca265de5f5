"""The command path's scripts (the append, the catch-up) on a connection of the thread's own
(``events.redis_store._HotScript``), against the real Redis: used after the first call, and when
that connection dies or Redis forgets its scripts, the next command still lands exactly once by
the ordinary way (the client's reconnect and NOSCRIPT reload) and the fast way resumes."""

from __future__ import annotations

import uuid
from collections.abc import Iterator
from typing import Any

import pytest

from events import RedisStore, StoreError
from tests.events.test_event_store_contract import put

pytestmark = pytest.mark.redis


@pytest.fixture
def store(real_redis_client: Any) -> Iterator[RedisStore]:
    prefix = f"t{uuid.uuid4().hex[:12]}"
    yield RedisStore(real_redis_client, prefix=prefix)
    for key in real_redis_client.scan_iter(f"{prefix}:*"):
        real_redis_client.delete(key)


def _own(store: RedisStore) -> Any:
    return store._append._local.conn  # noqa: SLF001 - what the test is about


@pytest.fixture
def fast(store: RedisStore) -> RedisStore:
    """The store, on a client whose hot scripts take the connection of the thread's own."""
    if not store._append.enabled:  # noqa: SLF001
        pytest.skip("the test Redis client is not a plain redis.Redis")
    return store


def _client_id(conn: Any) -> int:
    conn.send_command("CLIENT", "ID")
    return int(conn.read_response())


def test_the_append_uses_its_own_connection_after_the_first(
    fast: RedisStore, real_redis_client: Any
) -> None:
    store = fast
    game = uuid.uuid4().hex
    put(store, game)
    conn = _own(store)
    assert conn is not None and conn.is_connected
    own_id = _client_id(conn)
    put(store, game)
    assert _own(store) is conn  # the second append went on it
    (seen,) = real_redis_client.client_list(client_id=[own_id])
    assert seen["cmd"] == "evalsha"
    assert store.version(game) == 2
    prev, envs, version = store.catch_up(game, 1, "no-such-command")  # the other hot script
    assert (prev, [e.seq for e in envs], version) == (None, [2], 2)
    assert store._catch_up._local.conn is conn  # noqa: SLF001 - one connection per thread


def test_a_killed_connection_loses_no_append_and_is_replaced(
    fast: RedisStore, real_redis_client: Any
) -> None:
    store = fast
    game = uuid.uuid4().hex
    put(store, game)
    conn = _own(store)
    real_redis_client.client_kill_filter(_id=_client_id(conn))
    result = put(store, game)  # its first try fails on the dead connection; the retry lands
    assert (result.version, result.duplicate) == (2, False)
    assert [e.seq for e in store.read(game)] == [1, 2]
    put(store, game)
    assert _own(store) is not conn and _own(store).is_connected
    assert store.version(game) == 3


def test_scripts_flushed_by_a_restart_are_loaded_again(
    store: RedisStore, real_redis_client: Any
) -> None:
    game = uuid.uuid4().hex
    put(store, game)
    real_redis_client.script_flush()  # what a restarted Redis has forgotten
    assert put(store, game).version == 2
    prev, envs, version = store.catch_up(game, 0)
    assert prev is None and [e.seq for e in envs] == [1, 2] and version == 2


def test_a_script_error_is_the_store_error_and_keeps_the_connection(
    store: RedisStore, real_redis_client: Any
) -> None:
    game = uuid.uuid4().hex
    put(store, game)
    conn = _own(store)
    views_key = store.keys(game)[3]
    real_redis_client.set(views_key, "not a hash")  # the script refuses to write views there
    with pytest.raises(StoreError, match="holds data not written by the event store"):
        put(store, game, views={"public": "{}"})
    assert _own(store) is conn
    real_redis_client.delete(views_key)
    assert put(store, game).version == 2
