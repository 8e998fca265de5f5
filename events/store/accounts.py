"""Seat tokens and bot accounts on the store's Redis: their keys and scripts.

Only digests of secrets are stored (sha256 hex; ``service.tokens`` and ``service.accounts`` make
the tokens and decide who may do what, through ``SeatTokenStore`` and ``BotAccountStore``).

Seat tokens live in one hash per game, ``<prefix>:{g:<id>}:tokens`` (the game store names it among
the game's keys, ``RedisStore.game_keys``: it shares the game's hash tag, slot and retention):

* ``seat:<n>``: the digest of the seat's token, written once by a claim (HSETNX: racing claims,
  one wins) and replaced by a rotation;
* ``name:<n>``: the display name the seat was claimed under;
* ``host``: the seat claimed first;
* ``invite:<n>`` / ``used:<n>``: the digest of the seat's outstanding invite code, and of the
  one that claimed it. A re-invite of a claimed seat (``REINVITE_LUA``) deletes ``seat:<n>`` (the
  old token stops working at once) and writes ``invite:<n>``; the name stays;
* ``move:<n>`` / ``moved:<n>``: the seat holder's outstanding move code, ``<digest> <expires>``
  (epoch seconds), and the digest of the one that moved the seat (``MOVE_LUA``, ``REDEEM_LUA``:
  redeeming writes the new token digest to ``seat:<n>``, signing the old device out).

Bot accounts (store prefix ``rfg``), each key in a slot of its own on a Redis Cluster (no hash tag):
every operation touches one key per command, in an order that is safe without a transaction:

* ``rfg:botacct:<id>``: hash of name, description, contact, created_at, token (its digest, empty
  once revoked), revoked_at;
* ``rfg:botacct-token:<digest>``: the account id of a live token (only this key makes a token
  work: ``account_of`` reads nothing else);
* ``rfg:botacct:<id>:games`` / ``:active``: the games the account is seated in / those not known
  to be over (the ladder and the challenges add to them, the decisions stream trims ``:active``);
* ``rfg:botacct:<id>:started``: sorted set of the games the account is seated in, scored by when
  each was seated (epoch seconds): the order ``GET /bots/me/games`` pages in. Written with
  ``:games``; a game of ``:games`` missing here (seated before the index existed) is added by
  ``index`` with its creation time when a listing finds it (``unindexed``).
"""

from __future__ import annotations

import hmac
import time
from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

from events.store.text import text

if TYPE_CHECKING:
    from events.store.redis_adapter import RedisStore

ROTATE_LUA = """
-- KEYS: tokens, meta   ARGV: field, new digest, old digest ('' for any: the admin)
if redis.call('EXISTS', KEYS[2]) == 0 then return 'nogame' end
local cur = redis.call('HGET', KEYS[1], ARGV[1])
if not cur then return 'unclaimed' end
if ARGV[3] ~= '' and cur ~= ARGV[3] then return 'stale' end
redis.call('HSET', KEYS[1], ARGV[1], ARGV[2])
return 'ok'
"""

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

REINVITE_LUA = """
-- KEYS: tokens, meta   ARGV: seat, code digest
-- A new invite for a seat, claimed or not: a claimed seat's token is revoked (its digest
-- deleted) and its outstanding move code with it; its display name stays.
if redis.call('EXISTS', KEYS[2]) == 0 then return 'nogame' end
redis.call('HDEL', KEYS[1], 'seat:' .. ARGV[1], 'move:' .. ARGV[1])
redis.call('HSET', KEYS[1], 'invite:' .. ARGV[1], ARGV[2])
return 'ok'
"""

MOVE_LUA = """
-- KEYS: tokens, meta   ARGV: seat, the holder's token digest, code digest, expires (epoch s)
-- Record the seat's move code (replacing any earlier one) if the holder's token is the seat's.
if redis.call('EXISTS', KEYS[2]) == 0 then return 'nogame' end
if redis.call('HGET', KEYS[1], 'seat:' .. ARGV[1]) ~= ARGV[2] then return 'stale' end
redis.call('HSET', KEYS[1], 'move:' .. ARGV[1], ARGV[3] .. ' ' .. ARGV[4])
return 'ok'
"""

