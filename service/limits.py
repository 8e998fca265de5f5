"""Limits against abuse, kept on the event store's Redis (or in memory for a ``memory://`` store).

* **Rates** (Flask-Limiter, sliding-window counters): every request of one client address
  (``LIMIT_PER_ADDRESS``; ``/healthz`` and ``/readyz`` excepted), and per endpoint: game creation,
  bot registration, seat claims and token rotations (per address), commands and stream opens (per
  token, per address without one), replay uploads (per address). Counters live under
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
``RateLimit: "<name>";r=<remaining>;t=<seconds to reset>`` (IETF draft RateLimit header fields).
The admin token is exempt. ``RATE_LIMITS=False`` (``RFG_RATE_LIMITS=0``) turns all of it off.
Each limit costs a request one Redis round trip: the hit answers the window the headers report
(``HitWindowRedisStorage``: limits' Redis storage otherwise).
The client address is the peer's, or with ``PROXY_HOPS=N`` the one N trusted proxies forwarded.
"""

from __future__ import annotations

import functools
import hashlib
import hmac
import math
import time
import uuid
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from typing import Any

import redis
from flask import Flask, Response, current_app, g, has_app_context, request
from flask_limiter import Limiter, RequestLimit
from flask_limiter.errors import RateLimitExceeded
from limits import RateLimitItem, parse_many
from limits.storage import RedisClusterStorage, RedisStorage
from limits.strategies import SlidingWindowCounterRateLimiter
from werkzeug.middleware.proxy_fix import ProxyFix

from events import is_cluster_url
from events.text import text
from service.errors import Problem, problem_response

#: endpoints outside every limit (monitoring)
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
#: the name the general limit goes by in RateLimit headers (Flask-Limiter's scope "global")
GENERAL = "per-address"

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


#: limits' ``acquire_sliding_window.lua`` (the same keys, counts and expiries), answering also the
#: window as its ``sliding_window.lua`` reads it right after the hit: {acquired (1/0), previous
#: count, previous ttl ms, current count, current ttl ms} ({0} alone if ``amount > limit``)
ACQUIRE_SLIDING_WINDOW_LUA = """
local limit = tonumber(ARGV[1])
local expiry = tonumber(ARGV[2]) * 1000
local amount = tonumber(ARGV[3])
if amount > limit then return {0} end
local current_ttl = tonumber(redis.call('pttl', KEYS[2]))
if current_ttl > 0 and current_ttl < expiry then
    redis.call('rename', KEYS[2], KEYS[1])
    redis.call('set', KEYS[2], 0, 'PX', current_ttl + expiry)
end
local previous_count = tonumber(redis.call('get', KEYS[1])) or 0
local previous_ttl = tonumber(redis.call('pttl', KEYS[1])) or 0
local current_count = tonumber(redis.call('get', KEYS[2])) or 0
current_ttl = tonumber(redis.call('pttl', KEYS[2])) or 0
local weight_ttl = previous_ttl
if weight_ttl <= 0 then weight_ttl = 0 end
local weighted_count = math.floor(previous_count * weight_ttl / expiry) + current_count
if (weighted_count + amount) > limit then
    return {0, previous_count, previous_ttl, current_count, current_ttl}
end
if redis.call('exists', KEYS[2]) == 1 then
    current_count = redis.call('incrby', KEYS[2], amount)  -- (its expiry unchanged)
else
    redis.call('set', KEYS[2], amount, 'PX', expiry * 2)
    current_count, current_ttl = amount, expiry * 2
end
return {1, previous_count, previous_ttl, current_count, current_ttl}
"""
#: where a request keeps the windows its hits saw: {limit key: (time.time() then, window)}
_WINDOWS = "rfg_limit_windows"
#: where a request keeps its (bearer token, is admin)
_AUTH = "rfg_limit_auth"


