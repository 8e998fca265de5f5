"""The dispatcher: from a game's state to the RQ jobs it needs, each enqueued at most once.

For every seat that owes a decision (``engine.pending``) the game needs one job (but when every
pending decision is a built-in bot's, one job for the oldest of them, which plays on: see
``workers.turns``):

* a **bot** job, now, for a bot seat or an abandoned seat;
* a **timeout** job, scheduled at the decision's deadline (``enqueue_at``), for a seat under
  time control;
* nothing for a seat without time control (a person with all the time in the world).

A table with a bot pace (``bot_pace_seconds``, ``events.games.time_control``) has its bots play one decision
at a time: of the bot decisions owed, only the one a FIFO queue would reach first
(``next_plan``) gets its job, scheduled (``enqueue_at``) no earlier than the pace after the last
bot decision; the next one is scheduled when that one is stored. Nothing sleeps: a worker is free
for other games meanwhile. RQ's scheduler works in whole seconds, so a paced decision is played
up to about a second after its time, never before.

Job ids are deterministic - ``<prefix>-<bot|timeout>-<seat>-<decision version>-<game id>`` - and
enqueued with RQ's atomic ``unique=True``, so the same pending decision is enqueued once however
many processes (job chains, the API, sweeps) notice it. Each job carries the decision it was
made for and does nothing if the game moved on; its command id (``bot:<seat>:<decision
version>``) makes the store apply it at most once even if two jobs for it ever run.

``dispatch(..., rescue=True)`` (the sweep) also looks at the existing job of each id: a job
STARTED long ago (dead worker), QUEUED long ago but no longer in its queue (a worker died
between taking and starting it), SCHEDULED long past its time (no scheduler), or finished or
failed (other than by a rejected command) while its decision is still pending, is deleted and
enqueued again.
"""

from __future__ import annotations

import logging
import math
import re
from collections.abc import Callable
from dataclasses import dataclass
from datetime import datetime, timedelta
from typing import Any

from rq import Queue
from rq.exceptions import DuplicateJobError, NoSuchJobError
from rq.job import Job, JobStatus

import engine
from engine.state import GameState
from events.games.service import Change, utc_now
from events.games.time_control import (
    BOT_ACTOR_PREFIX,
    TIMEOUT_ACTOR,
    Clocks,
    seat_kinds,
    worker_plays,
)
from events.store.agenda import Agenda

from .settings import WorkerSettings

log = logging.getLogger(__name__)

JOB_FUNC = "workers.jobs.play_decision"
_UNSAFE = re.compile(r"[^A-Za-z0-9-]")


def _safe(text: str) -> str:
    """An unambiguous RQ-safe spelling (RQ job ids allow only ``[A-Za-z0-9_-]``)."""
    return _UNSAFE.sub(lambda m: f"_{ord(m.group()):02x}", text)


@dataclass(frozen=True)
class Plan:
    """How one pending decision is played: by whom, under which command id, from when."""

    game_id: str
    seat: int
    decision_id: int
    kind: str  # "bot" or "timeout"
    player: str  # the bot name, or the timeout policy
    actor: str
    at: datetime | None  # None: now

    @property
    def command_id(self) -> str:
        return f"{self.kind}:{self.seat}:{self.decision_id}"

    def job_id(self, prefix: str) -> str:
        return f"{_safe(prefix)}-{self.kind}-{self.seat}-{self.decision_id}-{_safe(self.game_id)}"