REDEEM_LUA = """
-- KEYS: tokens, meta   ARGV: seat, code digest, new token digest, now (epoch s)
-- Move the seat to the bearer of its move code: the new token digest replaces the old one.
if redis.call('EXISTS', KEYS[2]) == 0 then return 'nogame' end
local f = 'move:' .. ARGV[1]
local m = redis.call('HGET', KEYS[1], f)
if not m or string.sub(m, 1, 64) ~= ARGV[2] then
  if redis.call('HGET', KEYS[1], 'moved:' .. ARGV[1]) == ARGV[2] then return 'used' end
  return 'badcode'
end
if tonumber(string.sub(m, 66)) <= tonumber(ARGV[4]) then
  redis.call('HDEL', KEYS[1], f)
  return 'expired'
end
if redis.call('HEXISTS', KEYS[1], 'seat:' .. ARGV[1]) == 0 then return 'badcode' end
redis.call('HSET', KEYS[1], 'seat:' .. ARGV[1], ARGV[3], 'moved:' .. ARGV[1], ARGV[2])
redis.call('HDEL', KEYS[1], f)
return 'ok'
"""


class SeatHolds:
    """Whether a seat's stored token digest is a given one: a read that rides in another
    owner's round trip (``events.store.limits.Read``) or runs alone (``SeatTokenStore.holds``)."""

    def __init__(self, key: str, seat: int, token_digest: str) -> None:
        self.key, self.field, self.digest = key, f"seat:{seat}", token_digest

    def queue(self, pipe: Any) -> int:
        pipe.hget(self.key, self.field)
        return 1

    def answer(self, replies: Sequence[Any]) -> bool:
        stored = replies[0]
        return stored is not None and hmac.compare_digest(text(stored), self.digest)


class SeatTokenStore:
    """The seat tokens hash of every game of one game store."""

    def __init__(self, store: RedisStore) -> None:
        self.store = store
        self.client = store.client
        self._rotate = self.client.register_script(ROTATE_LUA)
        self._claim = self.client.register_script(CLAIM_LUA)
        self._invite = self.client.register_script(INVITE_LUA)
        self._reinvite = self.client.register_script(REINVITE_LUA)
        self._move = self.client.register_script(MOVE_LUA)
        self._redeem = self.client.register_script(REDEEM_LUA)

    def key(self, game_id: str) -> str:
        return self.store.game_keys(game_id)[4]

    def _meta(self, game_id: str) -> str:
        return self.store.keys(game_id)[1]

    def seat_holds(self, game_id: str, seat: int, token_digest: str) -> SeatHolds:
        """The read of whether ``seat``'s token digest is ``token_digest`` (not sent yet)."""
        return SeatHolds(self.key(game_id), seat, token_digest)

    def holds(self, read: SeatHolds) -> bool:
        """A ``seat_holds`` read on its own (one round trip)."""
        return read.answer([self.client.hget(read.key, read.field)])

    def digests(self, game_id: str) -> tuple[bool, dict[int, str]]:
        """(whether the game exists, seat -> token digest) in one round trip."""
        pipe = self.client.pipeline(transaction=False)
        pipe.hgetall(self.key(game_id))
        pipe.exists(self._meta(game_id))
        raw, exists = pipe.execute()
        digests = {
            int(k.split(":", 1)[1]): text(v)
            for k, v in ((text(k), v) for k, v in raw.items())
            if k.startswith("seat:")
        }
        return bool(exists), digests

    def fields(self, game_ids: Sequence[str]) -> list[dict[str, str]]:
        """Every field of several games' hashes (one pipelined round trip)."""
        pipe = self.client.pipeline(transaction=False)
        for gid in game_ids:
            pipe.hgetall(self.key(gid))
        return [{text(k): text(v) for k, v in raw.items()} for raw in pipe.execute()]

    def names(self, game_id: str) -> dict[int, str]:
        """The seats' display names of a game (its ``name:<n>`` fields; one round trip)."""
        fields = self.fields([game_id])[0]
        return {int(k[5:]): v for k, v in fields.items() if k.startswith("name:")}

    def field_names(self, game_ids: Sequence[str]) -> list[list[str]]:
        """The field names of several games' hashes (one pipelined round trip)."""
        pipe = self.client.pipeline(transaction=False)
        for gid in game_ids:
            pipe.hkeys(self.key(gid))
        return [[text(k) for k in keys] for keys in pipe.execute()]

    def claim(
        self, game_id: str, seat: int, token_digest: str, invite_digest: str, name: str
    ) -> str:
        """Claim ``seat`` for a token digest, the invite it was checked against ('' none) still
        outstanding: "ok", "nogame", "taken", "invited" (an invite is outstanding and none was
        given) or "used" (the invite changed meanwhile)."""
        return text(
            self._claim(
                keys=[self.key(game_id), self._meta(game_id)],
                args=[str(seat), token_digest, invite_digest, name],
            )
        )

    def invite(self, game_id: str, seat: int, code_digest: str) -> str:
        """Record an unclaimed seat's invite code, replacing any earlier one: "ok" or "taken"."""
        return text(self._invite(keys=[self.key(game_id)], args=[str(seat), code_digest]))

    def reinvite(self, game_id: str, seat: int, code_digest: str) -> str:
        """Record a seat's invite code, claimed or not, revoking its token: "ok" or "nogame"."""
        return text(
            self._reinvite(
                keys=[self.key(game_id), self._meta(game_id)], args=[str(seat), code_digest]
            )
        )

    def move(
        self, game_id: str, seat: int, holder_digest: str, code_digest: str, expires: int
    ) -> str:
        """Record the seat's move code (valid until ``expires``, epoch seconds) if
        ``holder_digest`` is the seat's token digest: "ok", "nogame" or "stale"."""
        return text(
            self._move(
                keys=[self.key(game_id), self._meta(game_id)],
                args=[str(seat), holder_digest, code_digest, str(expires)],
            )
        )

    def redeem(self, game_id: str, seat: int, code_digest: str, token_digest: str, now: int) -> str:
        """Give the seat to the bearer of its move code: "ok", "nogame", "badcode", "used" or
        "expired"."""
        return text(
            self._redeem(
                keys=[self.key(game_id), self._meta(game_id)],
                args=[str(seat), code_digest, token_digest, str(now)],
            )
        )

    def rotate(self, game_id: str, seat: int, new_digest: str, old_digest: str) -> str:
        """Replace a claimed seat's token digest, if it is still ``old_digest`` ('' for any):
        "ok", "nogame", "unclaimed" or "stale"."""
        return text(
            self._rotate(
                keys=[self.key(game_id), self._meta(game_id)],
                args=[f"seat:{seat}", new_digest, old_digest],
            )
        )


