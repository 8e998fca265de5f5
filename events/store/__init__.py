"""Event storage: the ``EventStore`` port (``port``), its Redis Streams adapter
(``redis_adapter``) and ``connect``, which turns a store URL into a redis-py client; beside them
the embedded server (``embedded``), client timeouts (``clients``), compaction of finished games
(``compaction``), outage detection (``outage``) and the bytes-to-text helper (``text``).

Every other kind of data kept in Redis has its one owner module here, which names its keys and
holds its scripts; the packages above reach it through its methods only: the lobby's reads
(``lobby``), the workers' agenda, leases and locks (``agenda``), challenges (``challenges``),
ladders (``ladders``), seed holds (``seeds``), ``Idempotency-Key`` records (``idempotency``)
and the job-latency histogram the workers write and the API reads (``job_latency``).

Store URLs accepted by ``connect``:

* ``None`` / ``""`` / ``embedded://`` - the embedded server in ``<data dir>/redis``
  (``events.store.embedded.default_dir``: ``$RFG_DATA_DIR``, a checkout's ``run/``, else the per-user
  data directory; the same wherever a command runs), started on first use and shared by every
  process that connects to it;
* ``embedded://<dir>`` (relative) or ``embedded:///<abs dir>``, optional ``?fsync=everysec``;
* ``redis://``, ``rediss://``, ``unix://`` - an existing Redis (redis-py URL syntax);
* ``redis+cluster://host:port[,host:port...]`` (``rediss+cluster://`` with TLS) - a Redis Cluster
  through redis-py's ``RedisCluster`` (any reachable node is enough to discover the others);
* on ``redis://``, ``rediss://``, ``unix://`` and the cluster forms, ``?wait=<replicas>`` and
  ``&wait_timeout=<seconds>`` (default 1): every append waits (``WAIT``) until that many replicas
  acknowledged it before it is answered (``events.store.redis_adapter.ReplicaWait``);
* ``memory://[<name>]`` - fakeredis in this process only (unit tests; needs ``fakeredis[lua]``).
"""

from __future__ import annotations

import threading
from typing import Any
from urllib.parse import parse_qs, unquote, urlencode, urlsplit, urlunsplit

import redis
from redis.cluster import ClusterNode, RedisCluster

from events.envelope import (
    GENESIS_HASH,
    Envelope,
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
)
from events.store.clients import ClientSettings
from events.store.embedded import EmbeddedServer, default_dir, find_server_binary
from events.store.port import AppendResult, EventStore, GameEntry, StreamHead
from events.store.redis_adapter import RedisStore, ReplicaWait, ReplicaWaitTimeout, is_cluster