class _HitWindows:
    """A sliding-window counter storage whose hit also answers the window it leaves, kept for
    the rest of the request: the ``RateLimit`` header's remaining and reset then need no read of
    their own (limits' ``get_window_stats`` after a hit). One round trip per limit and request.

    The window is read once (the next read of that key goes to the store again), only in the
    request that hit it, with its TTLs aged by the time since the hit - what limits'
    ``sliding_window.lua`` would have answered then (the current window shifted to the previous
    one if it ended meanwhile)."""

    STORAGE_SCHEME: list[str] = []
    lua_acquire_with_window: Any

    def __init__(self, uri: str, **options: Any) -> None:
        super().__init__(uri.removeprefix("rfg+"), **options)  # type: ignore[call-arg]

    def initialize_storage(self, uri: str) -> None:
        super().initialize_storage(uri)  # type: ignore[misc]
        conn = self.get_connection()  # type: ignore[attr-defined]
        self.lua_acquire_with_window = conn.register_script(ACQUIRE_SLIDING_WINDOW_LUA)

    def acquire_sliding_window_entry(
        self, key: str, limit: int, expiry: int, amount: int = 1
    ) -> bool:
        keys = [self._previous_window_key(key), self._current_window_key(key)]  # type: ignore[attr-defined]
        got = self.lua_acquire_with_window(
            [self.prefixed_key(k) for k in keys],  # type: ignore[attr-defined]
            [limit, expiry, amount],
        )
        if len(got) == 5 and has_app_context():
            window = (int(got[1]), max(0, got[2]) / 1000, int(got[3]), max(0, got[4]) / 1000)
            g.setdefault(_WINDOWS, {})[key] = (time.time(), window)
        return bool(got[0])

    def get_sliding_window(self, key: str, expiry: int) -> tuple[int, float, int, float]:
        seen = g.get(_WINDOWS) if has_app_context() else None
        hit = seen.pop(key, None) if seen else None
        if hit is None:
            return super().get_sliding_window(key, expiry)  # type: ignore[misc]
        then, (previous, previous_ttl, current, current_ttl) = hit
        aged = max(0.0, time.time() - then)
        previous_ttl, current_ttl = previous_ttl - aged, current_ttl - aged
        if previous_ttl <= 0:  # the previous window's key expired
            previous, previous_ttl = 0, 0.0
        if current_ttl <= 0:
            current, current_ttl = 0, 0.0
        elif current_ttl < expiry:  # the current window ended: a read shifts it to the previous
            previous, previous_ttl = current, current_ttl
            current, current_ttl = 0, current_ttl + expiry
        return previous, previous_ttl, current, current_ttl


class HitWindowRedisStorage(_HitWindows, RedisStorage):
    """``rfg+redis://``: limits' Redis storage, its hits answering their window."""

    STORAGE_SCHEME = ["rfg+redis"]


class HitWindowRedisClusterStorage(_HitWindows, RedisClusterStorage):
    """``rfg+redis+cluster://``: limits' Redis Cluster storage, its hits answering their window."""

    STORAGE_SCHEME = ["rfg+redis+cluster"]


def client_address() -> str:
    return request.remote_addr or "unknown"


def _auth() -> tuple[str | None, bool]:
    """(the request's bearer token, whether it is the admin token), worked out once a request
    (every limit asks: the request filter, the bad-token check and count, the key)."""
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


def _is_admin() -> bool:
    return _auth()[1]


def _retry_after(reset_at: float) -> int:
    return max(1, math.ceil(reset_at - time.time()))


@dataclass
class Limits:
    limiter: Limiter
    client: Any  # the store's Redis client (stream slots, open-game quota)
    prefix: str
    bad_tokens: list[RateLimitItem]
    strategy: SlidingWindowCounterRateLimiter

    # --- bad tokens ------------------------------------------------------------------------
    def check_bad_tokens(self) -> None:
        if _token() is None or _is_admin():
            return
        addr = client_address()
        for item in self.bad_tokens:
            if not self.strategy.test(item, "bad-token", addr):
                reset, _left = self.strategy.get_window_stats(item, "bad-token", addr)
                wait = _retry_after(reset)
                raise Problem(
                    "rate-limited",
                    f"too many requests from {addr} carried a token that was refused "
                    f"(the limit is {item.amount} per {_window(item)}); check the token "
                    f"(POST /games/{{game_id}}/seats/{{seat}}/claim or POST /bots/accounts "
                    f"issue one) and retry after {wait} s",
                    headers={"Retry-After": str(wait)},
                    limit="bad-tokens",
                    retry_after=wait,
                )

    def count_bad_token(self, resp: Response) -> None:
        if resp.status_code in (401, 403) and _token() is not None and not _is_admin():
            for item in self.bad_tokens:
                self.strategy.hit(item, "bad-token", client_address())

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
        full = int(self.client.eval(ACQUIRE_STREAM_LUA, 2, *keys, now, until, member, *caps))
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


def _name(cur: RequestLimit) -> str:
    scope = str(cur.request_args[-1]) if cur.request_args else ""
    return GENERAL if scope in ("global", "") else scope


