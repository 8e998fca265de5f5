"""``rfg worker``: run an RQ worker for bot turns and timeouts, with the scheduler and the sweep.

Examples::

    rfg worker                                   # embedded store in <data dir>/redis, until stopped
    rfg worker --url redis://127.0.0.1:6379/0    # a Redis server
    rfg worker --burst                           # play everything due now, then exit
    rfg worker --url redis+cluster://10.0.0.1:7000,10.0.0.2:7000 --queue-url redis://10.0.0.9:6379/0
"""

from __future__ import annotations

import argparse
import sys
from typing import Any

from events import config
from workers.settings import WorkerSettings, queue_url


def add_parser(sub: Any) -> None:
    p = sub.add_parser(
        "worker",
        help="run a worker: bot turns, timeouts, crash-recovery sweep",
        description="Run an RQ worker (with the scheduler and the sweep) that plays bot seats and enforces time control.",
    )
    _add_store_arguments(p)
    _add_cadence_arguments(p)
    p.add_argument("--burst", action="store_true", help="work until nothing is due, then exit")
    p.add_argument(
        "--no-scheduler",
        action="store_true",
        help="do not run RQ's scheduler in this worker (timeouts then wait for a sweep)",
    )
    p.add_argument("--name", help="worker name (default: host, pid and a random suffix)")
    p.add_argument(
        "--log-level",
        default=None,
        help="log level of this worker (default $RFG_LOG_LEVEL or INFO)",
    )
    p.add_argument(
        "--rq-log-level",
        default="WARNING",
        help="log level of RQ itself (default WARNING: no line per job)",
    )
    p.set_defaults(func=run)


def _add_store_arguments(p: argparse.ArgumentParser) -> None:
    """Where the store and the queue are (default: the environment, as for the API)."""
    defaults = WorkerSettings()
    p.add_argument(
        "--url",
        default=None,
        help="store URL as for the API: redis://..., unix://..., embedded://<dir> (default: $RFG_STORE_URL, $REDIS_URL, else the embedded server in <data dir>/redis)",
    )
    p.add_argument(
        "--queue-url",
        default=None,
        help="plain Redis for RQ's queue (default $RFG_QUEUE_URL, else the store's URL; required when the store is a redis+cluster:// URL)",
    )
    p.add_argument(
        "--prefix",
        default=None,
        help=f"store key prefix (default $RFG_STORE_PREFIX or {defaults.prefix!r})",
    )
    p.add_argument(
        "--queue", default=None, help="RQ queue name (default $RFG_QUEUE, else the prefix)"
    )


def _add_cadence_arguments(p: argparse.ArgumentParser) -> None:
    """How often the sweep and the ladders run, how long a job plays on, when games compact."""
    defaults = WorkerSettings()
    p.add_argument(
        "--sweep-interval",
        type=float,
        default=defaults.sweep_interval,
        help=f"seconds between sweeps (default {defaults.sweep_interval})",
    )
    p.add_argument(
        "--stale-after",
        type=float,
        default=defaults.stale_after,
        help=f"seconds after which a started job is presumed dead and a pending bot decision re-dispatched (default {defaults.stale_after})",
    )
    p.add_argument(
        "--ladder-interval",
        type=float,
        default=defaults.ladder_interval,
        help=f"seconds between ladder scheduling passes; 0 turns ladders off (default {defaults.ladder_interval})",
    )
    p.add_argument(
        "--play-on",
        type=float,
        default=None,
        help=f"seconds one job may keep playing a game whose pending decisions all belong to built-in bots; 0: one job per decision (default $RFG_PLAY_ON or {defaults.play_on})",
    )
    p.add_argument(
        "--compact-after",
        type=float,
        default=None,
        help=f"seconds after a game ends before it is compacted (and archived to $RFG_ARCHIVE_DIR if set); negative: never (default $RFG_COMPACT_AFTER or {defaults.compact_after})",
    )


def run(args: argparse.Namespace) -> int:
    from workers import process

    try:
        env = config.read()
        url = args.url if args.url is not None else env.store_url
        queue_url_ = args.queue_url if args.queue_url is not None else env.queue_url
        queue_url(url, queue_url_)
        # the host's Ambition component file: the worker folds Ambition games' logs too
        config.install_ambition(env.get("RFG_AMBITION_COMPONENTS"))
    except ValueError as exc:
        print(f"rfg worker: {exc}", file=sys.stderr)
        return 2
    import logging.config

    from service.logs import logconfig

    try:  # the API's log format: JSON lines (game_id, seat, command_id as fields) or text
        logging.config.dictConfig(
            logconfig(env.get("RFG_LOG_FORMAT"), args.log_level or env.get("RFG_LOG_LEVEL"))
        )
    except ValueError as exc:
        print(f"rfg worker: {exc}", file=sys.stderr)
        return 2
    defaults = WorkerSettings.from_environment(env)
    prefix = args.prefix or defaults.prefix
    settings = defaults.with_(
        prefix=prefix,
        queue=args.queue or env.get("RFG_QUEUE") or prefix,
        sweep_interval=args.sweep_interval,
        stale_after=args.stale_after,
        ladder_interval=args.ladder_interval,
        play_on=args.play_on,
        compact_after=args.compact_after,
    )
    return process.run(
        url,
        settings,
        burst=args.burst,
        with_scheduler=not args.no_scheduler,
        name=args.name,
        rq_log_level=args.rq_log_level.upper(),
        queue_url=queue_url_,
    )
