"""``RedisStore``: the ``EventStore`` port on Redis Streams (real Redis, the embedded server, or
fakeredis with Lua for unit tests - the same class and the same Lua in every case).

Keys of one game share the hash tag ``{g:<id>}`` so they live in one cluster slot and one Lua
script may touch them all (``<prefix>`` defaults to ``rfg``):

* ``<prefix>:{g:<id>}:s`` stream; entry id ``<seq>-0``, one field ``e`` = envelope JSON
* ``<prefix>:{g:<id>}:m`` hash: ``version``, ``hash`` (last envelope's), ``status``, ``created``
* ``<prefix>:{g:<id>}:c`` hash: command id -> ``"<first_seq>:<last_seq>"`` (kept forever)
* ``<prefix>:{g:<id>}:v`` hash: view name -> ``"<position>:<json>"`` (once the game is
  compacted, its ``summary`` only: what the lobby lists)
* ``<prefix>:lobby`` sorted set: game id scored by creation time (a cross-game key: written by
  the creation script on a single Redis, right after it on a cluster, never by an append)
* ``<prefix>:archives`` sorted set: archived games whose keys expire -> when (``expire_archives``;
  cross-game, written by its own commands)
* ``<prefix>:{g:<id>}:tokens`` hash: ``seat:<n>`` -> sha256 of the seat's token, and who sits
  there: ``name:<n>``, ``host``, ``invite:<n>`` / ``used:<n>`` (invite code digests;
  ``events.store.accounts``)

Retention (``set_retention``, ``keep``): a game may carry in its meta hash ``expire_idle`` (seconds:
every key of the game expires that long after its last append; a claim removes it) and
``expire_finished`` (seconds the game is kept once over; 0 or absent: for good). The append script
applies them, so games finished by any process (API, workers) follow their policy; the lobby entry
of an expired game is dropped by the readers of the lobby (``service.lobby``), and its archive
file, if it was archived, by the workers' sweep (``expire_archives``).

An append is one EVALSHA of ``APPEND_LUA``. It performs every check before its first write, and
the only write that could still fail on a well-typed keyspace (the first XADD, if the stream was
tampered with) comes first, so the script is all or nothing.

A game's creation is one EVALSHA of ``CREATE_LUA`` (``create_game``): first events, command record,
meta hash, views, retention and expiry, and the lobby entry on a single Redis. Redis refuses a
write it cannot take (``OOM``, ``READONLY``, ``MISCONF``, ``NOREPLICAS``: ``events.store.outage``) at a
script's first write, so a refused append or creation wrote nothing; those errors pass through as
they are.

On a Redis Cluster (``events.store.connect("redis+cluster://...")``) every script above touches the
keys of one game only, so one hash slot; the lobby is written by its own command, after the
creation script. With a
``ReplicaWait`` (``?wait=1`` on the store URL) an append is followed, on the same connection to
the game's master, by ``WAIT <replicas> <timeout>``: it is answered only once that many replicas
hold it, else ``ReplicaWaitTimeout`` (the caller retries with the same command id).
"""

from __future__ import annotations

import base64
import logging
import os
import time
from collections import OrderedDict
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from datetime import datetime
from typing import Any

import redis
from redis.cluster import RedisCluster

from events.envelope import GENESIS_HASH, Envelope
from events.errors import ConcurrencyConflict, GameNotFound, InvalidBatch, StoreError
from events.store import compaction
from events.store.lobby import lobby_key
from events.store.outage import is_outage
from events.store.port import (
    AppendResult,
    GameEntry,
    StreamHead,
    check_command_id,
    check_game_id,
    check_status,
    check_views,
    validate_batch,
)
from events.store.seeds import SeedHoldStore
from events.store.text import text as as_text

_log = logging.getLogger(__name__)

APPEND_LUA = """
-- KEYS: stream, meta, commands, views, tokens (the last for its retention only)
-- ARGV[1]: command id
-- ARGV[2]: header "<expected> <n_events> <n_views> <first prev_hash|-> <last hash|-> <u> <status>"
--          (u: 1 = the new version needs no worker, recorded as meta 'unattended'; status
--          empty = unchanged; few arguments keep the client's packing cost down)
-- ARGV[3..]: n_events envelope JSONs, then n_views (name, "<new version>:<json>") pairs
local done = redis.call('HGET', KEYS[3], ARGV[1])
if done then return {'dup', done} end
local e, ns, nvs, prev, last, unattended, status =
  string.match(ARGV[2], '^(%d+) (%d+) (%d+) (%S+) (%S+) (%d) ?(.*)$')
local meta = redis.call('HMGET', KEYS[2], 'version', 'hash', 'compacted')
if meta[3] then return {'compacted', meta[1]} end
local version = tonumber(meta[1]) or 0
local expected = tonumber(e)
if version ~= expected then return {'conflict', version} end
local n = tonumber(ns)
local nv = tonumber(nvs)
if n > 0 then
  local head = meta[2] or '@GENESIS@'
  if head ~= prev then return {'chain', head} end
end
if nv > 0 then
  local t = redis.call('TYPE', KEYS[4])['ok']
  if t ~= 'hash' and t ~= 'none' then
    return redis.error_reply('WRONGTYPE views key ' .. KEYS[4] .. ' holds a ' .. t)
  end
end
for i = 1, n do
  redis.call('XADD', KEYS[1], (expected + i) .. '-0', 'e', ARGV[2 + i])
end
local newv = expected + n
local result = (expected + 1) .. ':' .. newv
redis.call('HSET', KEYS[3], ARGV[1], result)
if n > 0 and unattended == '1' then
  redis.call('HSET', KEYS[2], 'unattended', newv)
end
if n > 0 and status ~= '' then
  redis.call('HSET', KEYS[2], 'version', newv, 'hash', last, 'status', status)
elseif n > 0 then
  redis.call('HSET', KEYS[2], 'version', newv, 'hash', last)
elseif status ~= '' then
  redis.call('HSET', KEYS[2], 'status', status)
end
if nv > 0 then
  -- each view arrives as "<position>:<json>", its position the new version (checked above)
  redis.call('HSET', KEYS[4], unpack(ARGV, 3 + n, 2 + n + 2 * nv))
end
-- retention (KEYS[5] is the seat tokens hash): an unclaimed game expires after its idle time
-- from this append on; a finished one is kept (or expires after expire_finished)
local policy = redis.call('HMGET', KEYS[2], 'expire_idle', 'expire_finished')
if policy[1] or policy[2] then
  if status == 'finished' then
    local keep = tonumber(policy[2]) or 0
    for i = 1, 5 do
      if keep > 0 then redis.call('EXPIRE', KEYS[i], keep) else redis.call('PERSIST', KEYS[i]) end
    end
    redis.call('HDEL', KEYS[2], 'expire_idle')
  elseif policy[1] then
    for i = 1, 5 do redis.call('EXPIRE', KEYS[i], tonumber(policy[1])) end
  end
end
return {'ok', result}
""".replace("@GENESIS@", GENESIS_HASH)