def plan_decision(
    game_id: str, state: GameState, clocks: Clocks, seat: int, default_bot: str
) -> Plan | None:
    """The plan for ``seat``'s pending decision (``worker_plays``), or None if a person or an
    external program owes it with no deadline."""
    sc = clocks.seats[seat]
    player = worker_plays(state, clocks, seat)
    if player is None or sc.decision_id is None:
        return None
    if player == "bot":
        table = state.table
        kind = seat_kinds(table, len(state.players))[seat]
        bot = table["seats"][seat]["bot"] if kind == "bot" else table.get("abandoned_bot")
        name = str(bot or default_bot)
        actor = f"{BOT_ACTOR_PREFIX}{name}"
        return Plan(game_id, seat, sc.decision_id, "bot", name, actor, clocks.bot_due())
    deadline = clocks.deadline(seat)
    if deadline is None:
        return None
    return Plan(game_id, seat, sc.decision_id, "timeout", clocks.policy, TIMEOUT_ACTOR, deadline)


def plans(game_id: str, state: GameState, clocks: Clocks, default_bot: str) -> list[Plan]:
    if state.over:
        return []
    out = []
    for seat in sorted(engine.pending(state)):
        p = plan_decision(game_id, state, clocks, seat, default_bot)
        if p is not None:
            out.append(p)
    if clocks.pace_ms:  # paced bots play one at a time: the others wait for their turn
        bots = [p for p in out if p.kind == "bot"]
        if len(bots) > 1:
            first = next_plan(bots)
            out = [p for p in out if p.kind != "bot" or p is first]
    return out


def bots_only(state: GameState, game_plans: list[Plan]) -> bool:
    """Whether every decision the game owes is a built-in bot's to play now (no person or
    external program, no deadline): the game may be played on by one job."""
    pending = engine.pending(state)
    return (
        bool(pending)
        and len(game_plans) == len(pending)
        and all(p.kind == "bot" for p in game_plans)
    )


def next_plan(game_plans: list[Plan]) -> Plan:
    """The decision a job per decision would reach first: RQ's queue is FIFO and decisions are
    enqueued when they become pending, in seat order, so the oldest (version, seat)."""
    return min(game_plans, key=lambda p: (p.decision_id, p.seat))