def _policy_headers(resp: Response, cur: RequestLimit) -> None:
    name, item = _name(cur), cur.limit
    resp.headers["RateLimit-Policy"] = f'"{name}";q={item.amount};w={item.get_expiry()}'
    reset = max(0, math.ceil(cur.reset_at - time.time()))
    resp.headers["RateLimit"] = f'"{name}";r={max(0, cur.remaining)};t={reset}'


def init_app(app: Flask, client: Any, prefix: str) -> Limits | None:
    """Install the limits on ``app`` (after its blueprints), or nothing with RATE_LIMITS off."""
    cfg = app.config
    if int(cfg.get("PROXY_HOPS") or 0) > 0:
        hops = int(cfg["PROXY_HOPS"])
        app.wsgi_app = ProxyFix(app.wsgi_app, x_for=hops, x_proto=hops)  # type: ignore[method-assign]
    if not cfg.get("RATE_LIMITS"):
        app.extensions["rfg-limits"] = None
        return None
    storage_uri, storage_options = _storage(str(cfg.get("STORE_URL") or ""), client, prefix)
    limiter = Limiter(
        client_address,
        app=app,
        application_limits=[str(cfg["LIMIT_PER_ADDRESS"])],
        application_limits_exempt_when=lambda: request.endpoint in EXEMPT,
        storage_uri=storage_uri,
        storage_options=storage_options,
        strategy="sliding-window-counter",
        headers_enabled=False,
        key_prefix=prefix,
    )
    limiter.request_filter(_is_admin)
    _limit_routes(app, limiter)
    lim = Limits(
        limiter,
        client,
        prefix,
        parse_many(str(cfg["LIMIT_BAD_TOKENS"])),
        SlidingWindowCounterRateLimiter(limiter.storage),
    )
    app.extensions["rfg-limits"] = lim
    app.before_request(lim.check_bad_tokens)
    app.after_request(functools.partial(_after, lim, limiter))
    app.register_error_handler(RateLimitExceeded, functools.partial(_too_many, limiter))
    return lim


def _storage(url: str, client: Any, prefix: str) -> tuple[str, dict[str, Any]]:
    """Where the counters live: the app's own Redis (its pool), a cluster, or memory."""
    if url.startswith("memory:"):
        return "memory://", {}
    if is_cluster_url(url):  # limits' own RedisCluster client; its keys are hash-tagged
        options = {
            "key_prefix": f"{prefix}:limits",
            "socket_timeout": 5,
            "socket_connect_timeout": 2,
        }
        base = url.split("?", 1)[0]
        return ("rfg+" + base if base.startswith("redis+cluster:") else base), options
    pool = client.connection_pool
    return "rfg+redis://", {"connection_pool": pool, "key_prefix": f"{prefix}:limits"}


def _limit_routes(app: Flask, limiter: Limiter) -> None:
    """Each route of ``ROUTE_LIMITS`` gets its shared limit, per token or per address."""
    for endpoint, (key, name, whose) in ROUTE_LIMITS.items():
        view = app.view_functions.get(endpoint)
        if view is None:
            continue
        key_func: Callable[[], str] = client_key if whose == "token" else client_address
        limited: Any = limiter.shared_limit(str(app.config[key]), scope=name, key_func=key_func)(
            view
        )
        app.view_functions[endpoint] = limited


def _after(lim: Limits, limiter: Limiter, resp: Response) -> Response:
    try:
        lim.count_bad_token(resp)
        cur = limiter.current_limit
        if cur is not None:
            _policy_headers(resp, cur)
    except (redis.exceptions.ConnectionError, redis.exceptions.TimeoutError):
        pass  # the store went away: the answer (often its 503) leaves without RateLimit headers
    return resp


def _too_many(limiter: Limiter, exc: RateLimitExceeded) -> Response:
    cur = limiter.current_limit
    item = exc.limit.limit
    wait = _retry_after(cur.reset_at) if cur is not None else item.get_expiry()
    name = exc.limit.scope if exc.limit.scope and exc.limit.scope != "global" else GENERAL
    whose = (
        "this token"
        if client_key().startswith("token:") and name in ("commands", "streams")
        else f"address {client_address()}"
    )
    return problem_response(
        Problem(
            "rate-limited",
            f"too many requests: {whose} may make {item.amount} per {_window(item)} "
            f"({name}); retry after {wait} s",
            headers={"Retry-After": str(wait)},
            limit=name,
            retry_after=wait,
        )
    )