CREATE_LUA = """
-- A game's creation, all or nothing (RedisStore.create_game).
-- KEYS: stream, meta, commands, views, tokens [, the lobby: on a single Redis only]
-- ARGV[1]: command id   ARGV[2]: header
--          "<n_events> <n_views> <last hash> <status> <idle s> <finished s> <lobby score>"
-- ARGV[3]: game id   ARGV[4]: created_at   ARGV[5..]: n_events envelope JSONs (seq 1..n), then
--          n_views (name, "<n>:<json>") pairs
local done = redis.call('HGET', KEYS[3], ARGV[1])
if done then return {'dup', done} end
local version = redis.call('HGET', KEYS[2], 'version')
if version or redis.call('EXISTS', KEYS[1]) == 1 then return {'exists', version or '0'} end
local ns, nvs, last, status, idle, keep, score =
  string.match(ARGV[2], '^(%d+) (%d+) (%S+) (%S+) (%d+) (%d+) (%S+)$')
local n, nv = tonumber(ns), tonumber(nvs)
idle, keep = tonumber(idle), tonumber(keep)
-- the first write: refused (OOM, READONLY, MISCONF, NOREPLICAS) before anything is written
for i = 1, n do
  redis.call('XADD', KEYS[1], i .. '-0', 'e', ARGV[4 + i])
end
local result = '1:' .. n
redis.call('HSET', KEYS[3], ARGV[1], result)
redis.call('HSET', KEYS[2], 'version', n, 'hash', last, 'status', status, 'created', ARGV[4])
if nv > 0 then
  redis.call('HSET', KEYS[4], unpack(ARGV, 5 + n, 4 + n + 2 * nv))
end
-- retention, as RETAIN_LUA sets it and the append script applies it
local ttl = 0
if keep > 0 then redis.call('HSET', KEYS[2], 'expire_finished', keep) end
if status == 'finished' then
  ttl = keep
elseif idle > 0 then
  redis.call('HSET', KEYS[2], 'expire_idle', idle)
  ttl = idle
end
if ttl > 0 then
  for i = 1, 5 do redis.call('EXPIRE', KEYS[i], ttl) end
end
if #KEYS > 5 then redis.call('ZADD', KEYS[6], 'NX', score, ARGV[3]) end
return {'ok', result}
"""

CATCH_UP_LUA = """
-- KEYS: meta, stream, commands   ARGV: after (a version), page size, command id ('' for none)
-- {version, the command id's result or false, the envelope JSON of each entry after `after`}:
-- what a process needs to catch its cached game up, as one command (a script: one call, one
-- reply of plain strings, instead of a pipeline of three)
local version = redis.call('HGET', KEYS[1], 'version')
if not version then return {false} end
local previous = false
if ARGV[3] ~= '' then previous = redis.call('HGET', KEYS[3], ARGV[3]) end
local out = {version, previous}
local page = redis.call('XRANGE', KEYS[2], (tonumber(ARGV[1]) + 1) .. '-0', '+', 'COUNT', ARGV[2])
for i = 1, #page do
  local fields = page[i][2]
  for j = 1, #fields, 2 do
    if fields[j] == 'e' then out[#out + 1] = fields[j + 1] end
  end
end
return out
"""

PUT_VIEWS_LUA = """
-- KEYS: meta, views   ARGV: position, then (name, json) pairs
if redis.call('EXISTS', KEYS[1]) == 0 then return {'nogame'} end
local version = tonumber(redis.call('HGET', KEYS[1], 'version')) or 0
local pos = tonumber(ARGV[1])
if pos > version then return {'ahead', version} end
local written = {}
for i = 2, #ARGV, 2 do
  local cur = redis.call('HGET', KEYS[2], ARGV[i])
  local curpos = -1
  if cur then curpos = tonumber(string.match(cur, '^(%d+):')) end
  if pos >= curpos then
    redis.call('HSET', KEYS[2], ARGV[i], pos .. ':' .. ARGV[i + 1])
    written[#written + 1] = ARGV[i]
  end
end
return {'ok', written}
"""

RETAIN_LUA = """
-- KEYS: stream, meta, commands, views, tokens   ARGV: idle seconds, finished seconds (0: none)
if redis.call('EXISTS', KEYS[2]) == 0 then return 0 end
local idle = tonumber(ARGV[1])
local keep = tonumber(ARGV[2])
if keep > 0 then redis.call('HSET', KEYS[2], 'expire_finished', keep) end
if redis.call('HGET', KEYS[2], 'status') == 'finished' then
  if keep > 0 then
    for i = 1, #KEYS do redis.call('EXPIRE', KEYS[i], keep) end
  end
  return 1
end
if idle > 0 then
  redis.call('HSET', KEYS[2], 'expire_idle', idle)
  for i = 1, #KEYS do redis.call('EXPIRE', KEYS[i], idle) end
end
return 1
"""

KEEP_LUA = """
-- KEYS: stream, meta, commands, views, tokens: the game is no longer abandoned (a seat was claimed)
if redis.call('HDEL', KEYS[2], 'expire_idle') == 1 and redis.call('HGET', KEYS[2], 'status') ~= 'finished' then
  for i = 1, #KEYS do redis.call('PERSIST', KEYS[i]) end
end
return 1
"""

COMPACT_LUA = """
-- KEYS: stream, meta, commands, views, compacted   ARGV: version, log blob, views blob
local m = redis.call('HMGET', KEYS[2], 'version', 'status', 'compacted')
if m[3] then return {'done'} end
if m[2] ~= 'finished' then return {'active'} end
if tonumber(m[1]) ~= tonumber(ARGV[1]) then return {'moved'} end
if redis.call('XLEN', KEYS[1]) ~= tonumber(ARGV[1]) then return {'stream'} end
redis.call('HSET', KEYS[5], 'log', ARGV[2], 'views', ARGV[3])
local ttl = redis.call('PTTL', KEYS[2])
if ttl > 0 then redis.call('PEXPIRE', KEYS[5], ttl) end
redis.call('HSET', KEYS[2], 'compacted', string.len(ARGV[2]))
-- the summary view stays in the views hash (the lobby and GET /games/{id} read it there)
local summary = redis.call('HGET', KEYS[4], 'summary')
redis.call('DEL', KEYS[1], KEYS[3], KEYS[4])
if summary then
  redis.call('HSET', KEYS[4], 'summary', summary)
  if ttl > 0 then redis.call('PEXPIRE', KEYS[4], ttl) end
end
return {'ok'}
"""

