"""Fixtures of the cluster suite: the session's real Redis Cluster (``tests.conftest.redis_cluster``)
as the store, a plain ``redis-server`` (``queue_redis``) as RQ's queue, and the hosting suite's
process starters (gunicorn API processes, ``rfg worker`` processes)."""

from __future__ import annotations

import uuid
from collections.abc import Iterator
from typing import Any

import pytest
import redis

import events.store
from tests.hosting.conftest import start_api, start_worker  # noqa: F401 - fixtures
from tests.rcluster import purge_cluster
from tests.workers.conftest import purge


@pytest.fixture
def cprefix(redis_cluster: Any, queue_redis: Any) -> Iterator[str]:
    """A key prefix (and RQ queue name) of this test, purged from the cluster and the queue."""
    name = f"c{uuid.uuid4().hex[:10]}"
    yield name
    client = events.store.connect(redis_cluster.url)
    purge_cluster(client, name)
    client.close()
    purge(redis.Redis(port=queue_redis.port), name)


@pytest.fixture
def queue_url(queue_redis: Any) -> str:
    return f"redis://127.0.0.1:{queue_redis.port}/0"
