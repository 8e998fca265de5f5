"""Fixtures shared by every test package: the real Redis at ``$REDIS_URL``.

Locally a missing server skips the tests that need it; when the ``CI`` environment variable is
set it fails them, so CI always proves the real-Redis paths.

The tests' Redis is ``$RFG_TEST_REDIS_URL``, else ``$REDIS_URL``, else database 15 of the local
server (``make test`` uses database 15 unless told otherwise), never the database 0 that ``make
run`` uses. Every test works under its own key prefix (and RQ queue of that name) and deletes
them afterwards with ``purge_prefix``, RQ's own keys included, so a run leaves nothing behind.

``make test`` runs the quick tier in pytest-xdist worker processes (``-n auto``), and ``make
test-all`` does so before the whole tier: a test may share nothing with another but read-only
files - its own fakeredis (``memory://<unique>``), key prefix, temp dirs and free ports.
"""

from __future__ import annotations

import os
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any, NoReturn

import pytest
import redis

REDIS_URL = (
    os.environ.get("RFG_TEST_REDIS_URL")
    or os.environ.get("REDIS_URL")
    or "redis://127.0.0.1:6379/15"
)


def in_ci() -> bool:
    return os.environ.get("CI", "").strip().lower() not in ("", "0", "false", "no")


def unavailable(reason: str) -> NoReturn:
    """Skip locally; fail under CI, where every adapter must really be tested."""
    if in_ci():
        pytest.fail(f"{reason} (CI is set, so this is a failure, not a skip)")
    pytest.skip(reason)


@pytest.fixture(scope="session")
def ambition() -> Any:
    """Install the synthetic Ambition components (tests/ambition.py: made-up faces and objectives)
    in this process (once; they stay installed) and return them. A test that plays Ambition takes this fixture and creates its game with
    ``options={"ambition": True}`` (plus ``"objectives": True`` for objectives). Base games in
    the same process are unchanged: they never deal Ambition tiles or dice."""
    from tests.ambition import install_synthetic

    return install_synthetic()


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


def _text(value: Any) -> str:
    return value.decode() if isinstance(value, bytes) else str(value)


def purge_prefix(client: Any, prefix: str) -> None:
    """Delete everything a test under ``prefix`` left in Redis: the store's keys, the RQ queue
    and registries named ``prefix``, its jobs (ids start with ``prefix-``) with their results and
    executions, and the workers and schedulers that served that queue - also those killed with
    SIGKILL, which never deregistered - with their entries in RQ's shared sets."""
    patterns = [
        f"{prefix}:*",
        f"rq:job:{prefix}-*",
        f"rq:*:{prefix}",
        f"rq:*:{prefix}:*",
        f"rq:results:{prefix}-*",
        f"rq:execution:{prefix}-*",
        f"rq:executions:{prefix}-*",
    ]
    doomed: set[Any] = set()
    for pattern in patterns:
        doomed.update(client.scan_iter(match=pattern, count=1000))
    for kind in ("worker", "scheduler"):
        for key in client.scan_iter(match=f"rq:{kind}:*", count=1000):
            if _text(key).count(":") != 2 or client.type(key) not in (b"hash", "hash"):
                continue
            queues = client.hget(key, "queues")
            if queues is not None and prefix in _text(queues).split(","):
                doomed.update((key, f"{_text(key)}:executions"))
                client.srem("rq:workers", key)
    client.srem("rq:queues", f"rq:queue:{prefix}")
    doomed = {k for k in doomed if client.exists(k)}
    if doomed:
        client.delete(*doomed)


