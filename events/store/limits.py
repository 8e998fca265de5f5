"""The rate limits' storage: the keys of the API's counters and the scripts that count them.

Every key starts with ``<prefix>:limits:`` on the store's Redis (its fakeredis for a ``memory://``
store); ``service.limits`` decides which limits apply to a request and how a refusal is answered,
and reaches these keys only through ``RateLimitStore``:

* ``<prefix>:limits:{<owner>}:<name>:<quota>/<multiples>/<unit>`` and ``.../-1``: a sliding-window
  counter's current and previous window (strings with a TTL). ``<owner>`` is whose it is
  (``address:<a>``, ``token:<sha256 prefix>``, a bot token's ``...:g:<game id>``): the hash tag,
  so on a Redis Cluster the counters of one owner share a slot and one script call counts them;
* ``<prefix>:limits:{streams}:<owner>`` (``:own`` for an address's streams without a token) and
  ``<prefix>:limits:{streams}:address:<a>``: sorted sets of open event streams scored by when
  they end at the latest;
* ``<prefix>:limits:open-games:<a>``: sorted set of the games an address created, by when.

The counting is limits' sliding-window counter as its Redis storage does it: per counter a current
window (expiring after two windows) and the previous one, the current shifted to the previous once
less than a window of it is left, a hit accepted while ``floor(previous * its ttl / window) +
current`` leaves room (``SLIDING_WINDOW_LUA``).

Another owner's read may ride in the counting's round trip (``count(..., beside=read)``): the API
checks a command's seat token that way, in the pipeline that counts its limits.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any, Protocol, TypeVar

import redis

from events.store.text import text

T = TypeVar("T")
T_co = TypeVar("T_co", covariant=True)

#: Sliding-window counters checked in order, in one call. KEYS: per counter its previous window's
#: key, its current one's. ARGV[1]: '1' to stop at the first counter that refuses ('0': go on);
#: then per counter: 'h' (hit: count 1 if there is room) or 't' (test: is there room? counting
#: nothing), its quota, its window in seconds. Answers {the first counter that refused (1-based,
#: 0: none), then per counter checked: previous count, previous ttl ms, current count, current
#: ttl ms} - the window after the hit, as limits' ``sliding_window.lua`` reads it. Per counter it
#: is limits' ``acquire_sliding_window.lua`` (a hit) or ``sliding_window.lua`` and its strategy's
#: ``test`` (a test): the same keys, counts, expiries and shifts.
SLIDING_WINDOW_LUA = """
local stop = ARGV[1] == '1'
local out = {0}
for i = 1, #KEYS / 2 do
  local previous, current = KEYS[2 * i - 1], KEYS[2 * i]
  local op, quota = ARGV[3 * i - 1], tonumber(ARGV[3 * i])
  local window = tonumber(ARGV[3 * i + 1])
  local expiry = window * 1000
  local current_ttl = tonumber(redis.call('pttl', current))
  if current_ttl > 0 and current_ttl < expiry then
    -- less than a window left of the current one: it becomes the previous one
    redis.call('rename', current, previous)
    redis.call('set', current, 0, 'PX', current_ttl + expiry)
  end
  local previous_count = tonumber(redis.call('get', previous)) or 0
  local previous_ttl = tonumber(redis.call('pttl', previous))
  local current_count = tonumber(redis.call('get', current)) or 0
  current_ttl = tonumber(redis.call('pttl', current))
  local weight_ttl = math.max(previous_ttl, 0)
  local room
  if op == 'h' then
    room = math.floor(previous_count * weight_ttl / expiry) + current_count + 1 <= quota
    if room then
      if current_ttl == -2 then
        redis.call('set', current, 1, 'PX', expiry * 2)
        current_count, current_ttl = 1, expiry * 2
      else
        current_count = redis.call('incrby', current, 1)  -- (its expiry unchanged)
      end
    end
  else
    room = previous_count * (weight_ttl / 1000) / window + current_count < quota
  end
  local n = #out
  out[n + 1], out[n + 2], out[n + 3], out[n + 4] =
    previous_count, previous_ttl, current_count, current_ttl
  if not room then
    if out[1] == 0 then out[1] = i end
    if stop then break end
  end
