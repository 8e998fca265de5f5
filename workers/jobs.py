"""RQ job functions (referenced by import path, so keep the names stable).

``play_decision`` is the only job: it plays one pending bot or timeout decision through
``turns.play``. Infrastructure errors (Redis unreachable, timeouts, or refusing writes: full,
read-only...; ``events.store.outage.is_outage``) return an RQ ``Retry`` with back-off; everything else fails the
job without retry - in particular a command the rules reject, which marks the job
``meta["rejected"]`` so the sweep does not run it again.
"""

from __future__ import annotations

import logging
from typing import Any

from rq import Retry, get_current_job
from rq.utils import now as rq_now

from events.store.job_latency import record_job_latency
from events.store.outage import is_outage

from . import runtime
from .turns import CommandRejected, play

log = logging.getLogger(__name__)


def infrastructure_error(exc: BaseException) -> bool:
    """A failure of the network or the store (down, stalled, refusing writes): retry the job."""
    return isinstance(exc, (ConnectionError, TimeoutError)) or is_outage(exc)


def play_decision(game_id: str, seat: int, decision_id: int, prefix: str) -> dict[str, Any] | Retry:
    """Play ``seat``'s decision of ``game_id`` that became pending at version ``decision_id``."""
    rt = runtime.current()
    if prefix != rt.settings.prefix:
        raise RuntimeError(
            f"job for store prefix {prefix!r} reached a worker on prefix "
            f"{rt.settings.prefix!r}; give each store its own queue"
        )
    job = get_current_job()
    try:
        outcome = play(rt, game_id, seat, decision_id)
    except CommandRejected:
        if job is not None:
            job.meta["rejected"] = True
            job.save_meta()
        raise
    except Exception as exc:
        if not infrastructure_error(exc):
            raise
        log.warning(
            "infrastructure error in %s seat %d @%d: %r; retrying", game_id, seat, decision_id, exc
        )
        return Retry(
            max=len(rt.settings.retry_intervals), interval=list(rt.settings.retry_intervals)
        )
    if outcome.status == "contended":
        return Retry(max=3, interval=[0, 1, 1])
    if outcome.status == "played":  # the move itself is logged where it is played (turns)
        kind = (outcome.command_id or "bot").split(":", 1)[0]
        if job is not None and job.enqueued_at:
            try:
                record_job_latency(
                    rt.client,
                    rt.settings.prefix,
                    kind,
                    (rq_now() - job.enqueued_at).total_seconds(),
                )
            except Exception as exc:  # the move is played; only the metric is lost
                if not infrastructure_error(exc):
                    raise
                log.warning("could not record the job latency of %s: %r", game_id, exc)
    return outcome.to_dict()
