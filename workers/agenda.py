"""The agenda: which active games the sweep must look at, and when.

It lives on the store (so wiping the queue's Redis loses none of it) in ``SHARDS`` shards, each a
pair of keys sharing one hash tag (so one Redis Cluster slot; the shards spread over the masters):

* ``<prefix>:w:agenda:{w<k>}`` sorted set: game id -> epoch seconds of its next due look (a
  pending bot decision's progress check, a deadline plus grace, or the periodic recheck);
* ``<prefix>:w:seen:{w<k>}`` hash: game id -> the stream version the dispatcher last acted on.

A game's shard is ``crc32(game id) % SHARDS``. The dispatcher writes its shard's two keys after
each stored command (one pipelined round trip to one node), so the per-command writes are spread
over the cluster instead of all landing on the master of one key. A sweep reads every shard
(``SHARDS`` pipelined reads) and also looks at every game whose stream version differs from
``seen`` (a command stored by a process that died before it could dispatch, or by an API process
without the dispatcher). A finished game leaves the agenda
for ``<prefix>:w:done:{w<k>}`` (zset: game id -> when it was seen finished), where the sweep's
compaction (``workers.sweep``) finds it ``compact_after`` seconds later.

Changing ``SHARDS`` strands the entries of the shards no longer read; the sweep's lobby scan
(``workers.sweep``) puts every active game back, so nothing is lost but the keys (delete them).
"""

from __future__ import annotations

import time
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