__all__ = [
    "GENESIS_HASH",
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
    "ReplicaWait",
    "ReplicaWaitTimeout",
    "queue_url",
    "StoreError",
    "StreamHead",
    "connect",
    "embedded_server",
    "find_server_binary",
    "is_cluster",
    "is_cluster_url",
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
    path = (parts.netloc + parts.path) or default_dir()
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
    either kind of client. ``settings`` (``events.store.clients``) sets its timeouts, health checks and
    retries for its use; the default, ``clients.commands()``, is for ordinary commands. A client
    that blocks on the server (``XREAD BLOCK``, RQ's dequeue) needs ``clients.blocking(seconds)``.
    """
    from events.store import clients

    chosen = settings or clients.commands()
    opts = chosen.kwargs()
    if not url or url.startswith("embedded:"):
        url = f"unix://{embedded_server(url).ensure_running()}"
    scheme = urlsplit(url).scheme
    if scheme in ("redis", "rediss", "unix"):
        url, wait = _split_wait(url)
        if scheme == "unix":  # (a unix socket has no TCP keep-alive; redis-py refuses the option)
            opts.pop("socket_keepalive", None)
        if chosen.max_connections is None:
            client = redis.Redis.from_url(url, decode_responses=decode_responses, **opts)
        else:  # a bounded pool: callers beyond wait for a connection (up to the socket timeout)
            pool = redis.BlockingConnectionPool.from_url(
                url,
                decode_responses=decode_responses,
                max_connections=chosen.max_connections,
                timeout=chosen.socket_timeout,
                **opts,
            )
            client = redis.Redis(connection_pool=pool)
        client.rfg_replica_wait = wait  # type: ignore[attr-defined]
        return client
    if scheme in CLUSTER_SCHEMES:
        return _cluster(url, decode_responses, opts)
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
        f"redis+cluster://host:port[,host:port...] (a Redis Cluster), embedded://<dir> (or "
        f"nothing, for the embedded default) or memory:// (tests)"
    )


CLUSTER_SCHEMES = ("redis+cluster", "rediss+cluster")


def is_cluster_url(url: str | None) -> bool:
    """Whether a store URL names a Redis Cluster (``redis+cluster://``)."""
    return bool(url) and urlsplit(str(url)).scheme in CLUSTER_SCHEMES


def queue_url(store_url: str | None, queue: str | None = None) -> str | None:
    """The URL RQ runs on: ``queue`` if given, else the store's own URL when that is a single
    Redis. RQ does not support Redis Cluster, so a cluster store needs a queue URL of its own, and
    a cluster queue URL is refused, each with a ``ValueError`` saying what to set."""
    if queue:
        if is_cluster_url(queue):
            raise ValueError(
                f"the queue URL {queue!r} is a Redis Cluster, but RQ (the job queue) needs a plain "
                f"Redis: set RFG_QUEUE_URL (or --queue-url) to redis://host:port/db of a standalone "
                f"server; it holds only job bookkeeping, so it needs no persistence or replicas"
            )
        return queue
    if is_cluster_url(store_url):
        raise ValueError(
            f"the store {store_url!r} is a Redis Cluster, and RQ (the job queue) cannot run on a "
            f"cluster: set RFG_QUEUE_URL (or --queue-url) to redis://host:port/db of a standalone "
            f"Redis for the queue (no persistence needed: the sweep rebuilds every job from the store)"
        )
    return store_url


def _split_wait(url: str) -> tuple[str, ReplicaWait | None]:
    """The URL without the store's own ``wait`` / ``wait_timeout`` options, and those options."""
    parts = urlsplit(url)
    query = parse_qs(parts.query, keep_blank_values=True)
    raw_n = query.pop("wait", [None])[-1]
    raw_t = query.pop("wait_timeout", [None])[-1]
    rest = urlunsplit(parts._replace(query=urlencode(query, doseq=True)))
    if not parts.netloc and parts.path.startswith("/"):  # unix:///path.sock keeps its "//"
        rest = rest.replace(":", "://", 1) if "://" not in rest else rest
    if raw_n is None:
        if raw_t is not None:
            raise ValueError(f"{url!r}: wait_timeout needs wait=<replicas> as well")
        return rest, None
    try:
        replicas = int(raw_n)
        timeout = 1.0 if raw_t is None else float(raw_t)
    except ValueError:
        replicas, timeout = -1, -1.0
    if replicas < 1 or not timeout > 0:
        raise ValueError(
            f"{url!r}: wait must be a number of replicas >= 1 and wait_timeout a "
            f"number of seconds > 0 (for example ?wait=1&wait_timeout=0.5)"
        )
    return rest, ReplicaWait(replicas, timeout)


def _cluster(url: str, decode_responses: bool, opts: dict[str, Any]) -> RedisCluster:
    url, wait = _split_wait(url)
    parts = urlsplit(url)
    nodes: list[ClusterNode] = []
    for location in parts.netloc.rpartition("@")[2].split(","):
        host, _, port = location.strip().rpartition(":")
        if not host or not port.isdigit():
            raise ValueError(
                f"cluster URL {url!r}: give host:port[,host:port...] after "
                f"redis+cluster://, for example redis+cluster://10.0.0.1:7000,10.0.0.2:7000"
            )
        nodes.append(ClusterNode(host.strip("[]"), int(port)))
    if parts.path.strip("/") not in ("", "0"):
        raise ValueError(
            f"cluster URL {url!r}: a Redis Cluster has only database 0; drop '{parts.path}'"
        )
    query = parse_qs(parts.query)
    if query:
        raise ValueError(
            f"cluster URL {url!r}: unknown option(s) {sorted(query)}; only wait "
            f"and wait_timeout are known"
        )
    if parts.username:
        opts["username"] = unquote(parts.username)
    if parts.password:
        opts["password"] = unquote(parts.password)
    if parts.scheme == "rediss+cluster":
        opts["ssl"] = True
    opts.pop("health_check_interval", None)  # RedisCluster checks its nodes itself
    client = RedisCluster(startup_nodes=nodes, decode_responses=decode_responses, **opts)
    client.rfg_replica_wait = wait  # type: ignore[attr-defined]
    return client
