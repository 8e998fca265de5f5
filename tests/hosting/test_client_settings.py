"""Each Redis client waits longer than its longest blocking call and no longer than it must for an
ordinary command (no server needed: redis-py connects lazily). The slow tests in this package
show what goes wrong otherwise."""

from __future__ import annotations

from typing import Any

import pytest

import events.store
from events import config
from events.store import clients
from service import create_app
from tests.conftest import REDIS_URL
from workers import Runtime, WorkerSettings
from workers.process import make_worker

URL = "redis://127.0.0.1:6399/0"  # never connected to


def timeout_of(client: object) -> float:
    return float(client.connection_pool.connection_kwargs["socket_timeout"])  # type: ignore[attr-defined]


def test_ordinary_commands_have_a_short_timeout_and_a_health_check() -> None:
    kwargs = events.store.connect(URL).connection_pool.connection_kwargs
    assert kwargs["socket_timeout"] == config.COMMAND_TIMEOUT
    assert kwargs["socket_connect_timeout"] == clients.CONNECT_TIMEOUT
    assert kwargs["health_check_interval"] == clients.HEALTH_CHECK_INTERVAL
    assert (
        timeout_of(
            events.store.connect(URL, settings=clients.commands({"RFG_REDIS_TIMEOUT": "1.5"}))
        )
        == 1.5
    )


@pytest.mark.redis
def test_rq_dequeues_on_a_client_that_outlasts_its_block_and_rq_leaves_it_alone(
    real_redis: Any,
) -> None:
    rt = Runtime.from_url(REDIS_URL, WorkerSettings(prefix="t", queue="t"), listen=False)
    before = timeout_of(rt.rq_client)
    worker = make_worker(rt, "settings-check")
    assert worker.dequeue_timeout < before, "BLPOP must end before the socket gives up"
    assert timeout_of(rt.rq_client) == before, (
        "RQ did not have to raise it (old connections keep theirs)"
    )
    assert timeout_of(rt.client) == config.COMMAND_TIMEOUT


def test_the_stream_reader_outlasts_its_block_and_requests_share_a_bounded_pool() -> None:
    app = create_app({"STORE_URL": URL, "RATE_LIMITS": False})
    b = app.extensions["rfg"]
    # the one reader of the event streams blocks in XREAD: its socket outlasts the block
    assert timeout_of(b.fanout.watch.client) > b.fanout.block_ms / 1000 + 5
    assert timeout_of(b.client) == config.COMMAND_TIMEOUT
    # requests borrow from a bounded pool (thousands of greenlets, not thousands of connections)
    assert b.client.connection_pool.max_connections == app.config["API_REDIS_CONNECTIONS"]


@pytest.mark.parametrize("raw", ["abc", "0", "-1", "nan"])
def test_a_bad_timeout_setting_names_the_variable(raw: str) -> None:
    with pytest.raises(ValueError, match="RFG_REDIS_TIMEOUT"):
        clients.commands({"RFG_REDIS_TIMEOUT": raw})
