"""Faults a worker lives through.

**Store outages** (``outage``, ``refuses_writes``): Redis down or stalled (``ConnectionError``,
``TimeoutError``) and Redis up but refusing writes (``OOM``, ``READONLY``, ``MISCONF``,
``NOREPLICAS``: ``events.store.outage``) are one condition for a worker: RQ's own bookkeeping fails
on either (registering the worker, a job's status, its retry), so ``workers.process`` waits
until the store and the queue answer **and take writes** (``refuses_writes``: a probe that
writes nothing), logs the wait once, and starts a new RQ worker; a job hit by one is retried
(``workers.jobs``), the sweep keeps going and compacts nothing meanwhile (``workers.sweep``).

**Fault injection** for crash tests: ``RFG_WORKER_CRASH=<point>:<n>`` makes the worker process
SIGKILL itself the n-th time it reaches ``point``:

* ``before_append`` - a job decided its command and is about to submit it;
* ``after_append`` - a command was stored and nothing has been enqueued for it yet.

Unset (the default) it does nothing.
"""

from __future__ import annotations

import os
import signal
import threading
from typing import Any

from events import config
from events.games.service import Change
from events.store import outage as store_outage


def outage(exc: BaseException) -> bool:
    """Whether ``exc`` is the store out of service (down, stalled or refusing writes): wait and
    retry, the work was not wrong."""
    return store_outage.is_outage(exc)


def refuses_writes(rt: Any) -> str | None:
    """Why the store (or the queue's Redis) cannot take writes now, None when both can. Raises
    ``ConnectionError`` / ``TimeoutError`` when one does not answer."""
    probe = f"{rt.settings.prefix}:w:write-probe"
    why = store_outage.write_refusal(rt.client, probe)
    if why is None and rt.queue_client is not rt.client:
        queue = store_outage.write_refusal(rt.queue_client, probe)
        why = None if queue is None else f"the queue's Redis: {queue}"
    return why


class CrashHooks:
    def __init__(self, spec: str | None) -> None:
        self.point, self.at = None, 0
        if spec:
            point, _, n = spec.partition(":")
            self.point, self.at = point, int(n or 1)
        self.count = 0
        self._lock = threading.Lock()

    @property
    def active(self) -> bool:
        return self.point is not None

    def _reach(self, point: str) -> None:
        if point != self.point:
            return
        with self._lock:
            self.count += 1
            if self.count == self.at:
                os.kill(os.getpid(), signal.SIGKILL)

    def before_append(self, game_id: str, seat: int) -> None:
        self._reach("before_append")

    def after_append(self, change: Change) -> None:
        self._reach("after_append")


HOOKS = CrashHooks(config.value("RFG_WORKER_CRASH"))
