"""Fixtures for the worker tests.

* ``fake_rt`` - a ``Runtime`` on its own fakeredis server (with Lua), installed as this process's
  runtime, with a controllable ``clock``; ``burst(rt)`` runs an RQ ``SimpleWorker(burst=True)``;
* ``real_redis`` - the Redis at ``$REDIS_URL`` (default: database 15 of the local server, see tests/conftest.py): skipped
  locally when absent, a failure when ``CI`` is set (as in tests/events/conftest.py);
* ``real_prefix`` - a unique store prefix / queue on it, every key cleaned up afterwards;
* ``spawn_worker`` - starts real ``rfg worker`` processes (own process group, killed at the end;
  ``crash=`` one that kills itself at a point of its work: ``crashing_worker``).
"""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
import uuid
from collections.abc import Callable, Iterator
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import fakeredis
import pytest
import redis
from rq import SimpleWorker
from rq.timeouts import TimerDeathPenalty

from tests.conftest import REDIS_URL, purge_prefix
from workers import Runtime, WorkerSettings, install

ROOT = Path(__file__).resolve().parents[2]
RFG = str(Path(sys.executable).parent / "rfg")


class FakeClock:
    """Real time plus an offset the test moves forward (RQ itself keeps real time)."""

    def __init__(self) -> None:
        self.offset = timedelta(0)

    def __call__(self) -> datetime:
        return datetime.now(UTC) + self.offset

    def advance(self, seconds: float) -> None:
        self.offset += timedelta(seconds=seconds)


class QuietSimpleWorker(SimpleWorker):
    death_penalty_class = TimerDeathPenalty


def burst(rt: Runtime, with_scheduler: bool = False) -> None:
    """Work the runtime's queue until it is empty (jobs enqueue their successors)."""
    worker = QuietSimpleWorker([rt.queue], connection=rt.client)
    worker.work(burst=True, with_scheduler=with_scheduler, logging_level="WARNING")


@pytest.fixture
def clock() -> FakeClock:
    return FakeClock()


@pytest.fixture
def fake_rt(clock: FakeClock) -> Iterator[Runtime]:
    client = fakeredis.FakeRedis(server=fakeredis.FakeServer())
    prefix = f"t{uuid.uuid4().hex[:8]}"
    # one job per decision: these tests look at the jobs of each decision (playing on is tested
    # in test_play_on.py and by the real worker processes, where it is the default)
    rt = Runtime(client, WorkerSettings(prefix=prefix, queue=prefix, play_on=0), clock=clock)
    install(rt)
    yield rt
    install(None)


def purge(client: Any, prefix: str) -> None:
    """Delete the store keys of ``prefix`` and the RQ keys of the queue, jobs and workers named by
    it (``tests.conftest.purge_prefix``)."""
    purge_prefix(client, prefix)


@pytest.fixture
def real_prefix(real_redis: Any) -> Iterator[str]:
    prefix = f"t{uuid.uuid4().hex[:10]}"
    yield prefix
    purge(real_redis, prefix)


@pytest.fixture
def real_rt(real_redis: Any, real_prefix: str) -> Runtime:
    """The test process's side: creates games and dispatches their first jobs."""
    return Runtime(
        redis.Redis.from_url(REDIS_URL), WorkerSettings(prefix=real_prefix, queue=real_prefix)
    )


class WorkerProcess(subprocess.Popen[bytes]):
    """A running ``rfg worker`` and the file its output goes to."""

    log_path: Path


@pytest.fixture
def spawn_worker(real_prefix: str, tmp_path: Path) -> Iterator[Callable[..., WorkerProcess]]:
    procs: list[WorkerProcess] = []

    def spawn(
        *extra: str, env: dict[str, str] | None = None, crash: str | None = None
    ) -> WorkerProcess:
        path = tmp_path / f"worker-{len(procs)}.log"
        log = open(path, "wb")  # noqa: SIM115
        # crash="<point>:<n>": the worker SIGKILLs itself there (tests/workers/crashing_worker.py)
        rfg = [sys.executable, "-m", "tests.workers.crashing_worker", crash] if crash else [RFG]
        cmd = [
            *rfg,
            "worker",
            "--url",
            REDIS_URL,
            "--prefix",
            real_prefix,
            "--sweep-interval",
            "0.2",
            "--stale-after",
            "1",
            *extra,
        ]
        full_env = {**os.environ, **(env or {})}
        proc = WorkerProcess(
            cmd,
            cwd=ROOT,
            stdout=log,
            stderr=subprocess.STDOUT,
            env=full_env,
            start_new_session=True,
        )
        proc.log_path = path
        procs.append(proc)
        return proc

    yield spawn
    for proc in procs:
        kill_group(proc)


def kill_group(proc: subprocess.Popen[bytes], sig: int = signal.SIGKILL) -> None:
    """Kill the worker and whatever it started (RQ's scheduler process)."""
    try:
        os.killpg(proc.pid, sig)
    except ProcessLookupError:
        pass
    try:
        proc.wait(timeout=10)
    except subprocess.TimeoutExpired:
        pass


def wait_for(pred: Callable[[], bool], timeout: float, what: str, step: float = 0.05) -> None:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if pred():
            return
        time.sleep(step)
    raise AssertionError(f"timed out after {timeout}s waiting for {what}")
