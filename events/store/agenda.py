"""The workers' own state on the store: the agenda, the done sets, the leases and locks, and the
queue's epoch. This module names every key of it and holds its scripts; ``workers`` reaches them
through ``Agenda``, ``Leases`` and ``QueueEpoch`` only.

**The agenda**: which active games the sweep must look at, and when. It lives on the store (so
wiping the queue's Redis loses none of it) in ``SHARDS`` shards, each a pair of keys sharing one
hash tag (so one Redis Cluster slot; the shards spread over the masters):

* ``<prefix>:w:agenda:{w<k>}`` sorted set: game id -> epoch seconds of its next due look (a
  pending bot decision's progress check, a deadline plus grace, or the periodic recheck);
* ``<prefix>:w:seen:{w<k>}`` hash: game id -> the stream version the dispatcher last acted on.

A game's shard is ``crc32(game id) % SHARDS``. The dispatcher writes its shard's two keys after
each stored command (one pipelined round trip to one node), so the per-command writes are spread
over the cluster instead of all landing on the master of one key. A sweep reads every shard
(``SHARDS`` pipelined reads) and also looks at every game whose stream version differs from
``seen`` (a command stored by a process that died before it could dispatch, or by an API process
without the dispatcher). A finished game leaves the agenda for ``<prefix>:w:done:{w<k>}`` (zset:
game id -> when it was seen finished), where the sweep's compaction (``workers.sweep``) finds it
``compact_after`` seconds later.

Changing ``SHARDS`` strands the entries of the shards no longer read; the sweep's lobby scan
(``workers.sweep``) puts every active game back, so nothing is lost but the keys (delete them).

**Leases and locks** (``Leases``): ``<prefix>:w:sweep-lock`` elects one sweep per interval (SET NX
PX, left to expire); ``<prefix>:w:ladder-lock`` is the ladder scheduling mutex and
``<prefix>:{g:<id>}:keeper`` (in the game's slot) the lease of the job playing a game on
(``workers.turns``): both ``Lease`` s, SET NX PX with a random token, renewed and released only by
their holder (compare-and-expire, compare-and-delete scripts).

**The queue's epoch** (``QueueEpoch``): a random value on the store (``<prefix>:w:queue-epoch``)
and the same on the queue's Redis (``<prefix>:w:queue-marker``); a marker missing or different
means the queue's Redis lost its jobs (``workers.sweep``).
"""

from __future__ import annotations

import secrets
import time
import uuid
import zlib
from typing import Any

from events.store.text import text

#: shards of the agenda (fixed: games are found by it). 16 spreads over any cluster up to 16
#: masters; on a single Redis it costs 16 small reads per sweep.
SHARDS = 16


def shard_of(game_id: str) -> int:
    return zlib.crc32(game_id.encode("utf-8")) % SHARDS


class Agenda:
    def __init__(self, client: Any, prefix: str) -> None:
        self.client = client
        self.prefix = prefix

    def keys(self, shard: int) -> tuple[str, str]:
        """(agenda zset, seen hash) of one shard: one hash tag, so one cluster slot."""
        return f"{self.prefix}:w:agenda:{{w{shard}}}", f"{self.prefix}:w:seen:{{w{shard}}}"

    def _keys_of(self, game_id: str) -> tuple[str, str]:
        return self.keys(shard_of(game_id))

    def set(self, game_id: str, version: int, due: float, *, postpone: bool = True) -> None:
        """Record the version dispatched and the next due look; with ``postpone=False`` an
        earlier due time is kept (so a steady stream of commands cannot push a look away)."""
        key, seen = self._keys_of(game_id)
        pipe = self.client.pipeline(transaction=False)
        pipe.zadd(key, {game_id: due}, lt=not postpone)
        pipe.hset(seen, game_id, version)
        pipe.execute()

    def add_new(self, game_ids: list[str], due: float) -> None:
        """Put games on the agenda that are not on it yet (their ``seen`` stays unset)."""
        if not game_ids:
            return
        pipe = self.client.pipeline(transaction=False)
        for g in game_ids:
            pipe.zadd(self._keys_of(g)[0], {g: due}, nx=True)
        pipe.execute()

    def done_key(self, shard: int) -> str:
        """Finished games waiting to be compacted (zset: game id -> when seen finished)."""
        return f"{self.prefix}:w:done:{{w{shard}}}"

    def finish(self, game_id: str) -> None:
        key, seen = self._keys_of(game_id)
        pipe = self.client.pipeline(transaction=False)
        pipe.zrem(key, game_id)
        pipe.hdel(seen, game_id)
        pipe.zadd(self.done_key(shard_of(game_id)), {game_id: time.time()}, nx=True)
        pipe.execute()

    def finished_before(self, when: float, limit: int) -> list[str]:
        """Up to ``limit`` games seen finished before ``when`` (epoch seconds), oldest first."""
        pipe = self.client.pipeline(transaction=False)
        for shard in range(SHARDS):
            pipe.zrangebyscore(self.done_key(shard), "-inf", when, start=0, num=limit)
        out = [text(g) for rows in pipe.execute() for g in rows]
        return out[:limit]

    def compacted(self, game_id: str) -> None:
        self.client.zrem(self.done_key(shard_of(game_id)), game_id)

    def entries(self) -> list[tuple[str, float, int | None]]:
        """Every game on the agenda: (game id, due, version last dispatched or None)."""
        pipe = self.client.pipeline(transaction=False)
        for shard in range(SHARDS):
            key, seen = self.keys(shard)
            pipe.zrange(key, 0, -1, withscores=True)
            pipe.hgetall(seen)
        replies = pipe.execute()
        out: list[tuple[str, float, int | None]] = []
        for rows, seen_map in zip(replies[::2], replies[1::2], strict=True):
            versions = {text(k): int(v) for k, v in seen_map.items()}
            out += [(text(g), float(s), versions.get(text(g))) for g, s in rows]
        return out

    def contains(self, game_ids: list[str]) -> list[bool]:
        pipe = self.client.pipeline(transaction=False)
        for g in game_ids:
            pipe.zscore(self._keys_of(g)[0], g)
        return [score is not None for score in pipe.execute()]

    def due(self, game_id: str) -> float | None:
        score = self.client.zscore(self._keys_of(game_id)[0], game_id)
        return None if score is None else float(score)


