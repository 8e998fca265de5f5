"""Event storage for the game server: envelopes, the ``EventStore`` port, its Redis Streams
adapter and ``connect``, which turns a store URL into a redis-py client.

Store URLs accepted by ``connect``:

* ``None`` / ``""`` / ``embedded://`` - the embedded server in ``run/redis`` (relative to the
  working directory), started on first use and shared by every process that connects to it;
* ``embedded://<dir>`` (relative) or ``embedded:///<abs dir>``, optional ``?fsync=everysec``;
* ``redis://``, ``rediss://``, ``unix://`` - an existing Redis (redis-py URL syntax);
* ``memory://[<name>]`` - fakeredis in this process only (unit tests; needs ``fakeredis[lua]``).
"""

from __future__ import annotations

import threading
from typing import Any
from urllib.parse import parse_qs, urlsplit

import redis

from events.clients import ClientSettings
from events.embedded import EmbeddedServer, find_server_binary
from events.envelope import (
    GENESIS_HASH,
    UPCASTERS,
    Envelope,
    UpcasterRegistry,
    canonical_json,
    iso_utc,
    seal_batch,
    verify_chain,
)
from events.errors import (
    ChainBroken,
    ConcurrencyConflict,
    EmbeddedServerError,
    GameNotFound,
    InvalidBatch,
    StoreError,
    UpcastError,
)
from events.redis_store import RedisStore
from events.store import AppendResult, EventStore, GameEntry, StreamHead

DEFAULT_EMBEDDED_DIR = "run/redis"

__all__ = [
    "DEFAULT_EMBEDDED_DIR",
    "GENESIS_HASH",
    "UPCASTERS",
    "AppendResult",
    "ChainBroken",
    "ClientSettings",
    "ConcurrencyConflict",
    "EmbeddedServer",
    "EmbeddedServerError",
    "Envelope",
    "EventStore",
    "GameEntry",
    "GameNotFound",
    "InvalidBatch",
    "RedisStore",
    "StoreError",
    "StreamHead",
    "UpcastError",
    "UpcasterRegistry",
    "canonical_json",
    "connect",
    "embedded_server",
    "find_server_binary",
    "iso_utc",
    "seal_batch",
    "verify_chain",
]

_memory_servers: dict[str, Any] = {}
_memory_lock = threading.Lock()


def embedded_server(url: str | None = None) -> EmbeddedServer:
    """The ``EmbeddedServer`` an ``embedded://`` URL (or None) designates, without starting it."""
    url = url or "embedded://"
    parts = urlsplit(url)
    if parts.scheme != "embedded":
        raise ValueError(f"{url!r} is not an embedded:// URL")
    path = (parts.netloc + parts.path) or DEFAULT_EMBEDDED_DIR
    query = parse_qs(parts.query)
    unknown = set(query) - {"fsync"}
    if unknown:
        raise ValueError(f"unknown option(s) {sorted(unknown)} in {url!r}; only 'fsync' is known")
    fsync = query.get("fsync", ["always"])[-1]
    return EmbeddedServer(path, fsync=fsync)


def connect(
    url: str | None = None,
    *,
    decode_responses: bool = False,
    settings: ClientSettings | None = None,
) -> Any:
    """A redis-py client for a store URL (see the module docstring for the forms).

    The default ``decode_responses=False`` gives bytes, as RQ needs; ``RedisStore`` accepts
    either kind of client. ``settings`` (``events.clients``) sets its timeouts, health checks and
    retries for its use; the default, ``clients.commands()``, is for ordinary commands. A client
    that blocks on the server (``XREAD BLOCK``, RQ's dequeue) needs ``clients.blocking(seconds)``.
    """
    from events import clients

    opts = (settings or clients.commands()).kwargs()
    if not url or url.startswith("embedded:"):
        return embedded_server(url).client(decode_responses=decode_responses, **opts)
    scheme = urlsplit(url).scheme
    if scheme in ("redis", "rediss", "unix"):
        return redis.Redis.from_url(url, decode_responses=decode_responses, **opts)
    if scheme == "memory":
        try:
            import fakeredis
        except ImportError:
            raise StoreError(
                "memory:// needs fakeredis: pip install 'fakeredis[lua]' (dev dependency)"
            ) from None
        name = url[len("memory://") :]
        with _memory_lock:
            server = _memory_servers.setdefault(name, fakeredis.FakeServer())
        return fakeredis.FakeRedis(server=server, decode_responses=decode_responses)
    raise ValueError(
        f"store URL {url!r} is not supported; use redis://host:port/db, unix:///path.sock, "
        f"embedded://<dir> (or nothing, for the embedded default) or memory:// (tests)"
    )
