"""RQ on a Redis of its own (``RFG_QUEUE_URL``) next to a cluster store.

* Wiping the queue's Redis loses nothing: three games' first jobs wait in the queue while no
  worker runs, the queue's Redis is flushed, workers start; later it is flushed again during
  play. The sweep's ``stale_after`` is 60 s, so only the wipe detection (the queue's epoch kept
  on the store) can bring the jobs back within the test's deadline; every game finishes, its log
  verifies and every decision was played exactly once.
* A cluster store without a queue URL, or a cluster as the queue, is refused with a message
  saying what to set: by ``rfg worker`` (exit 2) and by the API at start with dispatch on.
"""

from __future__ import annotations

import json
import subprocess
import sys
import time
from collections.abc import Callable
from typing import Any

import pytest
import redis

import events.store
from rfgcli.wsgi import create_app
from tests.processes import ROOT, Proc, wait_for
from tests.workers.checks import check_finished_game
from workers import Runtime, WorkerSettings

pytestmark = pytest.mark.cluster

BOTS2 = {"seats": [{"kind": "bot", "bot": "heuristic"}, {"kind": "bot", "bot": "random"}]}


def test_wiping_the_queue_redis_loses_no_job(
    redis_cluster: Any,
    queue_redis: Any,
    queue_url: str,
    cprefix: str,
    start_worker: Callable[..., Proc],
) -> None:
    settings = WorkerSettings(prefix=cprefix, queue=cprefix)
    rt = Runtime.from_url(redis_cluster.url, settings, queue_url_=queue_url)
    args = ("--queue-url", queue_url, "--sweep-interval", "0.2", "--stale-after", "60")
    first = start_worker(redis_cluster.url, cprefix, *args)  # its sweep records the queue's epoch
    wait_for(lambda: rt.client.get(f"{cprefix}:w:queue-epoch") is not None, 30, "the first sweep")
    first.kill()
    first.wait(10)
    gids = [rt.games.create(2, seed=f"wipe-{i}", table=BOTS2)[0] for i in range(3)]
    assert rt.queue.count > 0  # the games' first decisions, enqueued by the dispatcher
    q = redis.Redis(port=queue_redis.port)
    q.flushall()  # every job is gone, and no worker runs
    assert rt.queue.count == 0
    wiped_at = time.monotonic()
    workers = [start_worker(redis_cluster.url, cprefix, *args) for _ in range(2)]

    def moved() -> bool:
        return all(rt.store.version(g) > 1 for g in gids)

    first_moves = wait_for(moved, 30, "every game to move after the wipe")
    progress = sum(rt.store.version(g) for g in gids)
    q.flushall()  # and again, during play
    finished = wait_for(
        lambda: all(rt.games.load(g)[0].over for g in gids), 40, "every game to end"
    )
    for g in gids:
        check_finished_game(rt.games, g)
    for w in workers:
        assert w.poll() is None, w.log()[-3000:]
    print(
        json.dumps(
            {
                "first_moves_s_after_wipe": round(first_moves, 2),
                "events_at_second_wipe": progress,
                "finished_s_after_second_wipe": round(finished, 2),
                "total_s": round(time.monotonic() - wiped_at, 1),
            }
        )
    )
    assert "(new or wiped)" in workers[0].log() + workers[1].log()


def _rfg_worker(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "rfgcli.main", "worker", *args],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=60,
        env={"PATH": "/usr/bin:/bin"},
    )


def test_a_cluster_queue_or_none_is_refused_with_what_to_set(
    redis_cluster: Any, queue_url: str
) -> None:
    out = _rfg_worker("--url", redis_cluster.url)
    assert out.returncode == 2 and "set RFG_QUEUE_URL (or --queue-url)" in out.stderr, out.stderr
    out = _rfg_worker("--url", queue_url, "--queue-url", redis_cluster.url)
    assert out.returncode == 2 and "needs a plain Redis" in out.stderr, out.stderr
    assert "Traceback" not in out.stderr
    with pytest.raises(ValueError, match="RFG_QUEUE_URL"):
        create_app({"STORE_URL": redis_cluster.url, "DISPATCH_TURNS": True, "RATE_LIMITS": False})
    app = create_app(
        {
            "STORE_URL": redis_cluster.url,
            "DISPATCH_TURNS": True,
            "QUEUE_URL": queue_url,
            "RATE_LIMITS": False,
        }
    )
    assert app.test_client().get("/readyz").status_code == 200
    with pytest.raises(ValueError, match="is a Redis Cluster"):
        Runtime.from_url(queue_url, queue_url_=redis_cluster.url)
    assert events.store.is_cluster(events.store.connect(redis_cluster.url))
