"""A worker process: an RQ ``SimpleWorker`` with the scheduler, plus the sweep thread.

``SimpleWorker`` runs jobs in the worker process itself (no fork per job), so the ``GameService``
state cache stays warm between the hundreds of jobs of one game: a job costs a head check and
one decision, not a fold of the whole stream. A job that hangs is stopped by RQ's job timeout
(SIGALRM in the main thread).

The worker's only child process is RQ's scheduler, which RQ forks (``multiprocessing``) from the
worker's main thread; the sweep is a thread. A fork holds copies of the worker's Redis sockets,
so a scheduler left behind by a SIGKILLed worker kept the worker's blocking dequeue open and the
next job went to a process that no longer existed (the sweep rescued it ``stale_after`` later).
``run`` therefore has every process it forks sent SIGKILL when it dies (``workers.lifeline``:
``prctl(PR_SET_PDEATHSIG)`` in an ``os.register_at_fork`` hook, Linux; RQ has no public hook
around that fork and nothing of RQ is patched): the sockets close with the worker, Redis drops
its dequeue, and the next job waits in the queue for the next worker. The job the worker itself
was running stays STARTED and is re-run by the sweep after ``stale_after``; the dead
scheduler's lock expires within about a minute, deadlines due meanwhile are applied by the
sweep.
"""

from __future__ import annotations

import logging
import os
import signal
import socket
import threading
import time
import uuid
from types import FrameType

from rq import Queue, SimpleWorker
from rq.exceptions import StopRequested

from events.store import outage

from . import lifeline
from .runtime import WORKER_TTL, Runtime, install
from .settings import WorkerSettings
from .sweep import Sweeper

log = logging.getLogger(__name__)


class ResilientWorker(SimpleWorker):
    """RQ's ``SimpleWorker`` that tells a stop request from a lost Redis and reconnects quickly.

    RQ's own loop retries a failed dequeue (``max_connection_wait_time`` caps its back-off: 2 s,
    not RQ's 60 s, so an idle worker is back within 2 s of Redis), but any Redis error elsewhere
    (the heartbeat after a job, a job's status) makes ``work()`` return ("found an unhandled
    exception, quitting"); ``run`` then starts a new one (``stop_wanted`` tells it apart from
    SIGINT/SIGTERM)."""

    max_connection_wait_time = 2.0
    stop_wanted = False

    def request_stop(self, signum: int, frame: FrameType | None) -> None:
        self.stop_wanted = True
        try:
            super().request_stop(signum, frame)
        except Exception as exc:  # RQ asks Redis whether a job runs; without Redis, stop now
            if not outage.is_outage(exc):
                raise
            raise StopRequested() from None


def default_name() -> str:
    return f"rfg-{socket.gethostname()}-{os.getpid()}-{uuid.uuid4().hex[:6]}"


def make_worker(
    rt: Runtime, name: str | None = None, worker_ttl: int = WORKER_TTL
) -> ResilientWorker:
    return ResilientWorker(
        [Queue(rt.settings.queue, connection=rt.rq_client)],
        connection=rt.rq_client,
        name=name or default_name(),
        worker_ttl=worker_ttl,
        default_result_ttl=rt.settings.result_ttl,
        maintenance_interval=30,  # also restarts RQ's scheduler if an outage killed it
    )


class _Stop:
    """SIGINT/SIGTERM while no RQ worker runs (RQ installs its own handlers in ``work``)."""

    def __init__(self) -> None:
        self.event = threading.Event()

    def install(self) -> None:
        signal.signal(signal.SIGINT, self._handle)
        signal.signal(signal.SIGTERM, self._handle)

    def _handle(self, signum: int, frame: FrameType | None) -> None:
        self.event.set()


def refuses_writes(rt: Runtime) -> str | None:
    """Why the store (or the queue's Redis) cannot take writes now, None when both can. Raises
    ``ConnectionError`` / ``TimeoutError`` when one does not answer."""
    probe = outage.probe_key(rt.settings.prefix)
    why = outage.write_refusal(rt.client, probe)
    if why is None and rt.queue_client is not rt.client:
        queue = outage.write_refusal(rt.queue_client, probe)
        why = None if queue is None else f"the queue's Redis: {queue}"
    return why


