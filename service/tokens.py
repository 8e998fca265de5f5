"""Seat tokens: claiming a human seat and checking a bearer token against it.

A claim creates ``secrets.token_urlsafe(32)`` and stores only its sha256 (hex) in the game's hash
``<prefix>:{g:<id>}:tokens`` (field ``seat:<n>``), written with HSETNX so a seat is claimed once,
even by racing requests. The key shares the game's hash tag, so it lives in the game's cluster
slot next to its stream. A token is never stored or logged in clear; comparing digests is done in
constant time.

A claim is permanent (there is no revocation), so each process remembers the digests it has
confirmed (``confirmed``/``remember``, a bounded LRU): a seat-scoped request whose token matches a
remembered digest needs no Redis round trip.
"""

from __future__ import annotations

import hashlib
import hmac
import secrets
import threading
from collections import OrderedDict
from dataclasses import dataclass
from typing import Any

from events import RedisStore


def digest(token: str) -> str:
    return hashlib.sha256(token.encode("utf-8")).hexdigest()


def _s(value: Any) -> str:
    return value.decode("utf-8") if isinstance(value, bytes) else str(value)


@dataclass(frozen=True)
class SeatClaims:
    """The claimed seats of one game (seat -> token digest) and whether the game exists."""

    exists: bool
    digests: dict[int, str]

    def seat_of(self, token: str) -> int | None:
        """The seat this token was issued for, or None."""
        d = digest(token)
        found = None
        for seat, stored in self.digests.items():
            if hmac.compare_digest(stored, d):
                found = seat
        return found


class SeatTokens:
    """Token records of every game, on the event store's Redis client."""

    def __init__(self, store: RedisStore, cache_size: int = 20000) -> None:
        self.store = store
        self.client = store.client
        self._known: OrderedDict[tuple[str, int], str] = OrderedDict()
        self._lock = threading.Lock()
        self._cache_size = cache_size

    def confirmed(self, game_id: str, seat: int, token: str) -> bool:
        """Whether this process has already seen this token accepted for this seat."""
        with self._lock:
            known = self._known.get((game_id, seat))
        return known is not None and hmac.compare_digest(known, digest(token))

    def remember(self, game_id: str, seat: int, token: str) -> None:
        with self._lock:
            self._known[(game_id, seat)] = digest(token)
            self._known.move_to_end((game_id, seat))
            while len(self._known) > self._cache_size:
                self._known.popitem(last=False)

    def key(self, game_id: str) -> str:
        return f"{self.store.prefix}:{{g:{game_id}}}:tokens"

    def claims(self, game_id: str) -> SeatClaims:
        """One round trip: the token digests and the game's existence (its meta hash)."""
        pipe = self.client.pipeline(transaction=False)
        pipe.hgetall(self.key(game_id))
        pipe.exists(self.store.keys(game_id)[1])
        raw, exists = pipe.execute()
        digests = {int(_s(k).split(":", 1)[1]): _s(v) for k, v in raw.items()}
        return SeatClaims(bool(exists), digests)

    def claimed_seats(self, game_ids: list[str]) -> list[set[int]]:
        """The claimed seat numbers of several games (one pipelined round trip)."""
        pipe = self.client.pipeline(transaction=False)
        for gid in game_ids:
            pipe.hkeys(self.key(gid))
        return [{int(_s(k).split(":", 1)[1]) for k in keys} for keys in pipe.execute()]

    def claim(self, game_id: str, seat: int) -> str | None:
        """A new token for the seat, or None if the seat was claimed before."""
        token = secrets.token_urlsafe(32)
        if self.client.hsetnx(self.key(game_id), f"seat:{seat}", digest(token)):
            return token
        return None