class Dispatcher:
    """Enqueues the jobs a game needs and keeps its agenda entry up to date."""

    def __init__(
        self,
        queue: Queue,
        settings: WorkerSettings,
        clock: Callable[[], datetime] = utc_now,
        store_client: Any = None,
    ) -> None:
        self.queue = queue
        self.settings = settings
        self.clock = clock
        # the agenda is the store's (it must survive the queue's Redis); one server by default
        self.agenda = Agenda(
            queue.connection if store_client is None else store_client, settings.prefix
        )
        #: games a job of this process is playing on: their appends enqueue nothing (the job
        #: plays the next decision itself and hands the game back when it stops)
        self.kept: set[str] = set()

    def after_append(self, change: Change) -> None:
        """``GameService`` listener: dispatch right after each stored command.

        Only decisions that this command made pending are enqueued (the others were enqueued
        with the command that made them pending); a retried command (``duplicate``) dispatches
        everything. A decision whose dispatch was lost is found by the sweep.
        """
        if change.game_id in self.kept or change.unattended:
            # (played on by a job of this process / nothing for a worker:
            # ``events.games.time_control.unattended``)
            return
        fresh = None if change.duplicate else change.version
        self.dispatch(change.game_id, change.state, change.clocks, change.version, fresh=fresh)

    def dispatch(
        self,
        game_id: str,
        state: GameState,
        clocks: Clocks,
        version: int,
        *,
        rescue: bool = False,
        fresh: int | None = None,
        game_plans: list[Plan] | None = None,
    ) -> list[str]:
        """Make sure every pending decision has its job; returns the job ids enqueued now.

        ``fresh``: only enqueue decisions that became pending at that version. ``game_plans``:
        ``plans`` of this state when the caller has them already.
        """
        if state.over:
            self.agenda.finish(game_id)
            return []
        now = self.clock()
        s = self.settings
        enqueued = []
        due = now.timestamp() + s.recheck
        if game_plans is None:
            game_plans = plans(game_id, state, clocks, s.default_bot)
        if s.play_on > 0 and not clocks.pace_ms and bots_only(state, game_plans):
            # one job keeps the game and plays every bot decision on (workers.turns)
            game_plans = [next_plan(game_plans)]
        for plan in game_plans:
            # a paced bot decision gets its job when its turn comes, not when it became pending
            due_now = (
                fresh is None
                or plan.decision_id == fresh
                or (plan.kind == "bot" and clocks.pace_ms)
            )
            if due_now and self._ensure(plan, now, rescue):
                enqueued.append(plan.job_id(s.prefix))
            if plan.at is None:
                due = min(due, now.timestamp() + s.stale_after)
            else:
                due = min(due, plan.at.timestamp() + s.stale_after)
        # only a sweep's look may postpone the next look: after an append whose predecessor's
        # dispatch was lost, the game is still looked at within stale_after
        self.agenda.set(game_id, version, due, postpone=rescue)
        return enqueued

    # --- one job ---------------------------------------------------------------------------
    def _enqueue(self, plan: Plan, now: datetime) -> None:
        s = self.settings
        opts: dict[str, Any] = {
            "job_id": plan.job_id(s.prefix),
            "unique": True,
            "result_ttl": s.result_ttl,
            "failure_ttl": s.failure_ttl,
            "job_timeout": s.job_timeout,
            "description": f"{plan.kind} {plan.game_id} seat {plan.seat} @{plan.decision_id}",
        }
        args = (plan.game_id, plan.seat, plan.decision_id, s.prefix)
        if plan.at is None or plan.at <= now:
            self.queue.enqueue(JOB_FUNC, *args, **opts)
        else:
            # the scheduler works in whole seconds: round up so the job never runs early
            at = datetime.fromtimestamp(math.ceil(plan.at.timestamp()), plan.at.tzinfo)
            self.queue.enqueue_at(at, JOB_FUNC, *args, **opts)

    def _ensure(self, plan: Plan, now: datetime, rescue: bool) -> bool:
        try:
            self._enqueue(plan, now)
            return True
        except DuplicateJobError:
            if not rescue:
                return False
        return self._rescue(plan, now)

    def _stranded(self, job: Job, now: datetime, stale: timedelta) -> bool:
        """A QUEUED job no longer in its queue: a worker died between taking it (RQ moves it to
        an intermediate list) and starting it. RQ's own maintenance would find it much later."""
        if job.enqueued_at is None or now - job.enqueued_at < stale:
            return False
        conn = self.queue.connection
        if conn.lpos(self.queue.key, job.id) is not None:
            return False
        conn.lrem(self.queue.intermediate_queue_key, 0, job.id)
        return True

    def _rescue(self, plan: Plan, now: datetime) -> bool:
        """The job of this id exists: replace it if it can no longer do its work."""
        job_id = plan.job_id(self.settings.prefix)
        stale = timedelta(seconds=self.settings.stale_after)
        try:
            job = Job.fetch(job_id, connection=self.queue.connection)
            status = job.get_status(refresh=False)
        except NoSuchJobError:
            status, job = None, None
        if job is not None:
            if status == JobStatus.DEFERRED:
                return False
            if status == JobStatus.QUEUED and not self._stranded(job, now, stale):
                return False
            if status == JobStatus.SCHEDULED and (plan.at is None or now < plan.at + stale):
                return False
            if status == JobStatus.STARTED and job.started_at and now - job.started_at < stale:
                return False
            if status == JobStatus.FAILED and job.meta.get("rejected"):
                log.error(
                    "job %s: its command was rejected by the rules (a bug); the decision "
                    "stays pending until someone looks at it",
                    job_id,
                )
                return False
            log.warning(
                "job %s is %s but %s seat %d still owes decision @%d: enqueuing it again",
                job_id,
                status,
                plan.game_id,
                plan.seat,
                plan.decision_id,
            )
            job.delete()
        try:
            self._enqueue(plan, now)
            return True
        except DuplicateJobError:  # someone else just did it
            return False
