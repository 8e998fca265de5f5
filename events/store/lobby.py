"""The lobby: the game store's index of games by creation time, and what is read beside it.

``<prefix>:lobby`` is a sorted set, game id -> creation time (epoch seconds). The game store
writes it (``RedisStore.create_game``: in the creation script on a single Redis, right after it
on a cluster) and so owns it; this module names the key, and ``Lobby`` is how everything else
reads it: the game list (``service.lobby``: pages newest first, filtered on each game's
``summary`` view) and the workers' sweep (games created lately that are active but not on the
agenda, and each agenda game's stream version). Entries whose game expired, or that an
interrupted creation left without events, are dropped by the reader that meets them (``drop``).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

from events.store.text import text

if TYPE_CHECKING:
    from events.store.redis_adapter import RedisStore


def lobby_key(prefix: str) -> str:
    return f"{prefix}:lobby"


class Lobby:
    """The lobby of one game store (its client, prefix and game keys)."""

    def __init__(self, store: RedisStore) -> None:
        self.store = store
        self.client = store.client
        self.key = lobby_key(store.prefix)

    # --- the index ---------------------------------------------------------------------------
    def page(
        self, high: float | str, low: float | str, offset: int, count: int
    ) -> list[tuple[str, float]]:
        """Up to ``count`` (game id, creation time) from ``high`` down to ``low`` (``"+inf"`` /
        ``"-inf"`` for no bound), newest first, skipping the first ``offset``."""
        rows = self.client.zrevrangebyscore(
            self.key, high, low, start=offset, num=count, withscores=True
        )
        return [(text(m), float(sc)) for m, sc in rows]

    def exists_after(self, low: float | str, last: tuple[float, str]) -> bool:
        """Whether the index holds an entry after ``last`` (creation time, game id) in page
        order (newest first, then game id descending), down to ``low``."""
        score, gid = last
        if self.client.zcount(self.key, low, f"({score!r}") > 0:
            return True
        return any(text(m) < gid for m in self.client.zrangebyscore(self.key, score, score))

    def newest(self, count: int) -> list[str]:
        """The ``count`` games created last, newest first."""
        return [text(g) for g in self.client.zrevrange(self.key, 0, count - 1)]

    def created_since(self, low: float | None) -> list[str]:
        """The games created at ``low`` (epoch seconds) or later; every game for None."""
        return [text(g) for g in self.client.zrangebyscore(self.key, low or "-inf", "+inf")]

    def drop(self, gone: Sequence[str], orphans: Sequence[str]) -> None:
        """Take games off the index: ``gone`` (expired: nothing left of them) and ``orphans``
        (a meta hash without events; it is deleted too)."""
        if not gone and not orphans:
            return
        pipe = self.client.pipeline(transaction=False)
        pipe.zrem(self.key, *gone, *orphans)
        for gid in orphans:
            pipe.delete(self.store.keys(gid)[1])
        pipe.execute()

    # --- what is read of each listed game ------------------------------------------------------
    def _meta(self, game_ids: Sequence[str], fields: list[str]) -> list[list[Any]]:
        pipe = self.client.pipeline(transaction=False)
        for gid in game_ids:
            pipe.hmget(self.store.keys(gid)[1], fields)
        return list(pipe.execute())

    def states(self, game_ids: Sequence[str]) -> list[tuple[int | None, bool, str | None]]:
        """Per game: (stream version or None without events, whether compacted, creation time
        or None) in one pipelined round trip."""
        return [
            (
                None if version is None else int(version),
                compacted is not None,
                None if created is None else text(created),
            )
            for version, compacted, created in self._meta(
                game_ids, ["version", "compacted", "created"]
            )
        ]

    def summaries(self, game_ids: Sequence[str]) -> list[str | None]:
        """Each game's stored ``summary`` view (its JSON), None where it has none, in one
        pipelined round trip."""
        pipe = self.client.pipeline(transaction=False)
        for gid in game_ids:
            pipe.hget(self.store.keys(gid)[3], "summary")
        return [None if raw is None else text(raw).partition(":")[2] for raw in pipe.execute()]

    def statuses(self, game_ids: Sequence[str]) -> list[str | None]:
        """Each game's status, None for a game that is gone (expired, never created)."""
        return [None if st is None else text(st) for (st,) in self._meta(game_ids, ["status"])]

    def active(self, game_ids: Sequence[str]) -> list[str]:
        """Those of ``game_ids`` that have events and are active."""
        return [
            gid
            for gid, (version, status) in zip(
                game_ids, self._meta(game_ids, ["version", "status"]), strict=True
            )
            if version is not None and int(version) > 0 and text(status or b"") == "active"
        ]

    def versions(self, game_ids: Sequence[str]) -> tuple[list[int | None], list[int | None]]:
        """Each game's stream version and the last version stored unattended (None: none)."""
        rows = self._meta(game_ids, ["version", "unattended"])
        versions = [int(v) if v is not None else None for v, _ in rows]
        return versions, [int(u) if u is not None else None for _, u in rows]