RESTORE_SUMMARY_LUA = """
-- KEYS: meta, views   ARGV: the summary view as stored ("<position>:<json>")
-- a game compacted before compaction kept its summary: put it back, with the game's TTL
if not redis.call('HGET', KEYS[1], 'compacted') then return 0 end
if redis.call('HSETNX', KEYS[2], 'summary', ARGV[1]) == 0 then return 0 end
local ttl = redis.call('PTTL', KEYS[1])
if ttl > 0 then redis.call('PEXPIRE', KEYS[2], ttl) end
return 1
"""

ARCHIVE_LUA = """
-- KEYS: meta, compacted   ARGV: version, archive file name
local m = redis.call('HMGET', KEYS[1], 'version', 'compacted', 'archived')
if m[3] then return {'done'} end
if not m[2] then return {'active'} end
if tonumber(m[1]) ~= tonumber(ARGV[1]) then return {'moved'} end
redis.call('HSET', KEYS[1], 'archived', ARGV[2])
redis.call('DEL', KEYS[2])
return {'ok'}
"""

_READ_PAGE = 1000
#: compacted logs kept decoded per process (finished games never change)
_UNPACKED_CACHE = 64
#: notices kept per stream (``append(..., notices=...)``); readers want only the latest
NOTICE_MAXLEN = 1000


@dataclass(frozen=True)
class ReplicaWait:
    """Answer an append only once ``replicas`` replicas acknowledged it, waiting up to
    ``timeout`` seconds (Redis ``WAIT``; ``?wait=<replicas>&wait_timeout=<s>`` on the store URL)."""

    replicas: int = 1
    timeout: float = 1.0


class ReplicaWaitTimeout(StoreError, redis.exceptions.TimeoutError):
    """The append was applied on the master but not acknowledged by enough replicas in time: it
    may be lost if the master fails now. Not an answer: retry with the same command id (the store
    returns the recorded result if the command survived, or applies it again if it did not).
    A ``redis.TimeoutError``, so the API answers 503 and the workers retry it."""


def is_cluster(client: Any) -> bool:
    """Whether ``client`` is a redis-py ``RedisCluster``."""
    return isinstance(client, RedisCluster)


def _entry_text(fields: Mapping[Any, Any]) -> Any:
    """The envelope JSON of one stream entry (bytes or str keys, as the client decodes)."""
    return fields.get(b"e") if b"e" in fields else fields.get("e")


def _stored_views(raws: Sequence[Any]) -> list[tuple[int, str] | None]:
    """Stored views (``"<position>:<json>"``, or None) as (position, json) pairs."""
    out: list[tuple[int, str] | None] = []
    for raw in raws:
        if raw is None:
            out.append(None)
            continue
        pos, _, text = as_text(raw).partition(":")
        out.append((int(pos), text))
    return out


def _parse_result(game_id: str, command_id: str, raw: Any, duplicate: bool) -> AppendResult:
    first, last = (int(x) for x in as_text(raw).split(":"))
    return AppendResult(game_id, command_id, first, last, last, duplicate)


def _epoch(created_at: str) -> float:
    try:
        return datetime.fromisoformat(created_at).timestamp()
    except (TypeError, ValueError):
        raise InvalidBatch(
            f"created_at {created_at!r} is not ISO-8601; pass iso_utc(now)"
        ) from None