#: folders whose tests start real servers, clusters, browsers or wait as production waits: they
#: run in the whole suite (``make test-all``, CI), not in the quick tier (``make test``)
WHOLE_SUITE_DIRS = ("hosting", "cluster", "web", "ops", "netns")
#: markers that put a test in the whole suite only, wherever it is
WHOLE_SUITE_MARKERS = ("slow", "cluster", "browser")
#: the longest tests of the other folders (tens of seconds each on 2 vCPU): whole games played
#: many times over, attacks that need thousands of samples, the schemathesis run. The quick tier
#: keeps a shorter test of each behaviour (e.g. the 2-player play-outs, one stale-cache adapter).
WHOLE_SUITE_TESTS = (
    "engine/test_playouts.py::test_random_playouts_keep_invariants[3]",
    "engine/test_playouts.py::test_random_playouts_keep_invariants[4]",
    "engine/test_playouts.py::test_random_playouts_keep_invariants[5]",
    "engine/test_secrecy.py::test_views_and_redacted_events_leak_nothing[4]",
    "engine/test_secrecy.py::test_views_and_redacted_events_leak_nothing[5]",
    "service/test_generated_client.py",
    "service/test_fuzz.py",
    "service/test_dice_secrecy.py",
    "service/test_secrecy.py",
    "ladder/test_ladder_e2e.py",
    "workers/test_ladder_scheduler.py",
    "workers/test_cleanup.py",
    "workers/test_processes.py",
    "workers/test_ladder_bench.py",
    "rfgcli/test_ladder_cli.py",
    "rfgcli/test_store_cli.py",
    "workers/test_bot_secrecy.py",
    "workers/test_bot_pace.py::test_an_all_bot_game_with_a_pace_takes_at_least_the_pace_per_decision",
    "events/games/test_games.py::test_processes_with_stale_caches_play_one_game_correctly[redis]",
    "events/games/test_games.py::test_processes_with_stale_caches_play_one_game_correctly[embedded]",
    "service/test_command_route_answers.py::test_every_command_answer_is_the_schema_dump[fakeredis-4]",
    "service/test_command_route_answers.py::test_every_command_answer_is_the_schema_dump[redis-4]",
)


def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    """Mark ``whole`` what only the whole suite runs (``make test`` deselects it)."""
    root = os.path.dirname(__file__)
    for item in items:
        rel = os.path.relpath(str(item.fspath), root).split(os.sep)
        node = "/".join(rel) + item.nodeid[len(item.nodeid.split("::")[0]) :]
        if (
            rel[0] in WHOLE_SUITE_DIRS
            or any(item.get_closest_marker(m) for m in WHOLE_SUITE_MARKERS)
            or node.startswith(WHOLE_SUITE_TESTS)
        ):
            item.add_marker(pytest.mark.whole)


@pytest.fixture(scope="session", autouse=True)
def _no_rq_throttle_left() -> Iterator[None]:
    """RQ marks "groups cleaned recently" with a short-lived global key (``rq:clean_groups``);
    after the session it only clutters the tests' database, so it goes too."""
    yield
    try:
        client = redis.Redis.from_url(REDIS_URL, socket_connect_timeout=1, socket_timeout=2)
        client.delete("rq:clean_groups")
        client.close()
    except (redis.ConnectionError, redis.TimeoutError):
        pass


@pytest.fixture(scope="session")
def redis_cluster(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Any]:
    """A real 3-master Redis Cluster (``tests/rcluster.py``) shared by the whole session; tests
    work under their own key prefix. Skip locally / fail under CI without ``redis-server``."""
    from tests.rcluster import RedisClusterProcs, binaries

    if binaries() is None:
        unavailable(
            "no redis-server/redis-cli binaries for the cluster tests (apt install redis-server)"
        )
    cluster = RedisClusterProcs(tmp_path_factory.mktemp("cluster"), masters=3).start()
    yield cluster
    cluster.stop()


@pytest.fixture(scope="session")
def queue_redis(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Any]:
    """A plain ``redis-server`` of the session (no persistence): the RQ queue next to a cluster."""
    from tests.rcluster import binaries, plain_redis

    if binaries() is None:
        unavailable("no redis-server binary for the queue's own Redis (apt install redis-server)")
    node = plain_redis(tmp_path_factory.mktemp("queue"))
    yield node
    node.stop()


@contextmanager
def serving(app: Any) -> Iterator[str]:
    """A WSGI app on a real threaded HTTP server on a free port; yields its base URL."""
    from werkzeug.serving import make_server

    srv = make_server("127.0.0.1", 0, app, threaded=True)
    thread = threading.Thread(target=srv.serve_forever, daemon=True)
    thread.start()
    try:
        yield f"http://127.0.0.1:{srv.server_port}"
    finally:
        srv.shutdown()
        thread.join(5)
