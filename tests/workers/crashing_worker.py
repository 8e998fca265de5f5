"""``rfg worker`` that SIGKILLs itself the n-th time it reaches a point, for the crash tests:

    python -m tests.workers.crashing_worker <point>:<n> worker <rfg worker arguments...>

* ``before_append`` - a job decided its command and is about to submit it;
* ``after_append`` - a command was stored and nothing has been enqueued for it yet.

The worker is the production one; this process only wraps its runtime's ``GameService``: each
submit a job makes reaches the crash first, and so does each stored command, before the
dispatcher hears of it.
"""

from __future__ import annotations

import os
import signal
import sys
import threading
from typing import Any

from events.games.service import Change
from rfgcli.main import main
from workers import process
from workers.runtime import Runtime


class Crash:
    def __init__(self, spec: str) -> None:
        point, _, n = spec.partition(":")
        if point not in ("before_append", "after_append"):
            raise SystemExit(f"unknown crash point {point!r}: before_append or after_append")
        self.point, self.at = point, int(n or 1)
        self.count = 0
        self._lock = threading.Lock()

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


def crashing(crash: Crash) -> type[Runtime]:
    class CrashingRuntime(Runtime):
        """The production runtime whose games tell the crash of each submit before it is made,
        and of each stored command before the dispatcher enqueues what it makes due."""

        def __init__(self, *args: Any, **kwargs: Any) -> None:
            super().__init__(*args, **kwargs)
            self.games.listeners.insert(0, crash.after_append)
            submit = self.games.submit

            def crash_then_submit(game_id: str, seat: int, *args: Any, **kwargs: Any) -> Any:
                crash.before_append(game_id, seat)
                return submit(game_id, seat, *args, **kwargs)

            self.games.submit = crash_then_submit  # type: ignore[method-assign]

    return CrashingRuntime


def run(argv: list[str]) -> int:
    crash = Crash(argv[0])
    process.Runtime = crashing(crash)  # type: ignore[misc]
    return main(argv[1:])


if __name__ == "__main__":
    sys.exit(run(sys.argv[1:]))
