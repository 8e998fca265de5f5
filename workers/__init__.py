"""RQ workers: bot turns, time-control timeouts, and the sweep that makes them crash-safe.

| module | owns |
| --- | --- |
| ``settings`` | ``WorkerSettings``: queue, sweep cadence, stale thresholds, RQ job options |
| ``policy`` | choosing a command: the seat's bot, or the table's timeout policy (``minimal``) |
| ``dispatch`` | ``Dispatcher``: the jobs a game state needs, deterministic ids, ``unique`` enqueue |
| ``turns`` | the body of a job: play one pending decision through ``GameService.submit`` |
| ``jobs`` | the RQ job function ``play_decision`` (``Retry`` for infrastructure errors only) |
| ``sweep`` | ``Sweeper``: re-dispatch games whose dispatch was lost or whose jobs died |
| ``runtime`` | the per-process ``Runtime`` jobs use; ``attach`` hooks another ``GameService`` (the API) |
| ``process`` | ``rfg worker``: a ``SimpleWorker`` with the scheduler plus the sweep thread |
| ``ladders`` | ``LadderScheduler``: keeps every ladder's games running |
| ``lifeline`` | the worker's forked children die with it |

Their state on the store (the agenda, leases and locks) is ``events.store.agenda``'s.

Design notes: docs/workers.md.
"""

from __future__ import annotations

from .dispatch import Dispatcher, Plan, plan_decision
from .runtime import Runtime, attach, current, install
from .settings import WorkerSettings
from .sweep import Sweeper

__all__ = [
    "Dispatcher",
    "Plan",
    "Runtime",
    "Sweeper",
    "WorkerSettings",
    "attach",
    "current",
    "install",
    "plan_decision",
]
