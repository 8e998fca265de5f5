"""Limits against abuse, kept on the event store's Redis (its fakeredis for a ``memory://`` store).

* **Rates** (sliding-window counters): every request of one client address
  (``LIMIT_PER_ADDRESS``; ``/healthz`` and ``/readyz`` excepted), and per endpoint: game creation,
  bot registration, seat claims and token rotations (per address), commands, stream opens and
  samples (per token, per address without one; a bot token's per game: ``route_owner``), replay
  uploads (per address). Counters live under
  ``<prefix>:limits:`` on the app's Redis.
* **Bad tokens**: a request that carried a token and got 401 or 403 counts against
  ``LIMIT_BAD_TOKENS`` of its address; past it every request with a token gets 429 until the
  window has passed (3,000 guesses no longer get 3,000 answers).
* **Concurrent streams**: at most ``MAX_STREAMS_PER_TOKEN`` open SSE streams per token (per
  address without one) and ``MAX_STREAMS_PER_ADDRESS`` per address: a sorted set of open streams
  scored by when they end at the latest (a stream whose process died frees its place then).
* **Open games**: at most ``MAX_OPEN_GAMES_PER_ADDRESS`` unfinished games created by one address
  (a sorted set per address; finished and expired games leave it).

A limit that is hit answers 429 problem+json with ``Retry-After`` (seconds); responses carry the
tightest limit that applied as ``RateLimit-Policy: "<name>";q=<quota>;w=<window s>`` and
``RateLimit: "<name>";r=<remaining>;t=<seconds to reset>`` (IETF draft RateLimit header fields):
the one that refused, else of the route's and the per-address ones the one with the least left
(the route's of equals), so a client that waits ``t`` seconds once ``r`` is 0 meets no 429.
The admin token is exempt. ``RATE_LIMITS=False`` (``RFG_RATE_LIMITS=0``) turns all of it off.
When the counters cannot be written (the store down, or refusing writes: full, read-only, failing
its disk, too few replicas; ``events.store.outage``) the request answers 503 ``store-unavailable`` with
``Retry-After`` (``service.errors``): no limit is skipped, and the counting fails first, so a
full store refuses reads too while limits are on.
The client address is the peer's, or with ``PROXY_HOPS=N`` the one N trusted proxies forwarded.

This module owns the rate limiting whole: which limits apply to a request, their counters' keys,
the script that counts them (``SLIDING_WINDOW_LUA``), the 429 answers and the headers. Of the
``limits`` library it uses the parser of limit strings only (``parse_many``, ``RateLimitItem``).
The counting is limits' sliding-window counter, as its Redis storage does it: per counter a current
window (expiring after two windows) and the previous one (``<key>/-1``), the current shifted to
the previous once less than a window of it is left, a hit accepted while
``floor(previous * its ttl / window) + current`` leaves room, and remaining / reset read as its
``get_window_stats`` reads them.

**Cost: one Redis round trip a request** (none for the admin, nor for a health check or an
unknown URL without a token; see below for a cluster). Before the view, one ``EVALSHA`` takes every limit that
applies - the per-address one, the bad-token window when the request carries a token, the
route's - and checks them in that order, hitting each rate and stopping at the first that
refuses: a refused request consumes what it did when Flask-Limiter counted them (the per-address limit when
the bad-token lockout or the route's limit refuses it; of a limit of several rates, the shorter
windows before the one that refused). The script answers each window it checked, so the
``RateLimit`` headers need no read. A request answered 401 or 403 that carried a token makes a
second, after the answer: its bad-token count. Counters are hash-tagged by whose they are
(``<prefix>:limits:{address:<a>}:<name>:<quota>/<n>/<unit>``, ``{token:<sha256 prefix>}``), so
on Redis Cluster, where a script's keys must share a slot, a request makes one call per owner:
one, except a per-token route with its token (commands, stream opens, samples: two, its
address's limits, then, if they let it through, its token's; unavoidable, the two counters are
independent and live where their owners hash).
"""

from __future__ import annotations

import hashlib
import hmac
import math
import time
import uuid
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass
from typing import Any

import redis
from flask import Flask, Response, current_app, g, request
from limits import RateLimitItem, parse_many
from werkzeug.middleware.proxy_fix import ProxyFix

from events.store.outage import is_outage
from events.store.port import Gate
from events.store.text import text
from service.errors import Problem

