"""Worker settings: queue, sweep cadence, crash-recovery thresholds and RQ job options."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, replace
from typing import Any

from events import config
from events.store import queue_url  # noqa: F401  (re-exported: the workers' settings name it too)


@dataclass(frozen=True)
class WorkerSettings:
    """Everything a worker process, the dispatcher and the sweep agree on.

    ``prefix`` must be the store's key prefix (``RedisStore(prefix=...)``); ``queue`` is the RQ
    queue bot turns and timeouts go to.
    """

    prefix: str = "rfg"
    queue: str = "rfg"
    #: seconds between two sweeps (one sweep per interval across all workers, by a lock)
    sweep_interval: float = 1.0
    #: a job STARTED longer ago than this (its worker presumably died), a timeout still
    #: SCHEDULED this long after its deadline (no scheduler running), or a pending bot decision
    #: unchanged this long is re-dispatched by the sweep
    stale_after: float = 10.0
    #: every active game is looked at by the sweep at least this often
    recheck: float = 60.0
    #: full lobby scan (games created while no worker ran); each sweep also scans recent ones
    reconcile_interval: float = 300.0
    reconcile_window: float = 120.0
    job_timeout: int = 60
    result_ttl: int = 300
    failure_ttl: int = 7 * 24 * 3600
    #: ``Retry`` for infrastructure errors only (Redis unreachable, timeouts)
    retry_intervals: tuple[int, ...] = (1, 2, 5, 10, 30)
    #: reloads after a ConcurrencyConflict (other seats acting at the same time)
    conflict_retries: int = 50
    #: the bot that plays abandoned seats when the table does not name one (``abandoned_bot``)
    default_bot: str = "heuristic"
    #: seconds between two ladder scheduling passes (``workers/ladders.py``); 0: off
    ladder_interval: float = 1.0
    #: seconds one job may keep a game whose every pending decision belongs to built-in bots,
    #: playing decision after decision (``workers.turns.play_on``); 0: one job per decision
    play_on: float = 2.0
    #: seconds after a game ends before the sweep compacts it (``RedisStore.compact``; and moves
    #: it to ``$RFG_ARCHIVE_DIR`` when that is set); negative: never
    compact_after: float = 60.0

    def with_(self, **changes: Any) -> WorkerSettings:
        return replace(self, **{k: v for k, v in changes.items() if v is not None})

    @classmethod
    def from_env(cls, environ: Mapping[str, str] | None = None) -> WorkerSettings:
        """``RFG_STORE_PREFIX`` (the API's too), ``RFG_QUEUE``, ``RFG_PLAY_ON``,
        ``RFG_COMPACT_AFTER``, read and checked by ``events.config``."""
        return cls.from_environment(config.read(environ))

    @classmethod
    def from_environment(cls, env: config.Environment) -> WorkerSettings:
        """The settings an environment already read gives."""
        return cls().with_(
            prefix=env.store_prefix,
            queue=env.queue,
            play_on=env.get("RFG_PLAY_ON"),
            compact_after=env.get("RFG_COMPACT_AFTER"),
        )


def queue_url_from_env(environ: Mapping[str, str] | None = None) -> str | None:
    """``RFG_QUEUE_URL``: a plain Redis of its own for RQ (None: the store's, see ``queue_url``)."""
    return config.read(environ).queue_url


def store_url_from_env(environ: Mapping[str, str] | None = None) -> str | None:
    """The store URL the API also uses: ``RFG_STORE_URL``, else ``REDIS_URL``, else embedded."""
    return config.read(environ).store_url
