"""The per-process context jobs run in: store, ``GameService`` (with its warm state cache), RQ queue,
dispatcher and clock.

A worker process builds one ``Runtime`` (``rfg worker`` or a test) and installs it with
``install``; the job functions get it with ``current()``. A process that never installed one
(for example a stock ``rq worker``) builds it from the environment on first use:
``RFG_STORE_URL``/``REDIS_URL``, ``RFG_QUEUE_URL``, ``RFG_STORE_PREFIX``, ``RFG_QUEUE``.

The store and the queue may be different servers: the store (``client``) holds the games and the
sweep's agenda, and may be a Redis Cluster; RQ (``queue_client``, ``rq_client``) runs on a plain
Redis, by default the store's own when that is a single Redis (``settings.queue_url``).
"""

from __future__ import annotations

import threading
from collections.abc import Callable
from datetime import datetime
from typing import Any

from rq import Queue

import events.store
from events.games.service import GameService, utc_now
from events.store import clients
from events.store.accounts import SeatTokenStore
from events.store.agenda import Leases

from .dispatch import Dispatcher
from .settings import WorkerSettings, queue_url, queue_url_from_env, store_url_from_env

#: RQ's heartbeat lease of a worker; its blocking dequeue waits ``WORKER_TTL - 15`` seconds
WORKER_TTL = 60


class Runtime:
    """Store, games and dispatcher on bytes-mode redis-py clients (as RQ needs).

    ``client`` is the store's (a Redis or a ``RedisCluster``); ``queue_client`` (default:
    ``client``) the plain Redis RQ's queue lives on; ``rq_client`` (default: ``queue_client``) is
    the one the RQ worker dequeues on: its socket timeout must outlast RQ's blocking dequeue,
    while the others serve ordinary commands with a short timeout (``from_url`` makes all three,
    see ``events.store.clients``)."""

    def __init__(
        self,
        client: Any,
        settings: WorkerSettings | None = None,
        clock: Callable[[], datetime] = utc_now,
        *,
        listen: bool = True,
        rq_client: Any = None,
        queue_client: Any = None,
    ) -> None:
        self.settings = settings or WorkerSettings()
        self.client = client
        self.queue_client = client if queue_client is None else queue_client
        self.rq_client = self.queue_client if rq_client is None else rq_client
        if events.store.is_cluster(self.queue_client):
            raise ValueError(
                "RQ cannot run on a Redis Cluster: give the Runtime a queue_client "
                "on a plain Redis (RFG_QUEUE_URL)"
            )
        self.clock = clock
        self.store = events.store.RedisStore(client, prefix=self.settings.prefix)
        # (the views a bot's last move renders show the seats' names, as the API's do)
        self.games = GameService(self.store, clock=clock, names=SeatTokenStore(self.store).names)
        #: the workers' locks and leases on the store (``events.store.agenda``)
        self.leases = Leases(client, self.settings.prefix)
        self.queue = Queue(self.settings.queue, connection=self.queue_client)
        self.dispatcher = Dispatcher(self.queue, self.settings, clock, store_client=client)
        if listen:
            self.games.subscribe(self.dispatcher.after_append)

    @classmethod
    def from_url(
        cls,
        url: str | None,
        settings: WorkerSettings | None = None,
        *,
        queue_url_: str | None = None,
        **kwargs: Any,
    ) -> Runtime:
        """Clients for the store at ``url`` and RQ at ``queue_url_`` (default: the store's URL
        when that is a single Redis; ``ValueError`` for a cluster without a queue URL)."""
        q_url = queue_url(url, queue_url_)
        client = events.store.connect(url, decode_responses=False, settings=clients.commands())
        queue_client = (
            client
            if q_url == url
            else events.store.connect(q_url, decode_responses=False, settings=clients.commands())
        )
        # RQ's dequeue is a BLPOP of WORKER_TTL - 15 s: its own client waits longer than that
        rq_client = events.store.connect(q_url, settings=clients.blocking(WORKER_TTL - 15))
        return cls(client, settings, rq_client=rq_client, queue_client=queue_client, **kwargs)


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
            _current = Runtime.from_url(
                store_url_from_env(), WorkerSettings.from_env(), queue_url_=queue_url_from_env()
            )
        return _current


def attach(
    games: GameService,
    client: Any,
    settings: WorkerSettings | None = None,
    queue_client: Any = None,
) -> Dispatcher:
    """Hook the workers into another process's ``GameService`` (the API): after each stored command
    the bot turns and timeouts it makes due are enqueued at once, instead of at the next sweep.

    ``client`` must be a bytes-mode redis-py client on the store's server
    (``events.store.connect(url)``), ``queue_client`` one on the queue's Redis (default: ``client``);
    ``settings.prefix`` must be the store's prefix.
    """
    if settings is None:
        prefix = getattr(games.store, "prefix", "rfg")
        settings = WorkerSettings(prefix=prefix, queue=prefix)
    q_client = client if queue_client is None else queue_client
    dispatcher = Dispatcher(
        Queue(settings.queue, connection=q_client), settings, games.clock, store_client=client
    )
    games.subscribe(dispatcher.after_append)
    return dispatcher