#: a bot account's token starts so (``service.accounts.TOKEN_PREFIX``)
BOT_TOKEN_PREFIX = "rfgb_"
#: endpoints outside the per-address limit (monitoring)
EXEMPT = frozenset({"health.healthz", "health.readyz"})
#: endpoint -> (config key, limit name, whose: "address" or "token")
ROUTE_LIMITS: dict[str, tuple[str, str, str]] = {
    "games.create_game": ("LIMIT_CREATE_GAME", "create-game", "address"),
    "accounts.register": ("LIMIT_REGISTER_BOT", "register-bot", "address"),
    "seats.claim": ("LIMIT_CLAIM", "claims", "address"),
    "seats.rotate_token": ("LIMIT_CLAIM", "claims", "address"),
    "commands.submit": ("LIMIT_COMMANDS", "commands", "token"),
    "logs.verify": ("LIMIT_REPLAY_UPLOADS", "replay-uploads", "address"),
    "events.public_stream": ("LIMIT_STREAM_OPENS", "streams", "token"),
    "events.seat_stream": ("LIMIT_STREAM_OPENS", "streams", "token"),
    "accounts.decisions": ("LIMIT_STREAM_OPENS", "streams", "token"),
    "samples.samples": ("LIMIT_SAMPLES", "samples", "token"),
}
#: the name the general limit goes by in RateLimit headers and problems
GENERAL = "per-address"
#: the name of the refused-token window
BAD_TOKENS = "bad-tokens"

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

#: views whose limits their append counts where the store can (``Limits.gates``): the counting
#: script runs in the append's script, first (one round trip a command instead of two)
GATED = frozenset({"commands.submit"})
#: the counting script as a gate: it lets the append go on when its first element is 0
WINDOW_GATE = SLIDING_WINDOW_LUA
#: where a request keeps its counting left to its append: ((checks, #general, #general+#bad), gate)
_DEFERRED = "rfg_limit_deferred"
#: where a request keeps its (bearer token, is admin)
_AUTH = "rfg_limit_auth"
#: where a request keeps the rate its RateLimit headers report (a ``Seen``)
_SEEN = "rfg_limit_seen"

#: a counter's window: (previous count, its ttl s, current count, its ttl s)
Window = tuple[int, float, int, float]


@dataclass(frozen=True)
class Rate:
    """One rate of a limit (``"20 per minute"`` of ``"20 per minute;200 per hour"``)."""

    name: str  # the limit's, as the headers and problems give it
    item: RateLimitItem
    whose: str  # "address", or "token" (per address without one)
    tail: str  # its counter's key after the owner: ":<name>:<quota>/<multiples>/<unit>"


def rates(name: str, spec: str, whose: str = "address", ordered: bool = True) -> tuple[Rate, ...]:
    """The rates of a limit string, by window (shortest first, as they are checked) or as given."""
    items = parse_many(spec)
    if ordered:
        items = sorted(items, key=lambda i: i.GRANULARITY.seconds)  # (a stable sort)
    return tuple(
        Rate(name, i, whose, f":{name}:{i.amount}/{i.multiples}/{i.GRANULARITY.name}")
        for i in items
    )


def stats(item: RateLimitItem, window: Window) -> tuple[float, int]:
    """(when the window next frees a place, places remaining): limits' ``get_window_stats``."""
    previous, previous_ttl, current, current_ttl = window
    expiry = item.get_expiry()
    remaining = max(0, item.amount - math.floor(previous * previous_ttl / expiry + current))
    now = time.time()
    if not (previous or current):
        return now, remaining
    previous_reset = previous_ttl % (expiry / previous) if previous else math.inf
    current_reset = current_ttl % expiry if current else math.inf
    return now + min(previous_reset, current_reset), remaining


def aged(window: Window, expiry: int, seconds: float) -> Window:
    """``window`` as a read ``seconds`` later would see it (the current window shifted to the
    previous one if less than a window of it is left then)."""
    previous, previous_ttl, current, current_ttl = window
    previous_ttl, current_ttl = previous_ttl - seconds, current_ttl - seconds
    if previous_ttl <= 0:  # the previous window's key expired
        previous, previous_ttl = 0, 0.0
    if current_ttl <= 0:
        current, current_ttl = 0, 0.0
    elif current_ttl < expiry:
        previous, previous_ttl = current, current_ttl
        current, current_ttl = 0, current_ttl + expiry
    return previous, previous_ttl, current, current_ttl


