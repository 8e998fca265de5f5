"""Seat tokens: claiming a human seat and checking a bearer token against it.

A claim creates ``secrets.token_urlsafe(32)`` and stores only its sha256 (hex) in the game's hash
``<prefix>:{g:<id>}:tokens`` (field ``seat:<n>``), written with HSETNX so a seat is claimed once,
even by racing requests. The key shares the game's hash tag, so it lives in the game's cluster
slot next to its stream. A token is never stored or logged in clear; comparing digests is done in
constant time.

A seat's token can be rotated (``rotate``): the new digest replaces the old one in the same hash,
so the old token stops working at once in every process (no process caches a token: each
seat-scoped request checks the digest, in one pipelined round trip with the game's existence; a
command's is checked by its append script, ``service.auth.seat_guard``).
A claim also ends the game's idle expiry (``RedisStore.keep``): a claimed game is not abandoned.
"""

from __future__ import annotations

import hashlib
import hmac
import secrets
from dataclasses import dataclass
from typing import Literal

from events import RedisStore
from events.text import text


def digest(token: str) -> str:
    return hashlib.sha256(token.encode("utf-8")).hexdigest()


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


ROTATE_LUA = """
-- KEYS: tokens, meta   ARGV: field, new digest, old digest ('' for any: the admin)
if redis.call('EXISTS', KEYS[2]) == 0 then return 'nogame' end
local cur = redis.call('HGET', KEYS[1], ARGV[1])
if not cur then return 'unclaimed' end
if ARGV[3] ~= '' and cur ~= ARGV[3] then return 'stale' end
redis.call('HSET', KEYS[1], ARGV[1], ARGV[2])
return 'ok'
"""

Rotation = Literal["ok", "nogame", "unclaimed", "stale"]


class SeatTokens:
    """Token records of every game, on the event store's Redis client."""

    def __init__(self, store: RedisStore) -> None:
        self.store = store
        self.client = store.client
        self._rotate = self.client.register_script(ROTATE_LUA)

    def key(self, game_id: str) -> str:
        return self.store.game_keys(game_id)[4]

    def claims(self, game_id: str) -> SeatClaims:
        """One round trip: the token digests and the game's existence (its meta hash)."""
        pipe = self.client.pipeline(transaction=False)
        pipe.hgetall(self.key(game_id))
        pipe.exists(self.store.keys(game_id)[1])
        raw, exists = pipe.execute()
        digests = {int(text(k).split(":", 1)[1]): text(v) for k, v in raw.items()}
        return SeatClaims(bool(exists), digests)

    def claimed_seats(self, game_ids: list[str]) -> list[set[int]]:
        """The claimed seat numbers of several games (one pipelined round trip)."""
        pipe = self.client.pipeline(transaction=False)
        for gid in game_ids:
            pipe.hkeys(self.key(gid))
        return [{int(text(k).split(":", 1)[1]) for k in keys} for keys in pipe.execute()]

    def claim(self, game_id: str, seat: int) -> str | None:
        """A new token for the seat, or None if the seat was claimed before."""
        token = secrets.token_urlsafe(32)
        if self.client.hsetnx(self.key(game_id), f"seat:{seat}", digest(token)):
            self.store.keep(game_id)
            return token
        return None

    def rotate(self, game_id: str, seat: int, old: str | None) -> tuple[Rotation, str | None]:
        """A new token for a claimed seat; the old one stops working at once. ``old`` is the
        holder's token (the rotation fails with "stale" if another rotation came first), None
        for the admin. Returns (outcome, new token or None)."""
        token = secrets.token_urlsafe(32)
        out = text(
            self._rotate(
                keys=[self.key(game_id), self.store.keys(game_id)[1]],
                args=[f"seat:{seat}", digest(token), digest(old) if old else ""],
            )
        )
        if out != "ok":
            return out, None  # type: ignore[return-value]
        return "ok", token
