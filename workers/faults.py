"""Fault injection for crash tests: ``RFG_WORKER_CRASH=<point>:<n>`` makes the worker process
SIGKILL itself the n-th time it reaches ``point``:

* ``before_append`` - a job decided its command and is about to submit it;
* ``after_append`` - a command was stored and nothing has been enqueued for it yet.

Unset (the default) it does nothing.
"""

from __future__ import annotations

import os
import signal
import threading

from events import environment
from events.games import Change


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


HOOKS = CrashHooks(environment.value("RFG_WORKER_CRASH"))
