"""The sweep: the safety net that makes "append, then enqueue" lose nothing.

A process can die between storing a command and enqueuing what it makes due; an API process
may store commands without the dispatcher attached; a worker can die in the middle of a job; a
scheduler can be down when a deadline passes. Every ``sweep_interval`` one worker (a Redis lock
elects it per interval) runs ``Sweeper.tick``:

1. games created recently (the lobby's last ``reconcile_window`` seconds; the whole lobby at
   start and every ``reconcile_interval``) that are active but not on the agenda are added;
2. every agenda game whose stream version differs from the version last dispatched (and was not
   stored unattended: needing no worker, ``time_control.unattended``), or whose due time has come,
   is loaded and re-dispatched with ``rescue=True`` (stale jobs replaced);
3. finished games are compacted (and archived, with ``RFG_ARCHIVE_DIR``) ``compact_after``
   seconds after they ended, and the archive files of games whose keys expired since are
   deleted (``RedisStore.expire_archives``: Redis expires keys silently, the sweep notices).

Everything it does is idempotent, so two sweeps at once would only waste work. A game a job is
playing on (``workers.turns``: its keeper lease is live) is skipped; once the lease expires (the
job's worker died) the game's moved version brings it back.

The queue's Redis may be a separate server without persistence (``RFG_QUEUE_URL``): if it is
wiped, every job it held is gone. The first sweep records a random epoch on the store
(``events.store.agenda.QueueEpoch``) and the same value on the queue's Redis as a marker;
a sweep that finds the marker missing or different (the queue's Redis was flushed, restarted
without data or replaced, while workers ran or not) puts it back and visits **every** game on the
agenda, enqueuing each pending bot decision and timeout whose job is missing.
"""

from __future__ import annotations

import logging
import threading
import time

from events.store import GameNotFound
from events.store.agenda import Agenda, QueueEpoch
from events.store.lobby import Lobby
from events.store.outage import is_outage

from .ladders import LadderScheduler
from .runtime import Runtime

log = logging.getLogger(__name__)


class Sweeper:
    def __init__(self, rt: Runtime) -> None:
        self.rt = rt
        self.agenda = Agenda(rt.client, rt.settings.prefix)
        self.leases = rt.leases
        self.lobby = Lobby(rt.store)
        self.queue_epoch = QueueEpoch(rt.client, rt.queue_client, rt.settings.prefix)
        self._last_full = 0.0
        self._stop = threading.Event()
        self._thread: threading.Thread | None = None
        self.ladders = LadderScheduler(rt)

    # --- one sweep -------------------------------------------------------------------------
    def tick(self, *, force: bool = False) -> list[str]:
        """One sweep (skipped if another worker holds this interval's lock unless ``force``);
        returns the job ids it enqueued."""
        s = self.rt.settings
        ms = max(50, int(s.sweep_interval * 900))
        if not force and not self.leases.sweep_turn(ms):
            return []
        now = self.rt.clock().timestamp()
        full = force or now - self._last_full >= s.reconcile_interval
        self._reconcile(now, full)
        if full:
            self._last_full = now
        enqueued: list[str] = []
        entries = self.agenda.entries()
        versions, unattended = self.lobby.versions([g for g, _, _ in entries])
        wiped = self.queue_epoch.wiped()
        if wiped and entries:
            log.warning(
                "sweep: the queue's Redis holds no marker (new or wiped): looking at all "
                "%d game(s) on the agenda to enqueue their jobs again",
                len(entries),
            )
        for (game_id, due, seen), version, quiet in zip(entries, versions, unattended, strict=True):
            # a version stored unattended needs no worker: nothing to dispatch for it
            looked_for = version is None or version not in (seen, quiet) or due <= now
            if not looked_for and not wiped:
                continue
            # a visit only for the wipe enqueues the missing jobs and replaces none
            jobs = self.visit(game_id, rescue=looked_for)
            if jobs:
                log.info(
                    "sweep: %s (version %s, last dispatched %s) needed %s",
                    game_id,
                    version,
                    seen,
                    ", ".join(jobs),
                )
            enqueued += jobs
        if s.compact_after >= 0:
            self.compact(now - s.compact_after)
        # finished games whose keys Redis expired (RFG_FINISHED_GAME_SECONDS): their archives go
        self.rt.store.expire_archives()
        return enqueued

    def compact(self, finished_before: float, limit: int = 20) -> int:
        """Compact (and archive, with an archive directory) up to ``limit`` games that ended
        before ``finished_before``; returns how many were compacted or archived."""
        store = self.rt.store
        done = 0
        for game_id in self.agenda.finished_before(finished_before, limit):
            try:
                compacted = store.compact(game_id) is not None
                archived = bool(store.archive_dir) and store.archive(game_id) is not None
            except GameNotFound:
                compacted = archived = False
            except Exception as exc:  # noqa: BLE001 - leave the game as it is, carry on
                if is_outage(exc):  # (Redis down or refusing writes: try again later)
                    raise
                log.exception("compacting %s failed; it stays as it is", game_id)
                compacted = archived = False
            self.agenda.compacted(game_id)
            done += compacted or archived
        return done

    def visit(self, game_id: str, *, rescue: bool = True) -> list[str]:
        if self.leases.kept(game_id):
            return []  # a live job is playing the game on (workers.turns); its lease says so
        try:
            state, version, clocks = self.rt.games.load_clocks(game_id)
        except GameNotFound:
            self.agenda.finish(game_id)
            return []
        return self.rt.dispatcher.dispatch(game_id, state, clocks, version, rescue=rescue)

    # --- helpers ---------------------------------------------------------------------------
    def _reconcile(self, now: float, full: bool) -> None:
        low = None if full else now - self.rt.settings.reconcile_window
        games = self.lobby.created_since(low)
        if not games:
            return
        known = self.agenda.contains(games)
        fresh = [g for g, k in zip(games, known, strict=True) if not k]
        if not fresh:
            return
        active = self.lobby.active(fresh)
        if active:
            log.info(
                "sweep: %d active game(s) not on the agenda yet: %s",
                len(active),
                ", ".join(active[:5]),
            )
            self.agenda.add_new(active, now)

    # --- background thread -----------------------------------------------------------------
    def start(self) -> None:
        self._thread = threading.Thread(target=self._run, name="rfg-sweep", daemon=True)
        self._thread.start()

    def stop(self) -> None:
        self._stop.set()
        if self._thread is not None:
            self._thread.join(timeout=5)

    def _run(self) -> None:
        interval = self.rt.settings.sweep_interval
        down = False  # Redis unreachable: say so once per outage, not once per interval
        while not self._stop.is_set():
            started = time.monotonic()
            try:
                self.tick()
                if self.ladders.due():
                    self.ladders.tick()
                if down:
                    log.warning("sweep: Redis answers again")
                down = False
            except Exception as exc:  # noqa: BLE001 - keep sweeping: a bug in one game, an outage
                if not is_outage(exc):
                    log.exception("sweep or ladder scheduling failed")
                elif not down:  # down, stalled or refusing writes (full, read-only...)
                    log.warning(
                        "sweep: Redis does not answer or refuses writes (%s); retrying every %.2fs",
                        exc,
                        interval,
                    )
                    down = True
            self._stop.wait(max(0.0, interval - (time.monotonic() - started)))