@dataclass
class Seen:
    """A rate a request checked, the window the check answered and when (``time.time()``)."""

    rate: Rate
    window: Window
    then: float
    _stats: tuple[float, int] | None = None

    def stats(self) -> tuple[float, int]:
        """(reset time, remaining) read once (the 429 and the headers give the same)."""
        if self._stats is None:
            expiry = self.rate.item.get_expiry()
            now = aged(self.window, expiry, max(0.0, time.time() - self.then))
            self._stats = stats(self.rate.item, now)
        return self._stats

    def reset_at(self) -> int:
        """The whole second after the reset (what the headers count down to)."""
        return int(self.stats()[0] + 1)


#: one counter to check: (its rate, whose it is ("address:<a>" / "token:<digest>"), 'h' or 't')
Check = tuple[Rate, str, str]


class Counters:
    """The sliding-window counters on a store's Redis: ``run`` checks any number of them in one
    script call (on a cluster: one per owner, the keys of each sharing its hash tag)."""

    def __init__(self, client: Any, prefix: str) -> None:
        self.prefix = f"{prefix}:limits"
        self.cluster = isinstance(client, redis.RedisCluster)
        self.script = client.register_script(SLIDING_WINDOW_LUA)

    def key(self, owner: str, rate: Rate) -> str:
        return f"{self.prefix}:{{{owner}}}{rate.tail}"

    def run(self, checks: Sequence[Check], stop: bool = True) -> tuple[list[Seen], int | None]:
        """Check the counters in order (hits count, tests do not), stopping at the first that
        refuses when ``stop``: (what each checked answered, the index of the first refused)."""
        if not checks:
            return [], None
        groups: list[Sequence[Check]] = [checks]
        if self.cluster:  # one call per owner (per slot), in the same order
            runs: list[list[Check]] = []
            for check in checks:
                if runs and runs[-1][-1][1] == check[1]:
                    runs[-1].append(check)
                else:
                    runs.append([check])
            groups = list(runs)
        seen: list[Seen] = []
        refused: int | None = None
        for group in groups:
            keys, args = self.call(group, stop)
            got = self.script(keys, args)
            start = len(seen)
            seen += self.answered(group, got)
            if got[0] and refused is None:
                refused = start + int(got[0]) - 1
                if stop:
                    break
        return seen, refused

    def call(self, group: Sequence[Check], stop: bool = True) -> tuple[list[str], list[Any]]:
        """The script's keys and arguments for ``group`` (counters of one owner on a cluster)."""
        keys: list[str] = []
        args: list[Any] = ["1" if stop else "0"]
        for rate, owner, op in group:
            key = self.key(owner, rate)
            keys += (key + "/-1", key)
            args += (op, rate.item.amount, rate.item.get_expiry())
        return keys, args

    def answered(self, group: Sequence[Check], got: Sequence[Any]) -> list[Seen]:
        """The windows the script answered for the counters of ``group`` it checked."""
        then = time.time()
        seen = []
        for j in range(1, len(got), 4):
            previous, previous_ttl, current, current_ttl = got[j : j + 4]
            window = (
                int(previous),
                max(0, previous_ttl) / 1000,
                int(current),
                max(0, current_ttl) / 1000,
            )
            seen.append(Seen(group[(j - 1) // 4][0], window, then))
        return seen


def client_address() -> str:
    return request.remote_addr or "unknown"


def _auth() -> tuple[str | None, bool]:
    """(the request's bearer token, whether it is the admin token), worked out once a request
    (the check, the bad-token count and the keys ask)."""
    ctx_g = g._get_current_object()
    got: tuple[str | None, bool] | None = ctx_g.get(_AUTH)
    if got is None:
        # the Authorization header, where request.headers reads it
        raw = request.environ.get("HTTP_AUTHORIZATION", "")
        scheme, _, token = raw.strip().partition(" ")
        bearer = token.strip() or None if scheme.lower() == "bearer" else None
        admin = current_app.config.get("ADMIN_TOKEN")
        is_admin = bool(admin and bearer) and hmac.compare_digest(
            bearer.encode("utf-8", "surrogatepass"),  # type: ignore[union-attr]
            str(admin).encode(),
        )
        got = ctx_g.__dict__[_AUTH] = (bearer, is_admin)
    return got


def _token() -> str | None:
    return _auth()[0]


def client_key() -> str:
    """The token's digest when the request carries one, else the address."""
    token = _token()
    if token:
        return "token:" + hashlib.sha256(token.encode("utf-8", "surrogatepass")).hexdigest()[:32]
    return "address:" + client_address()


def route_owner() -> str:
    """Whose a per-token route's counters are (``ROUTE_LIMITS``' ``"token"``): the token's (the
    address's without one), and a bot token's per game: in each game it acts for one seat, as a
    seat token does for its one, so a bot playing game after game (its challenges, a ladder's
    games) has a seat token's quota in each rather than one quota for all."""
    owner = client_key()
    game = (request.view_args or {}).get("game_id")
    token = _token()
    if game and token and token.startswith(BOT_TOKEN_PREFIX):
        owner += f":g:{game}"
    return owner


def _is_admin() -> bool:
    return _auth()[1]


def _retry_after(reset_at: float) -> int:
    return max(1, math.ceil(reset_at - time.time()))


def _automatic_options() -> bool:
    """An OPTIONS request Flask answers itself, never calling the view."""
    rule = request.url_rule
    return request.method == "OPTIONS" and bool(getattr(rule, "provide_automatic_options", False))


def _too_many(refusal: Seen) -> Problem:
    """The 429 of a rate that refused a request (the per-address limit or the route's)."""
    item, name = refusal.rate.item, refusal.rate.name
    wait = _retry_after(refusal.reset_at())
    whose = (
        "this token"
        if client_key().startswith("token:") and name in ("commands", "streams")
        else f"address {client_address()}"
    )
    owner = route_owner()
    if whose == "this token" and ":g:" in owner:
        whose = f"this bot token, in game {owner.rpartition(':g:')[2]},"
    return Problem(
        "rate-limited",
        f"too many requests: {whose} may make {item.amount} per {_window(item)} "
        f"({name}); retry after {wait} s",
        headers={"Retry-After": str(wait)},
        limit=name,
        retry_after=wait,
    )


def _locked_out(refusal: Seen) -> Problem:
    """The 429 of a request with a token from an address past its refused tokens' limit."""
    addr, item = client_address(), refusal.rate.item
    wait = _retry_after(refusal.stats()[0])
    return Problem(
        "rate-limited",
        f"too many requests from {addr} carried a token that was refused "
        f"(the limit is {item.amount} per {_window(item)}); check the token "
        f"(POST /games/{{game_id}}/seats/{{seat}}/claim or POST /bots/accounts "
        f"issue one) and retry after {wait} s",
        headers={"Retry-After": str(wait)},
        limit=BAD_TOKENS,
        retry_after=wait,
    )


@dataclass
class Limits:
    client: Any  # the store's Redis client (stream slots, open-game quota)
    prefix: str
    counters: Counters
    general: tuple[Rate, ...]  # every request of an address (shortest window first)
    bad_tokens: tuple[Rate, ...]  # as configured
    routes: dict[str, tuple[Rate, ...]]  # endpoint -> its limit's rates (shortest window first)
    acquire_stream: Any = None  # ACQUIRE_STREAM_LUA, registered (EVALSHA, not its text each time)
    #: the store runs a gate in its append (``events.store.Gate``): GATED views' counting rides
    #: in their append's round trip
    gates: bool = False

    def __post_init__(self) -> None:
        self.acquire_stream = self.client.register_script(ACQUIRE_STREAM_LUA)

    # --- rates and bad tokens --------------------------------------------------------------
    def check(self) -> None:
        """Before the view: every limit of the request in one round trip, 429 if one refuses.

        In order: the per-address limit (not for a health check or a URL no route matches), the
        bad-token window (a request with a token), the route's limit (when Flask will call its
        view); a refused one stops the rest. The rate the headers report is kept for them."""
        bearer, admin = _auth()
        if admin:
            return
        endpoint = request.endpoint
        general: tuple[Rate, ...] = ()
        route: tuple[Rate, ...] = ()
        if endpoint is not None and endpoint.rpartition(".")[2] != "static":
            general = () if endpoint in EXEMPT else self.general
            route = self.routes.get(endpoint, ())
            if route and _automatic_options():
                route = ()
        bad = self.bad_tokens if bearer is not None else ()
        if not (general or bad or route):
            return
        address = "address:" + client_address()
        checks: list[Check] = [(r, address, "h") for r in general]
        checks += [(r, address, "t") for r in bad]
        if route:
            whose = route_owner() if route[0].whose == "token" else address
            checks += [(r, whose, "h") for r in route]
        layout = (checks, len(general), len(general) + len(bad))
        if self.gates and endpoint in GATED:
            keys, args = self.counters.call(checks)
            g._get_current_object().__dict__[_DEFERRED] = (layout, Gate(WINDOW_GATE, keys, args))
            return
        seen, refused = self.counters.run(checks)
        self._conclude(layout, seen, refused)

    def _conclude(
        self, layout: tuple[list[Check], int, int], seen: list[Seen], refused: int | None
    ) -> None:
        """What the counting answered: the rate the headers report, 429 when one refused."""
        _, general, first_route = layout  # (how many general rates, where the route's start)
        reported: Seen | None = None
        if refused is not None and (refused < general or refused >= first_route):
            reported = seen[refused]
        else:  # the tightest that let it through: least left (the route's of equals)
            checked = [x for i, x in enumerate(seen) if i < general or i >= first_route]
            if checked:
                reported = min(reversed(checked), key=lambda x: x.stats()[1])
        if reported is not None:
            g._get_current_object().__dict__[_SEEN] = reported
        if refused is None:
            return
        if general <= refused < first_route:
            raise _locked_out(seen[refused])
        raise _too_many(seen[refused])

    def settle(self) -> None:
        """A request whose counting was left to its append (``gated``): what the append's gate
        answered, or, when no append ran it (a bad body, a conflict, a retry...), the counting
        now, before the answer. 429 when a limit refused."""
        deferred = g.pop(_DEFERRED, None)
        if deferred is None:
            return
        layout, gate = deferred
        if gate.reply is None:
            seen, refused = self.counters.run(layout[0])
        else:
            got = gate.reply
            seen = self.counters.answered(layout[0], got)
            refused = int(got[0]) - 1 if got[0] else None
        self._conclude(layout, seen, refused)

    def after(self, resp: Response) -> Response:
        """After the view: count a refused token (401/403) against its address; the headers."""
        if resp.status_code in (401, 403):
            bearer, admin = _auth()
            if bearer is not None and not admin:
                address = "address:" + client_address()
                try:
                    self.counters.run([(r, address, "h") for r in self.bad_tokens], stop=False)
                except redis.exceptions.RedisError as exc:
                    if not is_outage(exc):
                        raise
                    # the store went away or refuses writes: the answer (often its 503) leaves
                    # uncounted
        seen: Seen | None = g.get(_SEEN)
        if seen is not None:
            item, name = seen.rate.item, seen.rate.name
            remaining = seen.stats()[1]
            reset = max(0, math.ceil(seen.reset_at() - time.time()))
            resp.headers["RateLimit-Policy"] = f'"{name}";q={item.amount};w={item.get_expiry()}'
            resp.headers["RateLimit"] = f'"{name}";r={remaining};t={reset}'
        return resp

    # --- concurrent streams ----------------------------------------------------------------
    def hold_stream(self, gen: Iterator[str]) -> Iterator[str]:
        """The stream, counted among the client's open streams while it runs (429 if full)."""
        cfg = current_app.config
        key, addr = client_key(), client_address()
        keys = [
            f"{self.prefix}:limits:{{streams}}:{key}",
            f"{self.prefix}:limits:{{streams}}:address:{addr}",
        ]
        if key.startswith("address:"):
            keys[0] += ":own"  # the address's own cap (no token) next to its overall cap
        member = uuid.uuid4().hex
        now = time.time()
        until = now + float(cfg["SSE_MAX_SECONDS"]) + 60
        caps = [int(cfg["MAX_STREAMS_PER_TOKEN"]), int(cfg["MAX_STREAMS_PER_ADDRESS"])]
        full = int(self.acquire_stream(keys=keys, args=[now, until, member, *caps]))
        if full:
            who = "this token" if full == 1 and key.startswith("token:") else f"address {addr}"
            raise Problem(
                "rate-limited",
                f"{who} has {caps[full - 1]} streams open already, the most allowed; "
                f"close one (or let it end) before opening another",
                headers={"Retry-After": "5"},
                limit="open-streams",
                retry_after=5,
            )
        return _released(gen, self.client, keys, member)

    # --- open games ------------------------------------------------------------------------
    def _open_key(self) -> str:
        return f"{self.prefix}:limits:open-games:{client_address()}"

    def check_open_games(self, store: Any) -> None:
        cap = int(current_app.config["MAX_OPEN_GAMES_PER_ADDRESS"])
        if cap <= 0 or _is_admin():
            return
        key = self._open_key()
        ids = [text(g) for g in self.client.zrange(key, 0, -1)]
        if len(ids) < cap:
            return
        pipe = self.client.pipeline(transaction=False)
        for gid in ids:
            pipe.hget(store.keys(gid)[1], "status")
        closed = [
            gid
            for gid, st in zip(ids, pipe.execute(), strict=True)
            if st is None or text(st) == "finished"
        ]
        if closed:
            self.client.zrem(key, *closed)
        if len(ids) - len(closed) >= cap:
            idle = int(current_app.config["ABANDONED_GAME_SECONDS"])
            expiry = f"; unclaimed games expire after {idle} s without a command" if idle else ""
            raise Problem(
                "too-many-open-games",
                f"address {client_address()} has {cap} unfinished games already, the "
                f"most allowed: play or finish one before creating another{expiry}",
                headers={"Retry-After": "60"},
                limit="open-games",
                retry_after=60,
            )

    def opened_game(self, game_id: str) -> None:
        if int(current_app.config["MAX_OPEN_GAMES_PER_ADDRESS"]) <= 0 or _is_admin():
            return
        key = self._open_key()
        pipe = self.client.pipeline(transaction=False)
        pipe.zadd(key, {game_id: time.time()})
        pipe.expire(key, max(86400, 2 * int(current_app.config["ABANDONED_GAME_SECONDS"])))
        pipe.execute()


def _released(gen: Iterator[str], client: Any, keys: list[str], member: str) -> Iterator[str]:
    try:
        yield from gen
    finally:
        close = getattr(gen, "close", None)
        if close is not None:
            close()
        try:
            pipe = client.pipeline(transaction=False)
            for k in keys:
                pipe.zrem(k, member)
            pipe.execute()
        except Exception:  # noqa: BLE001 - the slot expires by itself
            pass


def _window(item: RateLimitItem) -> str:
    n = item.multiples
    return f"{n} {item.GRANULARITY.name}{'s' if n > 1 else ''}"


@contextmanager
def gated() -> Iterator[Gate | None]:
    """Around a view whose limits its append counts (``GATED``): the ``Gate`` to hand to the
    append (None: counted before the view as usual), then, whatever the view did, the limits'
    answer - a 429 wins over any other answer, as when they are counted first."""
    lim = limits()
    deferred = g.get(_DEFERRED) if lim is not None else None
    if lim is None or deferred is None:
        yield None
        return
    try:
        yield deferred[1]
    except BaseException:
        lim.settle()
        raise
    lim.settle()


def limits() -> Limits | None:
    """The app's limits, or None when ``RATE_LIMITS`` is off."""
    out: Limits | None = current_app.extensions.get("rfg-limits")
    return out


def hold_stream(gen: Iterator[str]) -> Iterator[str]:
    lim = limits()
    return gen if lim is None else lim.hold_stream(gen)


def check_open_games(store: Any) -> None:
    lim = limits()
    if lim is not None:
        lim.check_open_games(store)


def opened_game(game_id: str) -> None:
    lim = limits()
    if lim is not None:
        lim.opened_game(game_id)


def init_app(app: Flask, client: Any, prefix: str, gates: bool = False) -> Limits | None:
    """Install the limits on ``app`` (after its blueprints), or nothing with RATE_LIMITS off."""
    cfg = app.config
    if int(cfg.get("PROXY_HOPS") or 0) > 0:
        hops = int(cfg["PROXY_HOPS"])
        app.wsgi_app = ProxyFix(app.wsgi_app, x_for=hops, x_proto=hops)  # type: ignore[method-assign]
    if not cfg.get("RATE_LIMITS"):
        app.extensions["rfg-limits"] = None
        return None
    routes = {
        endpoint: rates(name, str(cfg[key]), whose)
        for endpoint, (key, name, whose) in ROUTE_LIMITS.items()
        if endpoint in app.view_functions
    }
    lim = Limits(
        client,
        prefix,
        Counters(client, prefix),
        rates(GENERAL, str(cfg["LIMIT_PER_ADDRESS"])),
        rates(BAD_TOKENS, str(cfg["LIMIT_BAD_TOKENS"]), ordered=False),
        routes,
        gates=gates,
    )
    app.extensions["rfg-limits"] = lim
    app.before_request(lim.check)
    app.after_request(lim.after)
    return lim
