"""Ladders on the store: configuration, entrants, scheduled games, results and ratings.

Keys (prefix ``rfg``): ``rfg:ladders`` (set of names); per ladder ``rfg:ladder:{l:<name>}:cfg``
(JSON), ``:entrants`` (hash id -> JSON), ``:games`` (hash game id -> JSON: seats, seed, status),
``:results`` (list of result JSON in finishing order), ``:recorded`` (set of game ids with a
result), ``:ratings`` (JSON of the live table with the number of results it reflects).

The keys of one ladder share the hash tag ``{l:<name>}``: one Redis Cluster slot, so recording a
result (WATCH + MULTI over ``:recorded``, ``:results``, ``:ratings``, ``:games``) is one
transaction there too. ``rfg:ladders`` is a single key written by its own commands. What the
values mean is ``ladder.service``'s: this module stores and reads them as JSON text.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import redis

from events.store.text import text

PARTS = ("cfg", "entrants", "games", "results", "recorded", "ratings")


class LadderStore:
    """The ladders under one key prefix."""

    def __init__(self, client: Any, prefix: str = "rfg") -> None:
        self.client = client
        self.prefix = prefix
        self._names = f"{prefix}:ladders"

    def _k(self, name: str, part: str) -> str:
        return f"{self.prefix}:ladder:{{l:{name}}}:{part}"

    # --- configuration -------------------------------------------------------------------
    def create(self, name: str, config: str) -> bool:
        """Store a new ladder's configuration; False when the ladder exists already."""
        if not self.client.set(self._k(name, "cfg"), config, nx=True):
            return False
        self.client.sadd(self._names, name)
        return True

    def config(self, name: str) -> str | None:
        raw = self.client.get(self._k(name, "cfg"))
        return None if raw is None else text(raw)

    def change_config(self, name: str, change: Callable[[str | None], str]) -> None:
        """Replace the configuration with ``change(current)``, atomically (retried while another
        writer changed it meanwhile); whatever ``change`` raises leaves it as it was."""
        key = self._k(name, "cfg")
        with self.client.pipeline(transaction=True) as pipe:
            while True:
                try:
                    pipe.watch(key)
                    raw = pipe.get(key)
                    new = change(None if raw is None else text(raw))
                    pipe.multi()
                    pipe.set(key, new)
                    pipe.execute()
                    return
                except redis.WatchError:
                    continue

    def names(self) -> list[str]:
        return sorted(text(n) for n in self.client.smembers(self._names))

    def delete(self, name: str) -> None:
        """Every key of the ladder (one slot: one command), and its name."""
        self.client.delete(*(self._k(name, part) for part in PARTS))
        self.client.srem(self._names, name)

    # --- entrants and games --------------------------------------------------------------
    def add_entrant(self, name: str, entrant: str, spec: str) -> bool:
        """False when ``entrant`` is an entrant already."""
        return bool(self.client.hsetnx(self._k(name, "entrants"), entrant, spec))

    def set_entrant(self, name: str, entrant: str, spec: str) -> None:
        """Replace an entrant's spec (joining again, leaving)."""
        self.client.hset(self._k(name, "entrants"), entrant, spec)

    def entrants(self, name: str) -> dict[str, str]:
        return {text(k): text(v) for k, v in self.client.hgetall(self._k(name, "entrants")).items()}

    def games(self, name: str) -> dict[str, str]:
        return {text(k): text(v) for k, v in self.client.hgetall(self._k(name, "games")).items()}

    def set_game(self, name: str, game_id: str, info: str) -> None:
        self.client.hset(self._k(name, "games"), game_id, info)

    # --- results and ratings -------------------------------------------------------------
    def result_count(self, name: str) -> int:
        return int(self.client.llen(self._k(name, "results")))

    def results(self, name: str, start: int = 0, end: int = -1) -> list[str]:
        """Results ``start`` to ``end`` (inclusive; negative: from the end) in finishing order."""
        return [text(r) for r in self.client.lrange(self._k(name, "results"), start, end)]

    def ratings(self, name: str) -> str | None:
        raw = self.client.get(self._k(name, "ratings"))
        return None if raw is None else text(raw)

    def record(
        self, name: str, game_id: str, fold: Callable[[str | None], tuple[str, str, str]]
    ) -> bool:
        """Record ``game_id``'s result once: ``fold(current ratings)`` gives (the result, the new
        ratings, the game's info), stored atomically with the game marked recorded. False when
        it was recorded before."""
        ratings, recorded = self._k(name, "ratings"), self._k(name, "recorded")
        with self.client.pipeline(transaction=True) as pipe:
            while True:
                try:
                    pipe.watch(ratings, recorded)
                    if pipe.sismember(recorded, game_id):
                        pipe.unwatch()
                        return False
                    raw = pipe.get(ratings)
                    result, table, info = fold(None if raw is None else text(raw))
                    pipe.multi()
                    pipe.sadd(recorded, game_id)
                    pipe.rpush(self._k(name, "results"), result)
                    pipe.set(ratings, table)
                    pipe.hset(self._k(name, "games"), game_id, info)
                    pipe.execute()
                    return True
                except redis.WatchError:
                    continue
