"""Seed holds on the store: which games share a held-back seed (``events.games.seeds`` says why).

Per game one key, ``<prefix>:seedhold:<game id>``, whose value lists (JSON) the ids of every game
of its duplicate set; one key per game, so each lives in its own slot on a Redis Cluster and no
operation needs two slots.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from typing import Any


class SeedHoldStore:
    """The seed holds under one key prefix."""

    def __init__(self, client: Any, prefix: str = "rfg") -> None:
        self.client = client
        self.prefix = prefix

    def _key(self, game_id: str) -> str:
        return f"{self.prefix}:seedhold:{game_id}"

    def hold(self, game_ids: Sequence[str]) -> None:
        """Hold each of ``game_ids`` as one set."""
        members = json.dumps(sorted(game_ids))
        for gid in game_ids:
            self.client.set(self._key(gid), members)

    def members(self, game_id: str) -> list[str] | None:
        """The games of ``game_id``'s set (itself included); None when it is not held."""
        raw = self.client.get(self._key(game_id))
        return None if raw is None else list(json.loads(raw))

    def release(self, game_ids: Sequence[str]) -> None:
        """Hold these games no more."""
        for gid in game_ids:
            self.client.delete(self._key(gid))
