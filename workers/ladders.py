"""The ladder scheduler inside ``rfg worker``: keeps every ladder's games running.

Every ``ladder_interval`` seconds the sweep thread of each worker calls ``LadderScheduler.tick``;
one worker at a time does the work, under the mutex ``<prefix>:w:ladder-lock`` (SET NX with a
TTL, released by compare-and-delete), since ``Ladders.schedule`` reads "how many are running"
and then creates games, which two processes must not do at once. For each ladder (``Ladders.names``)
it calls ``Ladders.schedule``, which first records every finished game (``record_finished``:
once per game, guarded by the ladder's ``:recorded`` set) and then starts games until the
ladder's ``concurrency`` are running. The new games go through this worker's ``GameService``, so their
first bot turns are dispatched at once. External seats are left to their bot account (the
workers only enforce their time control). Burst mode (``rfg worker --burst``) does not schedule,
so it still ends. ``rfg ladder run`` does the same loop in the foreground.
"""

from __future__ import annotations

import logging
import time
import uuid
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

from ladder.service import LadderError, Ladders

from .runtime import Runtime

log = logging.getLogger(__name__)
_RELEASE = (
    "if redis.call('get', KEYS[1]) == ARGV[1] then return redis.call('del', KEYS[1]) end return 0"
)


def lock_key(prefix: str) -> str:
    return f"{prefix}:w:ladder-lock"


@contextmanager
def scheduling_lock(
    client: Any, prefix: str, wait: float = 10.0, ttl: float = 30.0
) -> Iterator[None]:
    """Hold the ladder scheduling mutex (for changes such as deleting a ladder), waiting up to
    ``wait`` seconds for a scheduling pass to end; ``TimeoutError`` if it does not."""
    me = uuid.uuid4().hex
    deadline = time.monotonic() + wait
    while not client.set(lock_key(prefix), me, nx=True, px=int(ttl * 1000)):
        if time.monotonic() > deadline:
            raise TimeoutError(
                f"a ladder scheduling pass held {lock_key(prefix)} for over {wait:.0f}s; try again"
            )
        time.sleep(0.05)
    try:
        yield
    finally:
        client.eval(_RELEASE, 1, lock_key(prefix), me)


class LadderScheduler:
    def __init__(self, rt: Runtime) -> None:
        self.rt = rt
        self.ladders = Ladders(rt.client, rt.games, prefix=rt.settings.prefix)
        self.lock_key = lock_key(rt.settings.prefix)
        self._next = 0.0
        self._migrated = False

    def due(self) -> bool:
        return self.rt.settings.ladder_interval > 0 and time.monotonic() >= self._next

    def tick(self) -> list[str]:
        """One pass over every ladder (skipped if another worker is at it); the new game ids."""
        self._next = time.monotonic() + self.rt.settings.ladder_interval
        me = uuid.uuid4().hex
        ttl_ms = max(5000, int(self.rt.settings.job_timeout * 1000))
        if not self.rt.client.set(self.lock_key, me, nx=True, px=ttl_ms):
            return []
        created: list[str] = []
        try:
            if not self._migrated:  # keys written before they were hash-tagged (once a process)
                if moved := self.ladders.migrate_keys():
                    log.warning("ladders: renamed %d key(s) to the hash-tagged layout", moved)
                self._migrated = True
            for name in self.ladders.names():
                try:
                    created += self.ladders.schedule(name)
                except LadderError as exc:  # e.g. not enough entrants yet
                    log.debug("ladder %s: %s", name, exc)
        finally:
            self.rt.client.eval(_RELEASE, 1, self.lock_key, me)
        if created:
            log.info("ladders: started %d game(s): %s", len(created), ", ".join(created[:5]))
        return created
