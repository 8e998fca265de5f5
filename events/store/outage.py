"""When the store is out of service: gone, stalled, or up but refusing writes, and a cheap probe.

Two kinds of store outage, answered alike by every process (the API answers 503 with
``Retry-After``, the workers wait and carry on):

* **down** (``DOWN``): redis-py raises ``ConnectionError`` (refused, reset, ``LOADING``) or
  ``TimeoutError`` (a stalled server, ``ReplicaWaitTimeout``);
* **refusing writes** (``refusal``): Redis answers, reads work, but it refuses every write with
  an error whose code says why - ``OOM`` (``maxmemory`` reached under ``noeviction``),
  ``READONLY`` (the server is a replica now, e.g. after a failover), ``MISCONF`` (it cannot
  persist: an AOF write failed, e.g. a full disk with ``appendfsync everysec``, or an RDB save
  failed with ``stop-writes-on-bgsave-error``; Redis refuses even ``PING`` then) and
  ``NOREPLICAS`` (``min-replicas-to-write`` not met). Redis checks these before a command runs,
  and inside a script before its first write only, so a refused append or creation wrote
  nothing: it is safe to retry.

``write_refusal`` asks whether the store takes writes now, for ``/readyz`` and the workers'
wait: ``SET <key> 1 XX PX 1000`` on a key nobody creates (Redis refuses it as it refuses any
write, yet when accepted it writes nothing: no memory, no AOF, no fsync) and, pipelined with it
on a single Redis, ``INFO memory``, because a server at the edge of ``maxmemory`` still takes a
30-byte command while the writes that matter (a game's first events, tens of KB) are refused.
"""

from __future__ import annotations

import re
from typing import Any

import redis

#: what redis-py raises for a server that is gone, restarting (``LOADING``) or stalled
DOWN: tuple[type[Exception], ...] = (
    redis.exceptions.ConnectionError,
    redis.exceptions.TimeoutError,
    # a cluster whose slot has no reachable master for now (a failover under way: CLUSTERDOWN,
    # MASTERDOWN, TRYAGAIN, redis-py's "TTL exhausted" while the layout settles)
    redis.exceptions.ClusterError,
    redis.exceptions.TryAgainError,
)

#: what redis-py raises for any failure: the base of ``DOWN`` and of ``REPLY_ERROR``
STORE_ERROR: type[Exception] = redis.exceptions.RedisError
#: Redis answered a command with an error: a refusal (``refusal``) or a failure of the command
REPLY_ERROR: type[Exception] = redis.exceptions.ResponseError

#: error code -> what it means, for messages and logs
REFUSALS: dict[str, str] = {
    "OOM": "it is full (maxmemory reached)",
    "READONLY": "it is a read-only replica (a failover?)",
    "MISCONF": "it cannot write to its disk (AOF or RDB save failing)",
    "NOREPLICAS": "too few replicas are connected (min-replicas-to-write)",
}
#: a refusal raised inside a script: Redis 7+ keeps the code first; Redis 6 wraps it
_IN_SCRIPT = re.compile(r"(?:^|[\s:-])(" + "|".join(REFUSALS) + r")\s")
#: below this many bytes left under ``maxmemory`` (``noeviction``) the store counts as full
HEADROOM_BYTES = 256 * 1024


def refusal(exc: BaseException) -> str | None:
    """The code (``OOM``, ``READONLY``, ``MISCONF``, ``NOREPLICAS``) when ``exc`` is Redis
    refusing a write for now, else None."""
    if isinstance(exc, redis.exceptions.OutOfMemoryError):
        return "OOM"
    if isinstance(exc, redis.exceptions.ReadOnlyError):
        return "READONLY"
    if not isinstance(exc, redis.exceptions.ResponseError):
        return None
    message = str(exc)
    code = message.split(" ", 1)[0]
    if code in REFUSALS:
        return code
    if "script" in message or "of pipeline caused error" in message:  # (a cluster pipeline)
        m = _IN_SCRIPT.search(message)
        if m is not None:
            return m.group(1)
    return None


def is_outage(exc: BaseException) -> bool:
    """Whether ``exc`` means the store is out of service (down, stalled or refusing writes):
    wait and retry, nothing about the request was wrong."""
    return isinstance(exc, DOWN) or refusal(exc) is not None


def describe(code: str) -> str:
    """``"OOM: it is full (maxmemory reached)"``."""
    return f"{code}: {REFUSALS.get(code, 'it refuses writes')}"


def probe_key(prefix: str) -> str:
    """The key ``write_refusal`` probes with on the store under ``prefix`` (nothing creates it)."""
    return f"{prefix}:write-probe"


def write_refusal(client: Any, key: str) -> str | None:
    """Why the store refuses writes now (``describe`` of the code, or how little memory is left),
    None when it takes them. Raises what ``DOWN`` names when it does not answer. One round trip;
    ``key`` is one nothing creates (``probe_key``)."""
    cluster = isinstance(client, redis.RedisCluster)
    pipe = client.pipeline(transaction=False)
    pipe.set(key, "1", xx=True, px=1000)
    if not cluster:  # (a cluster pipeline takes keyed commands only: the probe's node decides)
        pipe.info("memory")
    try:
        replies = pipe.execute(raise_on_error=False)
    except redis.exceptions.ResponseError as exc:  # (MISCONF refuses a health check's PING too)
        replies = [exc]
    if isinstance(replies[0], BaseException):
        code = refusal(replies[0])
        if code is None:
            raise replies[0]
        return describe(code)
    info = replies[1] if len(replies) > 1 else None
    if isinstance(info, dict):  # (fakeredis has no INFO: nothing to check)
        return _memory_left(info)
    return None


def _memory_left(info: dict[str, Any]) -> str | None:
    """A ``noeviction`` server whose counted memory leaves less than ``HEADROOM_BYTES``."""
    try:
        limit = int(info.get("maxmemory") or 0)
        used = int(info.get("used_memory") or 0) - int(info.get("mem_not_counted_for_evict") or 0)
    except (TypeError, ValueError):
        return None
    if limit <= 0 or info.get("maxmemory_policy") != "noeviction":
        return None
    left = limit - used
    if left >= HEADROOM_BYTES:
        return None
    return (
        f"{describe('OOM')}: {max(left, 0)} bytes left of maxmemory {limit}, less than the "
        f"{HEADROOM_BYTES} a game's writes need"
    )