class RedisStore:
    """Event store on a redis-py client (``redis.Redis`` or ``fakeredis.FakeRedis``).

    Works with ``decode_responses`` on or off. Thread-safe as far as the client is (redis-py's
    connection pool is). Retrying an append after a connection error is safe: resend the same
    command id and the store returns the original result if the first attempt was applied.
    """

    def __init__(
        self,
        client: Any,
        *,
        prefix: str = "rfg",
        replica_wait: ReplicaWait | None = None,
        archive_dir: str | None = None,
    ) -> None:
        if "{" in prefix or "}" in prefix:
            raise ValueError(f"prefix {prefix!r} must not contain braces (they mark hash tags)")
        self.client = client
        self.prefix = prefix
        #: the seeds held back for duplicate sets (``events.games.seeds``)
        self.seed_holds = SeedHoldStore(client, prefix)
        self._append_script = client.register_script(APPEND_LUA)
        self._create_script = client.register_script(CREATE_LUA)
        self._put_views = client.register_script(PUT_VIEWS_LUA)
        self._catch_up = client.register_script(CATCH_UP_LUA)
        self._retain = client.register_script(RETAIN_LUA)
        self._keep = client.register_script(KEEP_LUA)
        self._compact = client.register_script(COMPACT_LUA)
        self._archive = client.register_script(ARCHIVE_LUA)
        self._restore_summary = client.register_script(RESTORE_SUMMARY_LUA)
        #: where ``archive`` writes finished games (and reads them back): the argument, else
        #: ``$RFG_ARCHIVE_DIR``; every process serving the store needs the same directory
        if archive_dir is None:
            from events import config

            archive_dir = config.value("RFG_ARCHIVE_DIR")
        self.archive_dir = archive_dir or None
        self._unpacked: OrderedDict[tuple[str, str], list[str]] = OrderedDict()
        self._lobby = lobby_key(prefix)
        #: archived games whose keys expire -> when (``expire_archives``)
        self._archives = f"{prefix}:archives"
        #: from the argument, else from the URL ``events.store.connect`` made the client for
        self.replica_wait = replica_wait or getattr(client, "rfg_replica_wait", None)

    # -- keys -------------------------------------------------------------------------------
    def keys(self, game_id: str) -> tuple[str, str, str, str]:
        """(stream, meta, commands, views) key names of a game."""
        base = f"{self.prefix}:{{g:{game_id}}}"
        return f"{base}:s", f"{base}:m", f"{base}:c", f"{base}:v"

    def game_keys(self, game_id: str) -> tuple[str, str, str, str, str]:
        """Every key a game holds: (stream, meta, commands, views, seat tokens)."""
        stream, meta, cmds, views = self.keys(game_id)
        return stream, meta, cmds, views, f"{self.prefix}:{{g:{game_id}}}:tokens"

    def set_retention(self, game_id: str, idle_seconds: int, finished_seconds: int = 0) -> bool:
        """Let the game expire, with every key it holds, ``idle_seconds`` after its last append
        until ``keep`` is called (0: never), and ``finished_seconds`` after it ends (0: kept for
        good). False if the game does not exist."""
        check_game_id(game_id)
        return bool(
            self._retain(
                keys=self.game_keys(game_id), args=[int(idle_seconds), int(finished_seconds)]
            )
        )

    def keep(self, game_id: str) -> None:
        """The game is wanted (a seat was claimed): it no longer expires while unfinished."""
        check_game_id(game_id)
        self._keep(keys=self.game_keys(game_id))

    def _exists(self, game_id: str) -> bool:
        """Whether the game's first events were stored (a meta hash without a version is what an
        older creation left when its events were refused: no game)."""
        return bool(self.client.hexists(self.keys(game_id)[1], "version"))

    # -- writing ----------------------------------------------------------------------------
    def append(
        self,
        game_id: str,
        expected_version: int,
        command_id: str,
        envelopes: Sequence[Envelope],
        *,
        views: Mapping[str, str] | None = None,
        status: str | None = None,
        notices: Sequence[tuple[str, str]] | None = None,
        unattended: bool = False,
    ) -> AppendResult:
        """``unattended``: the new version needs no worker (no bot turn, no deadline: every
        pending decision is a person's without a clock); recorded as the game's meta field
        ``unattended`` (that version), so the sweep need not look at it (``workers.sweep``).

        ``notices``: (stream key, JSON) pairs XADDed (field ``d``, trimmed to about
        ``NOTICE_MAXLEN``) with the append: in the same pipeline, so the same round trip, on a
        single Redis; right after a successful append on a cluster or with ``ReplicaWait`` (the
        keys are in other slots than the game's, so never in its script). On a single Redis they
        are written even when the append is refused (a conflict, a duplicate): readers check the
        command record they name (``notice_applied``)."""
        keys, args, prev_hash = self._append_call(
            game_id, expected_version, command_id, envelopes, views or {}, status, unattended
        )
        try:
            if notices and self.replica_wait is None and not is_cluster(self.client):
                reply = self._append_noticing(keys, args, notices)
                notices = None
            elif self.replica_wait is None:
                reply = self._append_script(keys=keys, args=args)
            else:
                reply = self._append_waiting(game_id, keys, args)
        except redis.ResponseError as exc:
            # refused before it ran, so nothing was written: full, read-only..., or a cluster
            # failing over (CLUSTERDOWN, TRYAGAIN are ResponseErrors too): an outage, retry
            if is_outage(exc):
                raise
            raise StoreError(
                f"Redis refused the append to game {game_id!r}: {exc}. A key of this game holds "
                f"data not written by the event store; inspect keys {self.keys(game_id)}"
            ) from exc
        result = self._append_result(game_id, expected_version, command_id, prev_hash, reply)
        if notices and not result.duplicate:  # (written with the script above on a single Redis)
            pipe = self.client.pipeline(transaction=False)
            for key, data in notices:
                pipe.xadd(key, {"d": data}, maxlen=NOTICE_MAXLEN, approximate=True)
            pipe.execute()
        return result

    def create_game(
        self,
        game_id: str,
        created_at: str,
        command_id: str,
        envelopes: Sequence[Envelope],
        *,
        views: Mapping[str, str] | None = None,
        status: str = "active",
        idle_seconds: int = 0,
        finished_seconds: int = 0,
        notices: Sequence[tuple[str, str]] | None = None,
    ) -> AppendResult:
        """Create a game in one atomic step (``CREATE_LUA``, one slot): its first events (seq 1
        on), their command record, its meta hash (version, chain head, ``status``, ``created_at``
        and the retention ``set_retention`` would set), its ``views`` and the expiry of its keys,
        and on a single Redis its lobby entry. A refused write (``events.store.outage``: full,
        read-only...) leaves nothing of it. On a cluster the lobby, in another slot, is written
        right after: a failure in between leaves a game that is not listed (and expires as its
        retention says), never a listed game without its events.

        Retrying with the same game id and command id answers the first creation's result as a
        ``duplicate`` (and lists the game, if the first attempt stopped before the lobby); a game
        of that id created otherwise is a ``ConcurrencyConflict``. ``notices`` as in ``append``.
        """
        _prev, last_hash, texts = validate_batch(game_id, 0, command_id, envelopes)
        views = views or {}
        check_views(views)
        check_status(status)
        if not texts:
            raise InvalidBatch(f"creating game {game_id!r} needs its first events; none given")
        score = _epoch(created_at)
        single = not is_cluster(self.client)
        keys: list[str] = [*self.game_keys(game_id), *([self._lobby] if single else [])]
        header = (
            f"{len(texts)} {len(views)} {last_hash} {status} {max(0, int(idle_seconds))} "
            f"{max(0, int(finished_seconds))} {score!r}"
        )
        args: list[Any] = [command_id, header, game_id, created_at, *texts]
        for name, text in views.items():
            args += (name, f"{len(texts)}:{text}")
        script = self._create_script
        try:
            if notices and self.replica_wait is None and single:
                reply = self._append_noticing(keys, args, notices, script)
                notices = None
            elif self.replica_wait is None:
                reply = script(keys=keys, args=args)
            else:
                reply = self._append_waiting(game_id, keys, args, script)
        except redis.ResponseError as exc:
            if is_outage(exc):
                raise  # nothing was written (a refusal, a cluster failing over): retry
            raise StoreError(
                f"Redis refused the creation of game {game_id!r}: {exc}; inspect keys "
                f"{self.game_keys(game_id)}"
            ) from exc
        tag = as_text(reply[0])
        if tag == "exists":
            raise ConcurrencyConflict(game_id, 0, int(reply[1]))
        if tag not in ("ok", "dup"):
            raise StoreError(f"unexpected reply {reply!r} from the creation script")
        result = _parse_result(game_id, command_id, reply[1], duplicate=tag == "dup")
        if not single:  # after the game's keys: a listed game always has its events
            self.client.zadd(self._lobby, {game_id: score}, nx=True)
        if notices and not result.duplicate:
            pipe = self.client.pipeline(transaction=False)
            for key, data in notices:
                pipe.xadd(key, {"d": data}, maxlen=NOTICE_MAXLEN, approximate=True)
            pipe.execute()
        return result

    def _append_call(
        self,
        game_id: str,
        expected_version: int,
        command_id: str,
        envelopes: Sequence[Envelope],
        views: Mapping[str, str],
        status: str | None,
        unattended: bool = False,
    ) -> tuple[list[str], list[Any], str]:
        """The batch checked, then the append script's keys and arguments (see ``APPEND_LUA``)
        and the batch's first ``prev_hash``."""
        prev_hash, last_hash, texts = validate_batch(
            game_id, expected_version, command_id, envelopes
        )
        check_views(views)
        check_status(status)
        keys: list[str] = list(self.game_keys(game_id))
        header = (
            f"{expected_version} {len(texts)} {len(views)} {prev_hash or '-'} "
            f"{last_hash or '-'} {1 if unattended else 0} {status or ''}"
        )
        args: list[Any] = [command_id, header, *texts]
        position = f"{expected_version + len(texts)}:"
        for name, text in views.items():
            args.append(name)
            args.append(position + text)
        return keys, args, prev_hash

    def _append_result(
        self,
        game_id: str,
        expected_version: int,
        command_id: str,
        prev_hash: str,
        reply: Any,
    ) -> AppendResult:
        """The append script's reply as a result (``ok``, ``dup``) or the error it means."""
        tag = as_text(reply[0])
        if tag == "ok":
            return _parse_result(game_id, command_id, reply[1], duplicate=False)
        if tag == "dup":
            return _parse_result(game_id, command_id, reply[1], duplicate=True)
        if tag == "conflict":
            actual = int(reply[1])
            if actual == 0 and expected_version > 0 and not self._exists(game_id):
                raise GameNotFound(game_id)
            raise ConcurrencyConflict(game_id, expected_version, actual)
        if tag == "compacted":
            raise StoreError(
                f"game {game_id!r} is finished and compacted (version "
                f"{as_text(reply[1])}); nothing can be appended to it"
            )
        if tag == "chain":
            raise InvalidBatch(
                f"the batch for game {game_id!r} starts with prev_hash {prev_hash[:12]}... but "
                f"the stored head hash is {as_text(reply[1])[:12]}...: the command was decided on a "
                f"different history; reload the game (read + head) and seal the events again"
            )
        raise StoreError(f"unexpected reply {reply!r} from the append script")

    def _append_noticing(
        self,
        keys: list[str],
        args: list[Any],
        notices: Sequence[tuple[str, str]],
        script: Any = None,
    ) -> Any:
        """The append script (or ``script``) and the notices' XADDs in one pipeline (one round
        trip). EVALSHA directly: a pipeline holding a ``Script`` would first ask SCRIPT EXISTS (a
        round trip)."""
        script = script or self._append_script
        for attempt in (1, 2):
            pipe = self.client.pipeline(transaction=False)
            pipe.evalsha(script.sha, len(keys), *keys, *args)
            if attempt == 1:  # written even when the script was missing: not again
                for key, data in notices:
                    pipe.xadd(key, {"d": data}, maxlen=NOTICE_MAXLEN, approximate=True)
            replies = pipe.execute(raise_on_error=False)
            reply = replies[0]
            if isinstance(reply, redis.exceptions.NoScriptError) and attempt == 1:
                self.client.script_load(script.script)  # a restarted or flushed server
                continue
            if isinstance(reply, BaseException):
                raise reply
            return reply
        raise StoreError("the append script could not be loaded")

    def notice_applied(self, game_id: str, command_id: str, version: int) -> bool:
        """Whether a notice written with an append names a command that was stored and ended at
        ``version`` (a notice of a refused append names one that was not)."""
        raw = self.client.hget(self.keys(game_id)[2], command_id)
        return raw is not None and as_text(raw).endswith(f":{version}")

    def notice_stream(self, name: str) -> str:
        """The stream of notices for ``name`` (a bot account): its own hash tag, its own slot."""
        return f"{self.prefix}:{{a:{name}}}:notices"

    def _append_waiting(
        self, game_id: str, keys: list[str], args: list[Any], script: Any = None
    ) -> Any:
        """The append script (or ``script``), then ``WAIT`` on the same connection (``WAIT``
        counts the writes of its own connection): one pipeline to the plain Redis, or to the
        master of the game's slot."""
        assert self.replica_wait is not None
        wanted, seconds = self.replica_wait.replicas, self.replica_wait.timeout
        node_client = self.client
        if is_cluster(self.client):
            node = self.client.get_node_from_key(keys[0])
            node_client = self.client.get_redis_connection(node)
        pipe = node_client.pipeline(transaction=False)
        (script or self._append_script)(keys=keys, args=args, client=pipe)
        pipe.execute_command("WAIT", wanted, max(1, int(seconds * 1000)))
        reply, acked = self._execute_waiting(pipe, game_id)
        if as_text(reply[0]) == "dup" and int(acked) >= wanted:
            self.confirm_replicated(game_id)
        if as_text(reply[0]) in ("ok", "dup") and int(acked) < wanted:
            raise ReplicaWaitTimeout(
                f"game {game_id!r}: the command was stored on the master but only {int(acked)} of "
                f"{wanted} replica(s) acknowledged it within {seconds:g}s, so a failover could "
                f"still lose it; retry with the same command id (check the replicas' link: "
                f"INFO replication)"
            )
        return reply

    def _execute_waiting(self, pipe: Any, game_id: str) -> Any:
        """A pipeline ending in ``WAIT`` sent to the game's master: its replies. A master that
        moved or stepped down meanwhile is a ``ConnectionError`` (nothing, or nothing safe, was
        written: retry), one demoted during the ``WAIT`` (``UNBLOCKED``) a
        ``ReplicaWaitTimeout``; a refusal (``NOREPLICAS``...) passes through as it is."""
        try:
            return pipe.execute()
        except (
            redis.exceptions.AskError,
            redis.exceptions.ReadOnlyError,
            redis.exceptions.ClusterDownError,
            redis.exceptions.TryAgainError,
            redis.exceptions.ConnectionError,
        ) as exc:
            # MovedError is an AskError; READONLY: the node we reached is a replica now
            if is_cluster(self.client):  # a failover moved the slot: learn the new layout
                self.client.nodes_manager.initialize()
            raise redis.exceptions.ConnectionError(
                f"the write to game {game_id!r} did not reach the game's master ({exc}); "
                f"retry with the same command id"
            ) from exc
        except redis.exceptions.ResponseError as exc:
            if "UNBLOCKED" not in str(exc):
                raise
            raise ReplicaWaitTimeout(
                f"game {game_id!r}: the game's master stepped down while waiting for its "
                f"replica ({exc}); retry with the same command id"
            ) from exc

    def confirm_replicated(self, game_id: str) -> None:
        """With a ``ReplicaWait``: return only once the replicas hold everything the game's
        master holds, else ``ReplicaWaitTimeout``. For answering a command recorded before (a
        retry): its first attempt may be on the master alone, and ``WAIT`` after a write-less
        read would count only the connection's own earlier writes, so this writes a key of the
        game's slot (gone in a second) and waits for that."""
        if self.replica_wait is None:
            return
        wanted, seconds = self.replica_wait.replicas, self.replica_wait.timeout
        key = f"{self.prefix}:{{g:{game_id}}}:w"
        node_client = self.client
        if is_cluster(self.client):
            node_client = self.client.get_redis_connection(self.client.get_node_from_key(key))
        pipe = node_client.pipeline(transaction=False)
        pipe.set(key, 1, px=1000)
        pipe.execute_command("WAIT", wanted, max(1, int(seconds * 1000)))
        if int(self._execute_waiting(pipe, game_id)[1]) < wanted:
            raise ReplicaWaitTimeout(
                f"game {game_id!r}: the command was recorded before, but only on the master so "
                f"far (the replicas did not confirm within {seconds:g}s); retry with the same "
                f"command id"
            )

    def put_views(self, game_id: str, position: int, views: Mapping[str, str]) -> list[str]:
        check_game_id(game_id)
        check_views(views)
        if not isinstance(position, int) or position < 0:
            raise InvalidBatch(f"position {position!r} is invalid; pass the stream version (>= 0)")
        if not views:
            return []
        args: list[Any] = [position]
        for name, text in views.items():
            args.append(name)
            args.append(text)
        _stream, meta, _cmds, vkey = self.keys(game_id)
        reply = self._put_views(keys=[meta, vkey], args=args)
        tag = as_text(reply[0])
        if tag == "nogame":
            raise GameNotFound(game_id)
        if tag == "ahead":
            raise InvalidBatch(
                f"views of game {game_id!r} claim position {position} but the stream is at "
                f"{int(reply[1])}; compute views from events that are already stored"
            )
        return [as_text(n) for n in reply[1]]

    # -- compaction (events/store/compaction.py) --------------------------------------------------
    def compacted_key(self, game_id: str) -> str:
        """The hash holding a compacted game's ``log`` and ``views`` blobs (the game's slot)."""
        return f"{self.prefix}:{{g:{game_id}}}:z"

    def compact(self, game_id: str, hook: Any = None) -> int | None:
        """Replace a finished game's stream, command records and views by one compacted blob
        each for the log and the views (``events.store.compaction``); returns the log blob's size, or
        None if the game is not finished or already compacted. The summary view stays in the
        views hash too (with the game's TTL): the lobby lists it (``service.lobby``).

        Crash-safe: everything is read and the blobs checked to give back the stored log byte
        for byte before the one script that writes the blobs and deletes the originals, checking
        first that the game is still finished at the version read (all or nothing, like an
        append). ``hook(point)`` is called at ``"packed"`` (for the crash tests)."""
        check_game_id(game_id)
        stream, meta, _cmds, vkey = self.keys(game_id)
        pipe = self.client.pipeline(transaction=False)
        pipe.hmget(meta, ["version", "hash", "status", "compacted"])
        pipe.xrange(stream, "-", "+")
        pipe.hgetall(vkey)
        (version, head, status, compacted), page, raw_views = pipe.execute()
        if version is None:
            raise GameNotFound(game_id)
        if compacted is not None or as_text(status or b"") != "finished":
            return None
        texts = [as_text(_entry_text(fields)) for _id, fields in page]
        if len(texts) != int(version):
            return None  # read while an append landed (cannot happen once finished): next time
        log = compaction.pack(game_id, texts)
        views = compaction.pack_views({as_text(k): as_text(v) for k, v in raw_views.items()})
        if hook is not None:
            hook("packed")
        keys = [*self.keys(game_id), self.compacted_key(game_id)]
        # Ascii85 text: the blobs read back the same on clients with decode_responses on
        reply = self._compact(
            keys=keys, args=[int(version), base64.b85encode(log), base64.b85encode(views)]
        )
        return len(log) if as_text(reply[0]) == "ok" else None

    def archive(self, game_id: str, hook: Any = None) -> str | None:
        """Move a compacted game's blobs out of Redis into ``archive_dir`` (one file, written to
        a temporary name, fsynced, renamed, then the directory fsynced) and leave only its meta
        hash (``archived`` = the file name), summary view and lobby entry; returns the file's
        path, or None if the game is not compacted or already archived. Crash-safe: the blobs
        leave Redis only once the file is durable; a crash before that leaves at most a file
        that the next ``archive`` writes again. A game whose keys expire is recorded for
        ``expire_archives`` before its file is written, so the file cannot outlive the keys
        unnoticed. ``hook(point)``: ``"written"`` (the crash tests)."""
        if not self.archive_dir:
            raise StoreError("no archive directory: pass archive_dir or set RFG_ARCHIVE_DIR")
        check_game_id(game_id)
        meta, zkey = self.keys(game_id)[1], self.compacted_key(game_id)
        pipe = self.client.pipeline(transaction=False)
        pipe.hmget(meta, ["version", "hash", "compacted", "archived"])
        pipe.hmget(zkey, ["log", "views"])
        pipe.pttl(meta)
        (version, head, compacted, archived), (log, views), ttl = pipe.execute()
        if version is None:
            raise GameNotFound(game_id)
        if compacted is None or archived is not None or log is None or views is None:
            return None
        log_b, views_b = base64.b85decode(log), base64.b85decode(views)
        compaction.unpack(game_id, log_b, as_text(head))  # what goes to disk gives the log back
        name = self._archive_name(game_id)
        path = os.path.join(self.archive_dir, name)
        if int(ttl) > 0:  # the game expires: remembered before its file exists (expire_archives)
            self.client.zadd(self._archives, {game_id: time.time() + int(ttl) / 1000})
        os.makedirs(os.path.dirname(path), exist_ok=True)
        tmp = f"{path}.{os.getpid()}.tmp"
        with open(tmp, "wb") as f:
            f.write(compaction.archive_bytes(game_id, int(version), as_text(head), log_b, views_b))
            f.flush()
            os.fsync(f.fileno())
        os.replace(tmp, path)
        dir_fd = os.open(os.path.dirname(path), os.O_RDONLY)
        try:
            os.fsync(dir_fd)
        finally:
            os.close(dir_fd)
        if hook is not None:
            hook("written")
        reply = self._archive(keys=[meta, zkey], args=[int(version), name])
        if as_text(reply[0]) in ("ok", "done"):
            return path
        if not self._exists(game_id):  # it expired (or was deleted) while the file was written
            self._remove_archive(game_id)
        return None

    def _archive_name(self, game_id: str) -> str:
        """The archive file of a game, relative to ``archive_dir``."""
        return f"{self.prefix}/{game_id}.rfgz"

    def _remove_archive(self, game_id: str) -> bool:
        """Delete a game's archive file (if any) and forget it in ``<prefix>:archives``; False
        if the file could not be deleted (it stays remembered, tried again a minute later)."""
        assert self.archive_dir
        try:
            os.unlink(os.path.join(self.archive_dir, self._archive_name(game_id)))
        except FileNotFoundError:
            pass
        except OSError as exc:
            _log.warning("the archive of expired game %s could not be deleted: %s", game_id, exc)
            self.client.zadd(self._archives, {game_id: time.time() + 60})
            return False
        self.client.zrem(self._archives, game_id)
        return True

    def expire_archives(self, limit: int = 200) -> int:
        """Delete the archive files of games whose keys expired (``RFG_FINISHED_GAME_SECONDS``):
        Redis expires the keys silently, so ``archive`` remembers every game whose keys carry a
        TTL in the sorted set ``<prefix>:archives`` (game id -> when its keys expire) before it
        writes the file, and this pass (the workers' sweep) looks at up to ``limit`` games that
        are due: keys gone, the file is deleted; keys still there (a TTL renewed), looked at
        again when they expire; no TTL any more, forgotten. Games kept for good are never in
        the set. Returns how many games it forgot; 0 without an archive directory."""
        if not self.archive_dir:
            return 0
        now = time.time()
        # (a second early: the time recorded is taken after Redis started the keys' TTL, so the
        # keys may be gone a little before it; those still there are looked at again later)
        due = [
            as_text(g)
            for g in self.client.zrangebyscore(
                self._archives, "-inf", now + 1.0, start=0, num=limit
            )
        ]
        if not due:
            return 0
        pipe = self.client.pipeline(transaction=False)
        for gid in due:
            pipe.pttl(self.keys(gid)[1])
        done = 0
        later: dict[str, float] = {}
        for gid, ttl in zip(due, pipe.execute(), strict=True):
            if int(ttl) == -2:  # the keys are gone
                done += self._remove_archive(gid)
            elif int(ttl) == -1:  # kept for good now
                self.client.zrem(self._archives, gid)
                done += 1
            else:
                later[gid] = now + int(ttl) / 1000
        if later:
            self.client.zadd(self._archives, later, xx=True)
        return done

    def restore_summary(self, game_id: str) -> str | None:
        """The stored summary view (``"<position>:<json>"``) of a game compacted by a version
        that did not keep it in the views hash, read from its blob or archive and put back there
        (with the game's TTL) for the lobby; None if the game is not compacted."""
        views = self._compacted_views(game_id)
        if views is None or "summary" not in views:
            return None
        raw = views["summary"]
        _stream, meta, _cmds, vkey = self.keys(game_id)
        self._restore_summary(keys=[meta, vkey], args=[raw])
        return raw

    def _compacted_blobs(self, game_id: str) -> tuple[bytes, bytes, str] | None:
        """(log blob, views blob, head hash) of a compacted or archived game, else None."""
        meta = self.keys(game_id)[1]
        head, compacted, archived = self.client.hmget(meta, ["hash", "compacted", "archived"])
        if compacted is None:
            return None
        if archived is not None:
            if not self.archive_dir:
                raise StoreError(
                    f"game {game_id!r} is archived ({as_text(archived)}) but this process "
                    f"has no archive directory: set RFG_ARCHIVE_DIR"
                )
            with open(os.path.join(self.archive_dir, as_text(archived)), "rb") as f:
                _header, log, views = compaction.read_archive(f.read())
            return log, views, as_text(head)
        log, views = self.client.hmget(self.compacted_key(game_id), ["log", "views"])
        if log is None or views is None:
            return None
        return base64.b85decode(log), base64.b85decode(views), as_text(head)

    def _compacted_log(self, game_id: str) -> list[str] | None:
        blobs = self._compacted_blobs(game_id)
        if blobs is None:
            return None
        key = (game_id, blobs[2])
        texts = self._unpacked.get(key)
        if texts is None:
            texts = compaction.unpack(game_id, blobs[0], blobs[2])
            self._unpacked[key] = texts
            while len(self._unpacked) > _UNPACKED_CACHE:
                self._unpacked.popitem(last=False)
        return texts

    def _compacted_views(self, game_id: str) -> dict[str, str] | None:
        blobs = self._compacted_blobs(game_id)
        return None if blobs is None else compaction.unpack_views(blobs[1])

    # -- reading ----------------------------------------------------------------------------
    def read(self, game_id: str, after: int = 0, limit: int | None = None) -> list[Envelope]:
        check_game_id(game_id)
        if after < 0 or (limit is not None and limit < 0):
            raise ValueError("after and limit must be >= 0")
        stream = self.keys(game_id)[0]
        out: list[Envelope] = []
        start = after + 1
        while limit is None or len(out) < limit:
            want = _READ_PAGE if limit is None else min(_READ_PAGE, limit - len(out))
            if want == 0:
                break
            page = self.client.xrange(stream, f"{start}-0", "+", count=want)
            if not page and not out:
                texts = self._compacted_log(game_id)
                if texts is not None:  # a compacted game: served from its blob
                    stop = None if limit is None else after + limit
                    out = [Envelope.from_json(t) for t in texts[after:stop]]
                    break
            for _id, fields in page:
                out.append(Envelope.from_json(_entry_text(fields)))
            if len(page) < want:
                break
            start = out[-1].seq + 1
        if not out and not self._exists(game_id):
            raise GameNotFound(game_id)
        return out

    def version(self, game_id: str) -> int:
        check_game_id(game_id)
        raw = self.client.hget(self.keys(game_id)[1], "version")
        return int(raw) if raw is not None else 0

    def head(self, game_id: str) -> StreamHead:
        check_game_id(game_id)
        version, last_hash = self.client.hmget(self.keys(game_id)[1], ["version", "hash"])
        if version is None:
            return StreamHead(0, GENESIS_HASH)
        return StreamHead(int(version), as_text(last_hash))

    def command_result(self, game_id: str, command_id: str) -> AppendResult | None:
        check_game_id(game_id)
        check_command_id(command_id)
        raw = self.client.hget(self.keys(game_id)[2], command_id)
        if raw is None:
            texts = self._compacted_log(game_id)
            if texts is not None:  # the command records are the envelopes' command ids
                seqs = [
                    i + 1
                    for i, t in enumerate(texts)
                    if Envelope.from_json(t).command_id == command_id
                ]
                if seqs:
                    raw = f"{seqs[0]}:{seqs[-1]}"
        return None if raw is None else _parse_result(game_id, command_id, raw, duplicate=True)

    def catch_up(
        self, game_id: str, after: int, command_id: str | None = None
    ) -> tuple[AppendResult | None, list[Envelope], int]:
        check_game_id(game_id)
        if command_id is not None:
            check_command_id(command_id)
        stream, meta, cmds, _views = self.keys(game_id)
        reply = self._catch_up(
            keys=[meta, stream, cmds], args=[after, _READ_PAGE, command_id or ""]
        )
        if reply[0] is None:
            raise GameNotFound(game_id)
        raw_version, raw, *page = reply
        previous = None
        if command_id is not None and raw is not None:
            previous = _parse_result(game_id, command_id, raw, duplicate=True)
        if not page and int(raw_version) > after:
            texts = self._compacted_log(game_id)
            if texts is not None:  # a compacted game: served from its blob
                if command_id is not None:
                    previous = self.command_result(game_id, command_id)
                out = [Envelope.from_json(t) for t in texts[after:]]
                return previous, out, int(raw_version)
        out = [Envelope.from_json(text) for text in page]
        if len(page) == _READ_PAGE:  # a long way behind: read the rest page by page
            out += self.read(game_id, after=out[-1].seq)
        return previous, out, int(raw_version)

    def get_view(self, game_id: str, name: str) -> tuple[int, str] | None:
        check_game_id(game_id)
        raw = self.client.hget(self.keys(game_id)[3], name)
        if raw is None:
            views = self._compacted_views(game_id)
            if views is not None:
                raw = views.get(name)
            elif not self._exists(game_id):
                raise GameNotFound(game_id)
            if raw is None:
                return None
        pos, _, text = as_text(raw).partition(":")
        return int(pos), text

    def view_read(self, game_id: str, name: str) -> StoredView:
        """``get_view``'s read, not sent yet: to ride in another owner's round trip
        (``events.store.limits.Read``: an event stream's opening reads the game's summary in
        the round trip that counts its limits) or to run alone (``StoredView.run``)."""
        check_game_id(game_id)
        return StoredView(self, game_id, name)

    def views_at(
        self, game_id: str, names: Sequence[str]
    ) -> tuple[int, list[tuple[int, str] | None]]:
        check_game_id(game_id)
        _stream, meta, _cmds, vkey = self.keys(game_id)
        pipe = self.client.pipeline(transaction=False)
        pipe.hget(meta, "version")
        pipe.hmget(vkey, list(names))
        raw_version, raws = pipe.execute()
        if raw_version is None:
            raise GameNotFound(game_id)
        if any(raw is None for raw in raws):  # (a compacted game keeps only its summary here)
            views = self._compacted_views(game_id)
            if views is not None:
                raws = [
                    views.get(n) if raw is None else raw for n, raw in zip(names, raws, strict=True)
                ]
        return int(raw_version), _stored_views(raws)

    def list_games(self, status: str | None = None, limit: int = 100) -> list[GameEntry]:
        if status is None:
            rows = self.client.zrevrange(self._lobby, 0, max(limit, 1) - 1)
        else:
            rows = self.client.zrevrange(self._lobby, 0, -1)
        ids = [as_text(r) for r in rows]
        pipe = self.client.pipeline(transaction=False)
        for gid in ids:
            pipe.hmget(self.keys(gid)[1], ["created", "status", "version"])
        out: list[GameEntry] = []
        for gid, (created, st, version) in zip(ids, pipe.execute(), strict=True):
            st_s = None if st is None else as_text(st)
            if status is not None and st_s != status:
                continue
            created_s = "" if created is None else as_text(created)
            out.append(GameEntry(gid, created_s, st_s, int(version) if version else 0))
            if len(out) >= limit:
                break
        return out

    # -- the reads of the API's event streams (``service.decisions``) -------------------------
    def versions(self, game_ids: Sequence[str]) -> list[int | None]:
        """Each game's version (None: no such game), one pipelined ``HGET`` per game."""
        if not game_ids:
            return []
        pipe = self.client.pipeline(transaction=False)
        for gid in game_ids:
            pipe.hget(self.keys(gid)[1], "version")
        return [None if raw is None else int(as_text(raw)) for raw in pipe.execute()]

    def newest_notice(self, name: str) -> str:
        """The id of the newest notice for ``name`` (``"0-0"`` when there is none): reading after
        it gives the notices written from now on."""
        newest = self.client.xrevrange(self.notice_stream(name), count=1)
        return as_text(newest[0][0]) if newest else "0-0"

    def notice_retained(self, name: str, entry_id: str) -> bool:
        """Whether the notice ``entry_id`` (an entry id) is still kept for ``name`` (the stream
        keeps about ``NOTICE_MAXLEN``): reading after it then misses nothing."""
        return bool(self.client.xrange(self.notice_stream(name), entry_id, entry_id, count=1))

    def read_notices(
        self, name: str, after: str, count: int = 100
    ) -> list[tuple[str, dict[str, Any]]]:
        """Up to ``count`` notices for ``name`` written after the id ``after``, oldest first: (id,
        fields), field names as text."""
        got = self.client.xread({self.notice_stream(name): after}, count=count)
        return [
            (as_text(entry_id), {as_text(k): v for k, v in fields.items()})
            for _stream, entries in got or []
            for entry_id, fields in entries
        ]