#: extend a lease's expiry only if the caller still holds it (one key, one slot)
_RENEW_LUA = """
if redis.call('GET', KEYS[1]) == ARGV[1] then return redis.call('PEXPIRE', KEYS[1], ARGV[2]) end
return 0
"""
#: delete a lease only if the caller still holds it
_RELEASE_LUA = """
if redis.call('GET', KEYS[1]) == ARGV[1] then return redis.call('DEL', KEYS[1]) end
return 0
"""


class Lease:
    """One holder at a time on one key for ``ms`` milliseconds: ``take`` (SET NX PX with this
    lease's random token), ``renew`` and ``release`` (only while the token is still the key's)."""

    def __init__(self, leases: Leases, key: str, ms: int) -> None:
        self._leases = leases
        self.key = key
        self.ms = ms
        self.token = secrets.token_hex(8).encode()

    def take(self) -> bool:
        return bool(self._leases.client.set(self.key, self.token, nx=True, px=self.ms))

    def renew(self) -> bool:
        """Extend the lease by ``ms``; False when it is no longer ours (it expired)."""
        return bool(self._leases.renew(keys=[self.key], args=[self.token, self.ms]))

    def release(self) -> None:
        self._leases.release(keys=[self.key], args=[self.token])


class Leases:
    """The workers' locks and leases on the store (see the module doc)."""

    def __init__(self, client: Any, prefix: str) -> None:
        self.client = client
        self.prefix = prefix
        self.renew = client.register_script(_RENEW_LUA)
        self.release = client.register_script(_RELEASE_LUA)

    def _keeper_key(self, game_id: str) -> str:
        return f"{self.prefix}:{{g:{game_id}}}:keeper"

    def keeper(self, game_id: str, ms: int) -> Lease:
        """The lease of the job playing ``game_id`` on (``workers.turns``)."""
        return Lease(self, self._keeper_key(game_id), ms)

    def kept(self, game_id: str) -> bool:
        """Whether a live job keeps ``game_id`` (its keeper lease is held)."""
        return bool(self.client.exists(self._keeper_key(game_id)))

    def ladder(self, ms: int) -> Lease:
        """The ladder scheduling mutex (``workers.ladders``)."""
        return Lease(self, f"{self.prefix}:w:ladder-lock", ms)

    def sweep_turn(self, ms: int) -> bool:
        """Whether this process sweeps this interval: the first to ask in ``ms`` milliseconds
        (the lock is left to expire, never released)."""
        return bool(self.client.set(f"{self.prefix}:w:sweep-lock", b"1", nx=True, px=ms))


class QueueEpoch:
    """Whether the queue's Redis lost its data: a random epoch kept on the store and, as a
    marker, on the queue's Redis (see the module doc)."""

    def __init__(self, client: Any, queue_client: Any, prefix: str) -> None:
        self.client = client
        self.queue_client = queue_client
        self.epoch_key = f"{prefix}:w:queue-epoch"  # on the store
        self.marker_key = f"{prefix}:w:queue-marker"  # on the queue's Redis

    def wiped(self) -> bool:
        """Whether the queue's marker is missing or differs from the store's epoch since the last
        call (it is put back then); False the first time ever, which records both."""
        epoch = self.client.get(self.epoch_key)
        if epoch is None:  # the first sweep ever: nothing to compare with
            token = uuid.uuid4().hex.encode()
            if not self.client.set(self.epoch_key, token, nx=True):
                epoch = self.client.get(self.epoch_key)  # another sweep was first
            else:
                self.queue_client.set(self.marker_key, token)
                return False
        marker = self.queue_client.get(self.marker_key)
        if marker is not None and text(marker) == text(epoch):
            return False
        self.queue_client.set(self.marker_key, epoch)
        return True