def account_games_key(prefix: str, account: str) -> str:
    """The set of games a bot account is seated in."""
    return f"{prefix}:botacct:{account}:games"


def account_active_key(prefix: str, account: str) -> str:
    """The set of an account's games not known to be over."""
    return f"{prefix}:botacct:{account}:active"


SWAP_TOKEN_LUA = """
-- KEYS: account   ARGV: old digest, new digest
-- Replace the account's token digest if it is still the old one: 1, else 0 (revoked meanwhile).
if redis.call('HGET', KEYS[1], 'token') ~= ARGV[1] then return 0 end
redis.call('HSET', KEYS[1], 'token', ARGV[2])
return 1
"""


REVOKE_LUA = """
-- KEYS: account   ARGV: revoked_at
-- Mark the account revoked and answer the digest it held ('' for none).
local last = redis.call('HGET', KEYS[1], 'token') or ''
redis.call('HSET', KEYS[1], 'token', '', 'revoked_at', ARGV[1])
return last
"""


def account_started_key(prefix: str, account: str) -> str:
    """The sorted set of an account's games by when it was seated in each."""
    return f"{prefix}:botacct:{account}:started"


class BotAccountStore:
    """Bot accounts and their live tokens' digests under one key prefix."""

    def __init__(self, client: Any, prefix: str) -> None:
        self.client = client
        self.prefix = prefix
        self._swap = client.register_script(SWAP_TOKEN_LUA)
        self._revoke = client.register_script(REVOKE_LUA)

    def _key(self, account: str) -> str:
        return f"{self.prefix}:botacct:{account}"

    def _token_key(self, token_digest: str) -> str:
        return f"{self.prefix}:botacct-token:{token_digest}"

    def create(self, account: str, fields: dict[str, str], token_digest: str) -> None:
        """Store an account (``fields``, its token's digest among them) and its live token: the
        account first, then the token that points to it (two slots on a cluster, so no MULTI: a
        crash in between leaves an account without a working token, never the reverse)."""
        self.client.hset(self._key(account), mapping={**fields, "token": token_digest})
        self.client.set(self._token_key(token_digest), account)

    def get(self, account: str) -> dict[str, str]:
        """An account's fields ({} for none)."""
        return {text(k): text(v) for k, v in self.client.hgetall(self._key(account)).items()}

    def account_of(self, token_digest: str) -> str | None:
        """The account whose live token has this digest, or None."""
        raw = self.client.get(self._token_key(token_digest))
        return text(raw) if raw is not None else None

    def revoke(self, account: str, revoked_at: str) -> None:
        """The account's token stops working first (two slots on a cluster, no MULTI), then the
        account is marked revoked, emptying its digest atomically: the digest found then (a
        rotation's new one, written meanwhile) loses its key too (``rotate``'s step 4 takes back
        a key written after this)."""
        raw = self.client.hget(self._key(account), "token")
        if raw:
            self.client.delete(self._token_key(text(raw)))
        last = text(self._revoke(keys=[self._key(account)], args=[revoked_at]) or b"")
        if last and last != text(raw or b""):
            self.client.delete(self._token_key(last))

    def rotate(self, account: str, old_digest: str, new_digest: str) -> bool:
        """Replace the account's live token ``old_digest`` by ``new_digest``; False (nothing
        changed that still matters) when the old token no longer works: rotated or revoked
        meanwhile. Each key is in a slot of its own (no MULTI), so the writes go in an order that
        never leaves two live tokens nor the old one working:

        1. delete the old token's key: it stops working at once, and of rotations racing with
           one token exactly one deletes it (the others stop here);
        2. swap the digest in the account's hash, if it is still the old one (a revocation
           in between empties it: stop, nothing is live);
        3. write the new token's key;
        4. read the hash again: a revocation that read the new digest before step 3 deleted a
           key that was not there yet, so take the new key back.

        A crash after step 1 or 2 leaves the account with no working token (as a crash in
        ``create`` does; the admin's ``revoke`` still marks it revoked); after step 3 the new
        token works, though its answer may never have reached the caller."""
        if not self.client.delete(self._token_key(old_digest)):
            return False
        if not self._swap(keys=[self._key(account)], args=[old_digest, new_digest]):
            return False
        self.client.set(self._token_key(new_digest), account)
        if text(self.client.hget(self._key(account), "token") or b"") != new_digest:
            self.client.delete(self._token_key(new_digest))
            return False
        return True

    def seated(self, account: str, game_id: str) -> None:
        """``game_id`` seats the account: among its games (and in their order, the time now) and
        its active games."""
        self.client.zadd(account_started_key(self.prefix, account), {game_id: time.time()}, nx=True)
        self.client.sadd(account_games_key(self.prefix, account), game_id)
        self.client.sadd(account_active_key(self.prefix, account), game_id)

    def active_games(self, account: str) -> list[str]:
        return sorted(
            text(g) for g in self.client.smembers(account_active_key(self.prefix, account))
        )

    def finished(self, account: str, game_id: str) -> None:
        """``game_id`` is over: off the account's active games."""
        self.client.srem(account_active_key(self.prefix, account), game_id)

    def started_page(
        self, account: str, high: float | str, offset: int, count: int
    ) -> list[tuple[str, float]]:
        """Up to ``count`` of the account's games seated at ``high`` or before (epoch seconds,
        or ``"+inf"``), newest first, from ``offset`` on: (game id, when seated)."""
        rows = self.client.zrevrangebyscore(
            account_started_key(self.prefix, account),
            high,
            "-inf",
            start=offset,
            num=count,
            withscores=True,
        )
        return [(text(g), float(score)) for g, score in rows]

    def seated_at(self, account: str, game_ids: Sequence[str]) -> list[float | None]:
        """When the account was seated in each game (None: not in the index)."""
        if not game_ids:
            return []
        scores = self.client.zmscore(account_started_key(self.prefix, account), list(game_ids))
        return [None if s is None else float(s) for s in scores]

    def unindexed(self, account: str) -> list[str]:
        """The account's games missing from its ordered index (seated before it existed): none
        when both hold as many (one round trip)."""
        pipe = self.client.pipeline(transaction=False)
        pipe.scard(account_games_key(self.prefix, account))
        pipe.zcard(account_started_key(self.prefix, account))
        games, indexed = pipe.execute()
        if int(games) <= int(indexed):
            return []
        ids = sorted(text(g) for g in self.client.smembers(account_games_key(self.prefix, account)))
        return [g for g, s in zip(ids, self.seated_at(account, ids), strict=True) if s is None]

    def index(self, account: str, seated: dict[str, float]) -> None:
        """Add games to the account's ordered index (game id -> when seated), keeping any score
        there already."""
        if seated:
            self.client.zadd(account_started_key(self.prefix, account), seated, nx=True)

    def forget(self, account: str, game_ids: Sequence[str]) -> None:
        """Games gone from the store (expired or deleted): off every set of the account."""
        if game_ids:
            pipe = self.client.pipeline(transaction=False)
            pipe.zrem(account_started_key(self.prefix, account), *game_ids)
            pipe.srem(account_games_key(self.prefix, account), *game_ids)
            pipe.srem(account_active_key(self.prefix, account), *game_ids)
            pipe.execute()