class StoredView:
    """A read of one stored view (``RedisStore.view_read``): its one command, queued on a
    pipeline, answers it as ``get_view`` does; a view found in no hash (a compacted game, or
    none) is read by ``get_view`` itself, which also tells an unknown game (``GameNotFound``)."""

    def __init__(self, store: RedisStore, game_id: str, name: str) -> None:
        self.store, self.game_id, self.name = store, game_id, name

    def queue(self, pipe: Any) -> int:
        pipe.hget(self.store.keys(self.game_id)[3], self.name)
        return 1

    def answer(self, replies: Sequence[Any]) -> tuple[int, str] | None:
        raw = replies[0]
        if raw is None:
            return self.store.get_view(self.game_id, self.name)
        pos, _, text = as_text(raw).partition(":")
        return int(pos), text

    def run(self) -> tuple[int, str] | None:
        """The read on its own (one round trip)."""
        pipe = self.store.client.pipeline(transaction=False)
        self.queue(pipe)
        return self.answer(pipe.execute())


class StreamWatch:
    """The reads of the process's one reader of the streams its event streams wait on
    (``service.fanout``): games' streams (``RedisStore.keys(id)[0]``) and accounts' notices
    (``RedisStore.notice_stream``), on the reader's own client (on a single Redis, one whose
    socket timeout exceeds the longest block)."""

    def __init__(self, client: Any) -> None:
        self.client = client

    def moved(self, after: Mapping[str, str], block_ms: int) -> list[str]:
        """The streams of ``after`` that hold an entry past the id given for each, waiting up to
        ``block_ms`` for one: one ``XREAD BLOCK`` over them all. A single Redis only (a cluster's
        ``XREAD`` cannot name keys of different slots: poll ``newest`` there)."""
        got = self.client.xread(dict(after), count=1, block=block_ms)
        return [as_text(stream) for stream, _entries in got or []]

    def newest(self, streams: Sequence[str]) -> dict[str, str]:
        """The id of each stream's newest entry (a stream without one is left out): one pipelined
        ``XREVRANGE ... COUNT 1`` per stream, one round trip per node of a cluster."""
        pipe = self.client.pipeline(transaction=False)
        for stream in streams:
            pipe.xrevrange(stream, count=1)
        return {
            stream: as_text(entries[0][0])
            for stream, entries in zip(streams, pipe.execute(), strict=True)
            if entries
        }
