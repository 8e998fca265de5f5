"""The app's connection to the game: one ``Backend`` per app, built by ``init_app``.

It owns the redis-py client (from ``events.store.connect``: embedded server, Redis or fakeredis; a
bounded pool of ``API_REDIS_CONNECTIONS`` connections that requests borrow while they talk to Redis),
the ``RedisStore``, the ``events.games.service.GameService`` application service (whose per-process state cache
is safe across processes: it checks the stored head before using it), the seat tokens, and the
process's one reader of the Redis streams that event streams wait on (``service.fanout``, with the
feed pages they share, ``service.sse.FeedPages``).

With ``DISPATCH_TURNS`` (``RFG_DISPATCH=1``; off by default) the app built by
``rfgcli.wsgi.create_app`` attaches the workers' dispatcher to this ``GameService`` (the service itself
never imports the workers): right after a command is stored, the bot turns and timeouts it
makes due are enqueued for the RQ workers (on ``QUEUE_URL``, default the store's Redis; a
``redis+cluster://`` store needs one), instead of waiting for their next sweep. A failing
dispatch never fails the command (``GameService`` logs it; the sweep recovers).
"""

from __future__ import annotations

import os
from dataclasses import dataclass
from typing import Any

from flask import Flask, current_app

import events.store
from events.games.service import GameService
from events.store import clients, outage
from events.store.redis_adapter import StreamWatch
from events.verify.signing import Signer, load_signer
from service.accounts import BotAccounts
from service.fanout import Fanout
from service.sse import FeedPages
from service.tokens import SeatTokens

#: the longest the fanout reader blocks in one ``XREAD`` (a newly watched key joins within it)
FANOUT_BLOCK_MS = 250


@dataclass
class Backend:
    client: Any
    store: events.store.RedisStore
    games: GameService
    tokens: SeatTokens
    accounts: BotAccounts | None = None
    #: the one reader every event stream of the process waits on (``service.fanout``)
    fanout: Fanout | None = None
    #: feed pages the event streams share (``service.sse``)
    pages: FeedPages | None = None
    #: the key that signs full exports (``events.verify.signing``)
    signer: Signer | None = None
    #: the plain Redis RQ's queue lives on (``QUEUE_URL``, else the store's); None when the store
    #: is a cluster and no queue URL is set (then nothing is enqueued and no queue is measured)
    queue_client: Any = None
    #: the workers' dispatcher, when ``rfgcli.wsgi.create_app`` attached one (``DISPATCH_TURNS``)
    dispatcher: Any = None

    def not_ready(self) -> str | None:
        """Why the store cannot serve now (it does not answer, or refuses writes: full,
        read-only, failing its disk, too few replicas), None when it answers and takes writes.
        One round trip that writes nothing (``events.store.outage.write_refusal``)."""
        try:
            return outage.write_refusal(self.client, outage.probe_key(self.store.prefix))
        except Exception as exc:  # noqa: BLE001 - any failure means "not ready"
            return f"it does not answer ({type(exc).__name__})"


def init_app(app: Flask) -> Backend:
    url = app.config.get("STORE_URL")
    # a stalled Redis: 503, not a hang; many requests at once wait for a pooled connection
    pool = int(app.config["API_REDIS_CONNECTIONS"])
    client = events.store.connect(url, settings=clients.commands().pooled(pool))
    cluster = events.store.is_cluster_url(url)
    if (url and url.startswith("memory:")) or cluster:
        reader = client  # fakeredis blocks across threads; a cluster is polled, never blocked on
    else:
        reader = events.store.connect(url, settings=clients.blocking(FANOUT_BLOCK_MS / 1000))
    fanout = Fanout(StreamWatch(reader), cluster=cluster, block_ms=FANOUT_BLOCK_MS)
    store = events.store.RedisStore(client, prefix=app.config["STORE_PREFIX"])
    tokens = SeatTokens(store)
    # the seats' display names are rendered into the views (a claim's name re-renders them)
    games = GameService(store, names=tokens.records.names)
    try:
        q_url = events.store.queue_url(url, app.config.get("QUEUE_URL"))
    except ValueError:  # a cluster store without a queue URL: fine unless the API must enqueue
        if app.config.get("DISPATCH_TURNS"):
            raise  # the message says what to set
        queue_client = None
    else:
        queue_client = (
            client if q_url == url else events.store.connect(q_url, settings=clients.commands())
        )
    backend = Backend(
        client,
        store,
        games,
        tokens,
        BotAccounts(client, store.prefix),
        fanout=fanout,
        pages=FeedPages(games, fanout),
        signer=signer_for(app),
        queue_client=queue_client,
    )
    app.extensions["rfg"] = backend
    return backend


def signer_for(app: Flask) -> Signer:
    """The signing key from the config (``SIGNING_KEY``, ``SIGNING_KEY_FILE``, ``DATA_DIR``), or
    the environment's (``events.verify.signing.load_signer``)."""
    env = {k: v for k, v in os.environ.items() if k.startswith("RFG_")}
    for key, var in (
        ("SIGNING_KEY", "RFG_SIGNING_KEY"),
        ("SIGNING_KEY_FILE", "RFG_SIGNING_KEY_FILE"),
        ("DATA_DIR", "RFG_DATA_DIR"),
    ):
        if app.config.get(key):
            env[var] = str(app.config[key])
    return load_signer(env)


def backend() -> Backend:
    b: Backend = current_app.extensions["rfg"]
    return b
