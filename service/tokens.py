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

The same hash holds what the table knows about its people (never a secret in clear):

* ``name:<n>``: the display name given when the seat was claimed (``service.fields.DisplayName``
  checked it);
* ``host``: the seat claimed first (the person who created the game and sat down; the web
  client claims seat 0 right after creating). The host (or the admin) may invite;
* ``invite:<n>``: sha256 of the seat's outstanding invite code (``invite``): a one-time claim
  code, ``secrets.token_urlsafe(32)``. While it is outstanding only that code claims the seat
  (the public lobby cannot take it); claiming with it deletes it and keeps its digest in
  ``used:<n>``, so a second use is told the link was used. Inviting again replaces the code.
  Codes are compared in constant time here, then the claim is written by a script that checks
  the stored digest has not changed meanwhile (two racing uses: one wins).
"""

from __future__ import annotations

import hashlib
import hmac
import secrets
from dataclasses import dataclass
from typing import Literal

from events.store import RedisStore
from events.store.text import text


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
Claim = Literal["ok", "nogame", "taken", "invited", "badcode", "used"]

CLAIM_LUA = """
-- KEYS: tokens, meta   ARGV: seat, token digest, the invite digest the caller checked ('' none),
-- display name ('' none)
if redis.call('EXISTS', KEYS[2]) == 0 then return 'nogame' end
local invite = redis.call('HGET', KEYS[1], 'invite:' .. ARGV[1]) or ''
if invite ~= ARGV[3] then return ARGV[3] == '' and 'invited' or 'used' end
if redis.call('HSETNX', KEYS[1], 'seat:' .. ARGV[1], ARGV[2]) == 0 then return 'taken' end
redis.call('HSETNX', KEYS[1], 'host', ARGV[1])
if ARGV[4] ~= '' then redis.call('HSET', KEYS[1], 'name:' .. ARGV[1], ARGV[4]) end
if ARGV[3] ~= '' then
  redis.call('HDEL', KEYS[1], 'invite:' .. ARGV[1])
  redis.call('HSET', KEYS[1], 'used:' .. ARGV[1], ARGV[3])
end
return 'ok'
"""

INVITE_LUA = """
-- KEYS: tokens   ARGV: seat, code digest
if redis.call('HEXISTS', KEYS[1], 'seat:' .. ARGV[1]) == 1 then return 'taken' end
redis.call('HSET', KEYS[1], 'invite:' .. ARGV[1], ARGV[2])
return 'ok'
"""


@dataclass(frozen=True)
class Table:
    """Who sits at one game's table, as anyone may read it (no digests)."""

    claimed: set[int]
    names: dict[int, str]
    invited: set[int]
    host: int | None


def _seats_of(keys: list[bytes | str], prefix: str) -> set[int]:
    return {int(k[len(prefix) :]) for k in map(text, keys) if k.startswith(prefix)}


def _table(raw: dict[bytes | str, bytes | str]) -> Table:
    fields = {text(k): text(v) for k, v in raw.items()}
    names = {int(k[5:]): v for k, v in fields.items() if k.startswith("name:")}
    host = fields.get("host")
    return Table(
        claimed=_seats_of(list(fields), "seat:"),
        names=names,
        invited=_seats_of(list(fields), "invite:"),
        host=int(host) if host is not None else None,
    )


class SeatTokens:
    """Token records of every game, on the event store's Redis client."""

    def __init__(self, store: RedisStore) -> None:
        self.store = store
        self.client = store.client
        self._rotate = self.client.register_script(ROTATE_LUA)
        self._claim = self.client.register_script(CLAIM_LUA)
        self._invite = self.client.register_script(INVITE_LUA)

    def key(self, game_id: str) -> str:
        return self.store.game_keys(game_id)[4]

    def claims(self, game_id: str) -> SeatClaims:
        """One round trip: the token digests and the game's existence (its meta hash)."""
        pipe = self.client.pipeline(transaction=False)
        pipe.hgetall(self.key(game_id))
        pipe.exists(self.store.keys(game_id)[1])
        raw, exists = pipe.execute()
        digests = {
            int(k.split(":", 1)[1]): text(v)
            for k, v in ((text(k), v) for k, v in raw.items())
            if k.startswith("seat:")
        }
        return SeatClaims(bool(exists), digests)

    def claimed_seats(self, game_ids: list[str]) -> list[set[int]]:
        """The claimed seat numbers of several games (one pipelined round trip)."""
        pipe = self.client.pipeline(transaction=False)
        for gid in game_ids:
            pipe.hkeys(self.key(gid))
        return [_seats_of(keys, "seat:") for keys in pipe.execute()]

    def tables(self, game_ids: list[str]) -> list[Table]:
        """Who sits at several games' tables: claimed seats, names, invited seats, the host
        (one pipelined round trip; no digest leaves this module)."""
        pipe = self.client.pipeline(transaction=False)
        for gid in game_ids:
            pipe.hgetall(self.key(gid))
        return [_table(raw) for raw in pipe.execute()]

    def claim(
        self, game_id: str, seat: int, name: str | None = None, code: str | None = None
    ) -> tuple[Claim, str | None]:
        """A new token for the seat: (outcome, token or None). ``code`` is the seat's invite
        code: required while an invite is outstanding ("invited" without it, "badcode" with
        another, "used" with one already used); "taken" when the seat was claimed before."""
        key = self.key(game_id)
        raw = {text(k): text(v) for k, v in self.client.hgetall(key).items()}
        outstanding = raw.get(f"invite:{seat}", "")
        if code is not None:
            given = digest(code)
            if not outstanding or not hmac.compare_digest(outstanding, given):
                used = raw.get(f"used:{seat}", "")
                return ("used" if used and hmac.compare_digest(used, given) else "badcode"), None
        elif outstanding:
            return "invited", None
        token = secrets.token_urlsafe(32)
        out = text(
            self._claim(
                keys=[key, self.store.keys(game_id)[1]],
                args=[str(seat), digest(token), outstanding, name or ""],
            )
        )
        if out != "ok":
            return out, None  # type: ignore[return-value]
        self.store.keep(game_id)
        return "ok", token

    def seat_digest(
        self, game_id: str, seat: int, token_digest: str, name: str | None = None
    ) -> bool:
        """Claim the seat, under the display name ``name`` if any, for a token the server
        already holds only the sha256 of (a player's challenge secret, ``service.challenges``):
        the game's creator seats them as it creates it. False when the seat was claimed
        before."""
        key = self.key(game_id)
        out = text(
            self._claim(
                keys=[key, self.store.keys(game_id)[1]],
                args=[str(seat), token_digest, "", name or ""],
            )
        )
        if out != "ok":
            return False
        self.store.keep(game_id)
        return True

    def invite(self, game_id: str, seat: int) -> str | None:
        """A new one-time invite code for an unclaimed seat (replacing any earlier one), or
        None when the seat is claimed already. An invited game is wanted: it no longer expires
        while unfinished (``RedisStore.keep``)."""
        code = secrets.token_urlsafe(32)
        out = text(self._invite(keys=[self.key(game_id)], args=[str(seat), digest(code)]))
        if out != "ok":
            return None
        self.store.keep(game_id)
        return code

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
