"""The agenda: which active games the sweep must look at, and when.

Two keys under the store prefix (plain Redis, outside any game's hash tag):

* ``<prefix>:w:agenda`` sorted set: game id -> epoch seconds of its next due look (a pending bot
  decision's progress check, a deadline plus grace, or the periodic recheck);
* ``<prefix>:w:seen`` hash: game id -> the stream version the dispatcher last acted on.

The dispatcher writes both after each stored command; a sweep also looks at every game whose
stream version differs from ``seen`` (a command stored by a process that died before it could
dispatch, or by an API process without the dispatcher). A finished game leaves the agenda.
"""

from __future__ import annotations

from typing import Any


def _text(value: Any) -> str:
    return value.decode() if isinstance(value, bytes) else str(value)


class Agenda:
    def __init__(self, client: Any, prefix: str) -> None:
        self.client = client
        self.key = f"{prefix}:w:agenda"
        self.seen_key = f"{prefix}:w:seen"

    def set(self, game_id: str, version: int, due: float, *, postpone: bool = True) -> None:
        """Record the version dispatched and the next due look; with ``postpone=False`` an
        earlier due time is kept (so a steady stream of commands cannot push a look away)."""
        pipe = self.client.pipeline(transaction=False)
        pipe.zadd(self.key, {game_id: due}, lt=not postpone)
        pipe.hset(self.seen_key, game_id, version)
        pipe.execute()

    def add_new(self, game_ids: list[str], due: float) -> None:
        """Put games on the agenda that are not on it yet (their ``seen`` stays unset)."""
        if game_ids:
            self.client.zadd(self.key, {g: due for g in game_ids}, nx=True)

    def finish(self, game_id: str) -> None:
        pipe = self.client.pipeline(transaction=False)
        pipe.zrem(self.key, game_id)
        pipe.hdel(self.seen_key, game_id)
        pipe.execute()

    def entries(self) -> list[tuple[str, float, int | None]]:
        """Every game on the agenda: (game id, due, version last dispatched or None)."""
        pipe = self.client.pipeline(transaction=False)
        pipe.zrange(self.key, 0, -1, withscores=True)
        pipe.hgetall(self.seen_key)
        rows, seen = pipe.execute()
        versions = {_text(k): int(v) for k, v in seen.items()}
        return [(_text(g), float(s), versions.get(_text(g))) for g, s in rows]

    def contains(self, game_ids: list[str]) -> list[bool]:
        pipe = self.client.pipeline(transaction=False)
        for g in game_ids:
            pipe.zscore(self.key, g)
        return [score is not None for score in pipe.execute()]

    def due(self, game_id: str) -> float | None:
        score = self.client.zscore(self.key, game_id)
        return None if score is None else float(score)
