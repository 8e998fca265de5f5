"""The per-process context jobs run in: store, ``Games`` (with its warm state cache), RQ queue,
dispatcher and clock.

A worker process builds one ``Runtime`` (``rfg worker`` or a test) and installs it with
``install``; the job functions get it with ``current()``. A process that never installed one
(for example a stock ``rq worker``) builds it from the environment on first use:
``RFG_STORE_URL``/``REDIS_URL``, ``RFG_STORE_PREFIX``, ``RFG_QUEUE``.
"""

from __future__ import annotations

import threading
from collections.abc import Callable
from datetime import datetime
from typing import Any

from rq import Queue

import events
from events import clients
from events.games import Games, utc_now

from . import faults
from .dispatch import Dispatcher
from .settings import WorkerSettings, store_url_from_env

#: RQ's heartbeat lease of a worker; its blocking dequeue waits ``WORKER_TTL - 15`` seconds
WORKER_TTL = 60


class Runtime:
    """Store, games and dispatcher on one bytes-mode redis-py client (as RQ needs).

    ``rq_client`` (default: ``client``) is the one the RQ worker dequeues on: its socket timeout
    must outlast RQ's blocking dequeue, while ``client`` serves ordinary commands with a short
    timeout (``from_url`` makes both, see ``events.clients``)."""

    def __init__(
        self,
        client: Any,
        settings: WorkerSettings | None = None,
        clock: Callable[[], datetime] = utc_now,
        *,
        listen: bool = True,
        rq_client: Any = None,
    ) -> None:
        self.settings = settings or WorkerSettings()
        self.client = client
        self.rq_client = client if rq_client is None else rq_client
        self.clock = clock
        self.store = events.RedisStore(client, prefix=self.settings.prefix)
        self.games = Games(self.store, clock=clock)
        self.queue = Queue(self.settings.queue, connection=client)
        self.dispatcher = Dispatcher(self.queue, self.settings, clock)
        if listen:
            if faults.HOOKS.active:  # crash tests: die between an append and its dispatch
                self.games.subscribe(faults.HOOKS.after_append)
            self.games.subscribe(self.dispatcher.after_append)

    @classmethod
    def from_url(
        cls, url: str | None, settings: WorkerSettings | None = None, **kwargs: Any
    ) -> Runtime:
        client = events.connect(url, decode_responses=False, settings=clients.commands())
        # RQ's dequeue is a BLPOP of WORKER_TTL - 15 s: its own client waits longer than that
        rq_client = events.connect(url, settings=clients.blocking(WORKER_TTL - 15))
        return cls(client, settings, rq_client=rq_client, **kwargs)


_current: Runtime | None = None
_lock = threading.Lock()


def install(runtime: Runtime | None) -> None:
    """Make ``runtime`` the one this process's jobs use (None: uninstall)."""
    global _current
    with _lock:
        _current = runtime


def current() -> Runtime:
    global _current
    with _lock:
        if _current is None:
            _current = Runtime.from_url(store_url_from_env(), WorkerSettings.from_env())
        return _current


def attach(games: Games, client: Any, settings: WorkerSettings | None = None) -> Dispatcher:
    """Hook the workers into another process's ``Games`` (the API): after each stored command
    the bot turns and timeouts it makes due are enqueued at once, instead of at the next sweep.

    ``client`` must be a bytes-mode redis-py client on the store's server
    (``events.connect(url)``); ``settings.prefix`` must be the store's prefix.
    """
    if settings is None:
        prefix = getattr(games.store, "prefix", "rfg")
        settings = WorkerSettings(prefix=prefix, queue=prefix)
    dispatcher = Dispatcher(Queue(settings.queue, connection=client), settings, games.clock)
    games.subscribe(dispatcher.after_append)
    return dispatcher
