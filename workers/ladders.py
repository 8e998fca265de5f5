"""The ladder scheduler inside ``rfg worker``: keeps every ladder's games running.

Every ``ladder_interval`` seconds the sweep thread of each worker calls ``LadderScheduler.tick``;
one worker at a time does the work, under the ladder scheduling mutex (``Leases.ladder``: a lease
with a TTL, released by its holder), since ``Ladders.schedule`` reads "how many are running"
and then creates games, which two processes must not do at once. For each ladder (``Ladders.names``)
it calls ``Ladders.schedule``, which first records every finished game (``record_finished``:
once per game, guarded by the ladder's ``:recorded`` set) and then starts games until the
ladder's ``concurrency`` are running, pairing its current entrants (those bot accounts that
joined an open ladder themselves too; not those that left). The new games go through this worker's ``GameService``, so their
first bot turns are dispatched at once. External seats are left to their bot account (the
workers only enforce their time control). Burst mode (``rfg worker --burst``) does not schedule,
so it still ends. ``rfg ladder run`` does the same loop in the foreground.
"""

from __future__ import annotations

import logging
import time
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

from events.store.agenda import Leases
from ladder.service import LadderError, Ladders

from .runtime import Runtime

log = logging.getLogger(__name__)


@contextmanager
def scheduling_lock(
    client: Any, prefix: str, wait: float = 10.0, ttl: float = 30.0
) -> Iterator[None]:
    """Hold the ladder scheduling mutex (for changes such as deleting a ladder), waiting up to
    ``wait`` seconds for a scheduling pass to end; ``TimeoutError`` if it does not."""
    lease = Leases(client, prefix).ladder(int(ttl * 1000))
    deadline = time.monotonic() + wait
    while not lease.take():
        if time.monotonic() > deadline:
            raise TimeoutError(
                f"a ladder scheduling pass held the ladders for over {wait:.0f}s; try again"
            )
        time.sleep(0.05)
    try:
        yield
    finally:
        lease.release()


class LadderScheduler:
    def __init__(self, rt: Runtime) -> None:
        self.rt = rt
        self.ladders = Ladders(rt.client, rt.games, prefix=rt.settings.prefix)
        self._next = 0.0

    def due(self) -> bool:
        return self.rt.settings.ladder_interval > 0 and time.monotonic() >= self._next

    def tick(self) -> list[str]:
        """One pass over every ladder (skipped if another worker is at it); the new game ids."""
        self._next = time.monotonic() + self.rt.settings.ladder_interval
        lease = self.rt.leases.ladder(max(5000, int(self.rt.settings.job_timeout * 1000)))
        if not lease.take():
            return []
        created: list[str] = []
        try:
            for name in self.ladders.names():
                try:
                    created += self.ladders.schedule(name)
                except LadderError as exc:  # e.g. not enough entrants yet
                    log.debug("ladder %s: %s", name, exc)
        finally:
            lease.release()
        if created:
            log.info("ladders: started %d game(s): %s", len(created), ", ".join(created[:5]))
        return created