end
return out
"""

ACQUIRE_STREAM_LUA = """
-- KEYS: open streams of the token, of the address   ARGV: now, until, member, cap 1, cap 2
for i = 1, 2 do redis.call('ZREMRANGEBYSCORE', KEYS[i], '-inf', ARGV[1]) end
if redis.call('ZCARD', KEYS[1]) >= tonumber(ARGV[4]) then return 1 end
if redis.call('ZCARD', KEYS[2]) >= tonumber(ARGV[5]) then return 2 end
local ttl = math.ceil(tonumber(ARGV[2]) - tonumber(ARGV[1])) + 1
for i = 1, 2 do
  redis.call('ZADD', KEYS[i], ARGV[2], ARGV[3])
  redis.call('EXPIRE', KEYS[i], ttl)
end
return 0
"""


@dataclass(frozen=True, slots=True)
class Count:
    """One sliding-window counter to check: whose it is (``address:<a>``, ``token:<digest>``:
    its hash tag), the rest of its key (``:<name>:<quota>/<multiples>/<unit>``), whether a check
    counts (a hit) or only tests, its quota and its window in seconds."""

    owner: str
    tail: str
    hit: bool
    quota: int
    window: int


#: a counter's window as the script answers it: (previous count, its ttl ms, current count, its
#: ttl ms); a ttl below 0 means no key
WindowReply = tuple[int, int, int, int]


class Read(Protocol[T_co]):
    """Another owner's read sent in the counting's round trip: ``queue`` adds its commands to a
    pipeline and says how many; ``answer`` reads their replies, in order."""

    def queue(self, pipe: Any) -> int: ...

    def answer(self, replies: Sequence[Any]) -> T_co: ...


class RateLimitStore:
    """The counters, open streams and open games of the API's limits on one Redis client."""

    def __init__(self, client: Any, prefix: str) -> None:
        self.client = client
        self.base = f"{prefix}:limits"
        self.cluster = isinstance(client, redis.RedisCluster)
        self._count = client.register_script(SLIDING_WINDOW_LUA)
        self._acquire_stream = client.register_script(ACQUIRE_STREAM_LUA)

    # --- sliding-window counters -----------------------------------------------------------
    def key(self, owner: str, tail: str) -> str:
        """A counter's current window (its previous one: this + ``/-1``)."""
        return f"{self.base}:{{{owner}}}{tail}"

    def count(
        self, counts: Sequence[Count], stop: bool = True, beside: Read[T] | None = None
    ) -> tuple[list[WindowReply], int | None, T | None]:
        """Check the counters in order (hits count, tests do not), stopping at the first that
        refuses when ``stop``: (the window of each counter checked, the index of the first that
        refused, ``beside``'s answer). One script call on one Redis, with ``beside`` in the same
        pipeline; on a cluster one call per owner (a script's keys share a slot), in order, then
        ``beside`` on its own."""
        if not self.cluster:
            if beside is None:
                return (*self._windows(self._count(*self._call(counts, stop))), None)
            got, answer = self._with(counts, stop, beside)
            return (*self._windows(got), answer)
        windows: list[WindowReply] = []
        refused: int | None = None
        for group in _by_owner(counts):
            seen, first = self._windows(self._count(*self._call(group, stop)))
            if first is not None and refused is None:
                refused = len(windows) + first
            windows += seen
            if refused is not None and stop:
                break
        return windows, refused, None if beside is None else self.read(beside)

    def read(self, read: Read[T]) -> T:
        """Another owner's read on its own (one round trip)."""
        pipe = self.client.pipeline(transaction=False)
        read.queue(pipe)
        return read.answer(pipe.execute())

    def _call(self, counts: Sequence[Count], stop: bool) -> tuple[list[str], list[Any]]:
        keys: list[str] = []
        args: list[Any] = ["1" if stop else "0"]
        for c in counts:
            key = self.key(c.owner, c.tail)
            keys += (key + "/-1", key)
            args += ("h" if c.hit else "t", c.quota, c.window)
        return keys, args

    def _with(self, counts: Sequence[Count], stop: bool, beside: Read[T]) -> tuple[Any, T]:
        """The counting script and ``beside``'s commands in one pipeline. EVALSHA directly: a
        pipeline holding a ``Script`` would first ask SCRIPT EXISTS (a round trip)."""
        keys, args = self._call(counts, stop)
        for attempt in (1, 2):
            pipe = self.client.pipeline(transaction=False)
            pipe.evalsha(self._count.sha, len(keys), *keys, *args)
            beside.queue(pipe)
            replies = pipe.execute(raise_on_error=False)
            if isinstance(replies[0], redis.exceptions.NoScriptError) and attempt == 1:
                self.client.script_load(SLIDING_WINDOW_LUA)  # a restarted or flushed server
                continue
            for reply in replies:
                if isinstance(reply, BaseException):
                    raise reply
            return replies[0], beside.answer(replies[1:])
        raise redis.exceptions.NoScriptError("the counting script could not be loaded")

    @staticmethod
    def _windows(got: Sequence[Any]) -> tuple[list[WindowReply], int | None]:
        windows = [
            (int(got[j]), int(got[j + 1]), int(got[j + 2]), int(got[j + 3]))
            for j in range(1, len(got), 4)
        ]
        return windows, (int(got[0]) - 1 if got[0] else None)

    # --- open streams ----------------------------------------------------------------------
    def _stream_keys(self, owner: str, address: str) -> list[str]:
        mine = f"{self.base}:{{streams}}:{owner}"
        if owner.startswith("address:"):
            mine += ":own"  # the address's own cap (no token) next to its overall cap
        return [mine, f"{self.base}:{{streams}}:address:{address}"]

    def acquire_stream(
        self, owner: str, address: str, member: str, now: float, until: float, caps: list[int]
    ) -> int:
        """Hold a place for an open stream (``member``) of ``owner`` and of ``address`` until
        ``until`` at the latest: 0, or which cap (1: the owner's, 2: the address's) is full."""
        keys = self._stream_keys(owner, address)
        return int(self._acquire_stream(keys=keys, args=[now, until, member, *caps]))

    def release_stream(self, owner: str, address: str, member: str) -> None:
        """Free a stream's place (else it frees itself at the time it was held until)."""
        pipe = self.client.pipeline(transaction=False)
        for key in self._stream_keys(owner, address):
            pipe.zrem(key, member)
        pipe.execute()

    # --- open games ------------------------------------------------------------------------
    def _open_key(self, address: str) -> str:
        return f"{self.base}:open-games:{address}"

    def open_games(self, address: str, store: Any, cap: int) -> int:
        """How many of the games ``address`` created are unfinished: below ``cap`` the count
        kept; from ``cap`` on, the games over or gone (their meta hash in ``store``, the game
        store, says so) are no longer counted, and the rest is."""
        key = self._open_key(address)
        ids = [text(g) for g in self.client.zrange(key, 0, -1)]
        if len(ids) < cap:
            return len(ids)
        pipe = self.client.pipeline(transaction=False)
        for gid in ids:
            pipe.hget(store.keys(gid)[1], "status")
        closed = [
            gid
            for gid, status in zip(ids, pipe.execute(), strict=True)
            if status is None or text(status) == "finished"
        ]
        if closed:
            self.client.zrem(key, *closed)
        return len(ids) - len(closed)

    def open_game(self, address: str, game_id: str, now: float, keep_seconds: int) -> None:
        """Count a game ``address`` created; the set expires ``keep_seconds`` after its last."""
        key = self._open_key(address)
        pipe = self.client.pipeline(transaction=False)
        pipe.zadd(key, {game_id: now})
        pipe.expire(key, keep_seconds)
        pipe.execute()


def _by_owner(counts: Sequence[Count]) -> list[list[Count]]:
    """Runs of counters of one owner (one slot on a cluster), in order."""
    runs: list[list[Count]] = []
    for c in counts:
        if runs and runs[-1][-1].owner == c.owner:
            runs[-1].append(c)
        else:
            runs.append([c])
    return runs
