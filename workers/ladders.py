"""The ladder scheduler inside ``rfg worker``: keeps every ladder's games running.

Every ``ladder_interval`` seconds the sweep thread of each worker calls ``LadderScheduler.tick``;
one worker at a time does the work, under the mutex ``<prefix>:w:ladder-lock`` (SET NX with a
TTL, released by compare-and-delete), since ``Ladders.schedule`` reads "how many are running"
and then creates games, which two processes must not do at once. For each ladder (``Ladders.names``)
it calls ``Ladders.schedule``, which first records every finished game (``record_finished``:
once per game, guarded by the ladder's ``:recorded`` set) and then starts games until the
ladder's ``concurrency`` are running. The new games go through this worker's ``Games``, so their
first bot turns are dispatched at once. External seats are left to their bot account (the
workers only enforce their time control). Burst mode (``rfg worker --burst``) does not schedule,
so it still ends. ``rfg ladder run`` does the same loop in the foreground.
"""

from __future__ import annotations

import logging
import time
import uuid

from ladder.service import LadderError, Ladders

from .runtime import Runtime

log = logging.getLogger(__name__)
_RELEASE = (
    "if redis.call('get', KEYS[1]) == ARGV[1] then return redis.call('del', KEYS[1]) end return 0"
)


class LadderScheduler:
    def __init__(self, rt: Runtime) -> None:
        self.rt = rt
        self.ladders = Ladders(rt.client, rt.games, prefix=rt.settings.prefix)
        self.lock_key = f"{rt.settings.prefix}:w:ladder-lock"
        self._next = 0.0

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