def wait_for_store(rt: Runtime, stop: _Stop, what: str, poll: float = 0.5) -> bool:
    """Block until Redis answers and takes writes (True: ``refuses_writes``, a probe that writes
    nothing) or a stop signal comes (False), logging the wait."""
    stop.install()
    started = time.monotonic()
    said = -1.0
    while not stop.event.is_set():
        try:
            why = refuses_writes(rt)
            trouble = None if why is None else f"refuses writes ({why})"
        except Exception as exc:
            if not outage.is_outage(exc):
                raise
            trouble = f"does not answer ({exc}; check that the server runs and the URL is right)"
        if trouble is not None:
            waited = time.monotonic() - started
            if said < 0 or waited - said >= 30:
                log.warning(
                    "%s: Redis %s; waited %.0fs, retrying every %.1fs (Ctrl-C stops)",
                    what,
                    trouble,
                    waited,
                    poll,
                )
                said = waited
            stop.event.wait(poll)
            continue
        if said >= 0:
            log.warning(
                "%s: Redis takes writes again after %.1fs", what, time.monotonic() - started
            )
        return True
    return False


def run(
    url: str | None,
    settings: WorkerSettings,
    *,
    burst: bool = False,
    with_scheduler: bool = True,
    name: str | None = None,
    rq_log_level: str = "WARNING",
    queue_url: str | None = None,
) -> int:
    """Run a worker until stopped (SIGINT/SIGTERM: warm shutdown), or in burst mode until no
    job is left. Returns the process exit status.

    A Redis outage does not end it: the RQ worker that lost its connection is replaced by a new
    one (named ``<name>-r<n>``) as soon as Redis answers again; the sweep thread keeps going.
    ``queue_url``: RQ's own plain Redis (default: the store's, see ``settings.queue_url``)."""
    lifeline.children_die_with_me(signal.SIGKILL)  # RQ's scheduler dies with this process
    rt = Runtime.from_url(url, settings, queue_url_=queue_url)
    install(rt)
    base = name or default_name()
    stop = _Stop()
    if not wait_for_store(rt, stop, f"worker {base}"):
        return 0
    sweeper = Sweeper(rt)
    worker = make_worker(rt, base)
    log.info(
        "worker %s on queue %r (store prefix %r), sweep every %.2fs",
        worker.name,
        settings.queue,
        settings.prefix,
        settings.sweep_interval,
    )
    if burst:
        return _burst(rt, sweeper, worker, with_scheduler, rq_log_level)
    try:
        sweeper.tick(force=True)
    except Exception as exc:
        if not outage.is_outage(exc):
            raise
        log.warning("first sweep failed: Redis went away (%s); the sweep thread retries", exc)
    sweeper.start()
    try:
        return _work(rt, worker, base, stop, with_scheduler, rq_log_level)
    finally:
        sweeper.stop()


def _work(
    rt: Runtime,
    worker: ResilientWorker,
    base: str,
    stop: _Stop,
    with_scheduler: bool,
    rq_log_level: str,
) -> int:
    """Run the RQ worker until asked to stop; one that ends by itself (Redis lost) is replaced by
    ``<base>-r<n>`` once Redis answers again (after 0.5 s, doubling up to 5 s while it keeps
    failing within 30 s)."""
    generation, pause = 0, 0.5
    while True:
        started = time.monotonic()
        try:
            worker.work(with_scheduler=with_scheduler, logging_level=rq_log_level)
        except Exception as exc:  # raised by RQ's start or clean-up, around its loop
            if not outage.is_outage(exc):
                raise
            log.warning("worker %s: Redis failed: %s", worker.name, exc)
        if worker.stop_wanted or stop.event.is_set():
            return 0
        generation += 1
        pause = 0.5 if time.monotonic() - started > 30 else min(pause * 2, 5.0)
        log.warning(
            "worker %s stopped without being asked to (Redis lost?); starting "
            "%s-r%d once Redis answers",
            worker.name,
            base,
            generation,
        )
        if stop.event.wait(pause) or not wait_for_store(rt, stop, f"worker {base}"):
            return 0
        worker = make_worker(rt, f"{base}-r{generation}")


def _burst(
    rt: Runtime, sweeper: Sweeper, worker: SimpleWorker, with_scheduler: bool, level: str
) -> int:
    """Sweep, work off the queue, and repeat while a sweep still finds something to do."""
    while True:
        sweeper.tick(force=True)
        worker.work(burst=True, with_scheduler=with_scheduler, logging_level=level)
        if not sweeper.tick(force=True) and rt.queue.count == 0:
            return 0
