"""A worker process: an RQ ``SimpleWorker`` with the scheduler, plus the sweep thread.

``SimpleWorker`` runs jobs in the worker process itself (no fork per job), so the ``Games``
state cache stays warm between the hundreds of jobs of one game: a job costs a head check and
one decision, not a fold of the whole stream. A job that hangs is stopped by RQ's job timeout
(SIGALRM in the main thread).
"""

from __future__ import annotations

import logging
import os
import socket
import uuid

from rq import SimpleWorker

from .runtime import Runtime, install
from .settings import WorkerSettings
from .sweep import Sweeper

log = logging.getLogger(__name__)


def make_worker(rt: Runtime, name: str | None = None, worker_ttl: int = 60) -> SimpleWorker:
    name = name or f"rfg-{socket.gethostname()}-{os.getpid()}-{uuid.uuid4().hex[:6]}"
    return SimpleWorker(
        [rt.queue],
        connection=rt.client,
        name=name,
        worker_ttl=worker_ttl,
        default_result_ttl=rt.settings.result_ttl,
    )


def run(
    url: str | None,
    settings: WorkerSettings,
    *,
    burst: bool = False,
    with_scheduler: bool = True,
    name: str | None = None,
    rq_log_level: str = "WARNING",
) -> int:
    """Run a worker until stopped (SIGINT/SIGTERM: warm shutdown), or in burst mode until no
    job is left. Returns the process exit status."""
    rt = Runtime.from_url(url, settings)
    install(rt)
    rt.client.ping()
    sweeper = Sweeper(rt)
    worker = make_worker(rt, name)
    log.info("worker %s on queue %r (store prefix %r), sweep every %.2fs", worker.name,
             settings.queue, settings.prefix, settings.sweep_interval)  # fmt: skip
    if burst:
        return _burst(rt, sweeper, worker, with_scheduler, rq_log_level)
    sweeper.tick(force=True)
    sweeper.start()
    try:
        worker.work(with_scheduler=with_scheduler, logging_level=rq_log_level)
    finally:
        sweeper.stop()
    return 0


def _burst(
    rt: Runtime, sweeper: Sweeper, worker: SimpleWorker, with_scheduler: bool, level: str
) -> int:
    """Sweep, work off the queue, and repeat while a sweep still finds something to do."""
    while True:
        sweeper.tick(force=True)
        worker.work(burst=True, with_scheduler=with_scheduler, logging_level=level)
        if not sweeper.tick(force=True) and rt.queue.count == 0:
            return 0
