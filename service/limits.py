"""Limits against abuse, kept on the event store's Redis (its fakeredis for a ``memory://`` store).

* **Rates** (sliding-window counters): every request without a token of one client address
  (``LIMIT_PER_ADDRESS``), every request with a token of that token, wherever it comes from
  (``LIMIT_PER_TOKEN``; ``/healthz`` and ``/readyz`` excepted from both), and per endpoint: game
  creation, bot registration, seat claims and token rotations (per address), commands, stream
  opens and samples (per token, per address without one; a bot token's per game:
  ``route_owner``), replay uploads (per address).
* **Neighbours**: what others at a client's address send cannot hold back its valid token. A
  request with a token counts against its address's general limit too; when that limit is past,
  it is refused (429, before the view) unless its token is valid: a live bot token, or a seat
  token of the route's game (``service.auth.token_is_valid``: one more round trip, only past the
  limit; a challenge's secret, or a seat token on a route of no game, is not looked up and is
  refused there). So random tokens do not make a client unlimited, a flood from its address
  does not stop a valid token, and past the limit an unknown token costs two round trips and no
  view.
* **Bad tokens**: a request whose token was refused - 401, or 403 where only the admin token would
  do (``token_refused``) - counts against ``LIMIT_BAD_TOKENS`` of its address; past it such a
  request is answered 429 instead (3,000 guesses no longer get 3,000 answers). Nothing is
  refused before the view: a valid seat token, bot token or the admin token keeps working at a
  locked-out address, and a 403 to a valid token that may not do this (another seat's) is not
  counted. A locked-out guesser still tells a valid token by its non-429 answer: seat tokens,
  bot tokens and challenge secrets are 256 random bits (``secrets.token_urlsafe(32)``), beyond
  guessing at any rate; the admin token is the operator's, to be as long and random
  (``docs/hosting.md``). Each locked-out request costs what a refused one did: the limits' round
  trip, the view's read of its credential, the count - no more than a valid request's checks.
* **Concurrent streams**: at most ``MAX_STREAMS_PER_TOKEN`` open SSE streams per token (per
  address without one) and ``MAX_STREAMS_PER_ADDRESS`` per address: a sorted set of open streams
  scored by when they end at the latest (a stream whose process died frees its place then).
* **Open games**: at most ``MAX_OPEN_GAMES_PER_ADDRESS`` unfinished games created by one address
  (a sorted set per address; finished and expired games leave it).

A limit that is hit answers 429 problem+json with ``Retry-After`` (seconds); responses carry the
tightest limit that applied as ``RateLimit-Policy: "<name>";q=<quota>;w=<window s>`` and
``RateLimit: "<name>";r=<remaining>;t=<seconds to reset>`` (IETF draft RateLimit header fields):
the one that refused, else of the route's and the general one (the token's, else the address's)
the one with the least left (the route's of equals), so a client that waits ``t`` seconds once
``r`` is 0 meets no 429.
The admin token is exempt. ``RATE_LIMITS=False`` (``RFG_RATE_LIMITS=0``) turns all of it off.
When the counters cannot be written (the store down, or refusing writes: full, read-only, failing
its disk, too few replicas; ``events.store.outage``) the request answers 503 ``store-unavailable`` with
``Retry-After`` (``service.errors``): no limit is skipped, and the counting fails first, so a
full store refuses reads too while limits are on.
The client address is the peer's, or with ``PROXY_HOPS=N`` the one N trusted proxies forwarded,
grouped (``address_group``): an IPv4 address is its own, an IPv6 address counts with its network
of ``LIMIT_IPV6_PREFIX`` bits (a /64 by default: what one client usually holds, so the addresses of
one /64 share one quota), an IPv4-mapped IPv6 address as its IPv4 address. Every per-address
counter, stream cap and open-game set is the group's, and its answers name it (``address
2001:db8:1:2::/64``).

This module is the limits' policy: which limits apply to a request, in what order, the 429
answers and the headers. Their counters, stream slots and open-game sets are kept by
``events.store.limits.RateLimitStore`` (their keys and scripts). Of the ``limits`` library it uses
the parser of limit strings only (``parse_many``, ``RateLimitItem``). The counting is limits'
sliding-window counter, as its Redis storage does it (``events.store.limits``), and remaining /
reset are read as its ``get_window_stats`` reads them.

**Cost: one Redis round trip a request** (none for the admin, nor for a health check or an
unknown URL without a token; see below for a cluster). Before the view, one script call takes
every limit that applies - the general one (the token's, else the address's), the route's - and
checks them in that order, hitting each rate and stopping at the first that refuses: a refused
request consumes what it did when Flask-Limiter counted them (the general limit when the route's
refuses it; of a limit of several rates, the shorter windows before the one that refused); a
request with a token then hits its address's general limit, which refuses it only if, past it,
a read of its token (a second round trip) finds it is not valid. The script answers each window
it checked, so the ``RateLimit`` headers need no read. A request whose token was refused makes
a second, after the answer: its bad-token count. A command
(``CHECKED_IN_VIEW``) counts its limits at the start of its view instead, in the same pipeline
as the read of its seat's token (``service.auth.require_seat_command``): one round trip for
both; so does an event stream's opening, with the read of its game's summary. Counters are hash-tagged by whose they are (an address, a token's digest:
``events.store.limits``), so on Redis Cluster, where a script's keys must share a slot, a
request makes one call per owner: one without a token, two with one (its token's limits, then,
if they let it through, its address's general count; a bot token's per-game route limits a
third); unavoidable, the counters live where their owners hash (a command's seat token is read
after them).
"""

from __future__ import annotations

import hashlib
import hmac
import ipaddress
import math
import time
import uuid
from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from typing import Any, TypeVar

from flask import Flask, Response, current_app, g, request
from limits import RateLimitItem, parse_many
from werkzeug.middleware.proxy_fix import ProxyFix

from events.store.limits import Count, RateLimitStore, Read
from events.store.outage import is_outage
from service.errors import Problem, problem_response

T = TypeVar("T")

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
    "accounts.rotate_token": ("LIMIT_CLAIM", "claims", "address"),
    "commands.submit": ("LIMIT_COMMANDS", "commands", "token"),
    "logs.verify": ("LIMIT_REPLAY_UPLOADS", "replay-uploads", "address"),
    "events.public_stream": ("LIMIT_STREAM_OPENS", "streams", "token"),
    "events.seat_stream": ("LIMIT_STREAM_OPENS", "streams", "token"),
    "accounts.decisions": ("LIMIT_STREAM_OPENS", "streams", "token"),
    "samples.samples": ("LIMIT_SAMPLES", "samples", "token"),
}
#: the name the general limit of requests without a token goes by in headers and problems
GENERAL = "per-address"
#: the name of the general limit of requests with a token (counted per token)
PER_TOKEN = "per-token"
#: the name of the refused-token window
BAD_TOKENS = "bad-tokens"

#: views that count their limits themselves, before anything else, in the round trip of their
#: first read: a command's seat token (``service.auth.require_seat_command``), an event
#: stream's game summary (``service.api.events``)
CHECKED_IN_VIEW = frozenset({"commands.submit", "events.public_stream", "events.seat_stream"})
#: where a request keeps its (bearer token, is admin)
_AUTH = "rfg_limit_auth"
#: where a request keeps its address group (``client_address``)
_ADDRESS = "rfg_limit_address"
#: where a request keeps the rate its RateLimit headers report (a ``Seen``)
_SEEN = "rfg_limit_seen"
#: where a request notes that its token was refused with a 403 (``token_refused``)
_REFUSED = "rfg_limit_refused"

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
    """The limits' sliding-window counters, kept by ``events.store.limits.RateLimitStore``:
    ``run`` checks any number of them in one script call (on a cluster: one per owner)."""

    def __init__(self, client: Any, prefix: str) -> None:
        self.store = RateLimitStore(client, prefix)

    def key(self, owner: str, rate: Rate) -> str:
        return self.store.key(owner, rate.tail)

    def run(
        self, checks: Sequence[Check], stop: bool = True, beside: Read[T] | None = None
    ) -> tuple[list[Seen], int | None, T | None]:
        """Check the counters in order (hits count, tests do not), stopping at the first that
        refuses when ``stop``: (what each checked answered, the index of the first refused,
        the answer of ``beside``, another owner's read sent in the same round trip)."""
        if not checks:
            return [], None, None if beside is None else self.store.read(beside)
        counts = [
            Count(owner, rate.tail, op == "h", rate.item.amount, rate.item.get_expiry())
            for rate, owner, op in checks
        ]
        windows, refused, answer = self.store.count(counts, stop, beside)
        then = time.time()
        seen = [
            Seen(check[0], (w[0], max(0, w[1]) / 1000, w[2], max(0, w[3]) / 1000), then)
            for check, w in zip(checks, windows, strict=False)
        ]
        return seen, refused, answer


def address_group(address: str, ipv6_prefix: int) -> str:
    """Whose an address's per-address limits are: an IPv4 address its own (an IPv4-mapped IPv6
    address its IPv4 address's), an IPv6 address its network of ``ipv6_prefix`` bits
    (``2001:db8:1:2::/64``; with 128 the address itself), anything else (not an IP address:
    a Unix socket's peer) as it is."""
    try:
        ip = ipaddress.ip_address(address)
    except ValueError:
        return address[:100] or "unknown"
    if isinstance(ip, ipaddress.IPv6Address):
        if ip.ipv4_mapped is not None:
            return str(ip.ipv4_mapped)
        if ipv6_prefix < 128:
            return str(ipaddress.IPv6Network((ip, ipv6_prefix), strict=False))
        return str(ipaddress.IPv6Address(int(ip)))  # (without a zone)
    return str(ip)


def client_address() -> str:
    """The client's address group (``address_group``): the key of its per-address limits and
    what their answers name (``address 192.0.2.1``, ``address 2001:db8:1:2::/64``), worked out
    once a request."""
    ctx_g = g._get_current_object()
    got: str | None = ctx_g.get(_ADDRESS)
    if got is None:
        prefix = int(current_app.config.get("LIMIT_IPV6_PREFIX") or 64)
        got = ctx_g.__dict__[_ADDRESS] = address_group(request.remote_addr or "unknown", prefix)
    return got


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


def _token_is_valid() -> bool:
    """Whether the request's token is a live bot token or a seat token of the route's game
    (``service.auth.token_is_valid``: one round trip)."""
    from service.auth import token_is_valid  # (service.auth builds on this module)

    return token_is_valid()


def _retry_after(reset_at: float) -> int:
    return max(1, math.ceil(reset_at - time.time()))


def _automatic_options() -> bool:
    """An OPTIONS request Flask answers itself, never calling the view."""
    rule = request.url_rule
    return request.method == "OPTIONS" and bool(getattr(rule, "provide_automatic_options", False))


def _too_many(refusal: Seen) -> Problem:
    """The 429 of a rate that refused a request (the general limit or the route's)."""
    item, name = refusal.rate.item, refusal.rate.name
    wait = _retry_after(refusal.reset_at())
    whose = (
        "this token"
        if client_key().startswith("token:") and refusal.rate.whose == "token"
        else f"address {client_address()}"
    )
    owner = route_owner()
    if whose == "this token" and ":g:" in owner and name != PER_TOKEN:
        whose = f"this bot token, in game {owner.rpartition(':g:')[2]},"
    valid = "; requests whose token is valid are not held back" if name == GENERAL else ""
    return Problem(
        "rate-limited",
        f"too many requests: {whose} may make {item.amount} per {_window(item)} "
        f"({name}{valid}); retry after {wait} s",
        headers={"Retry-After": str(wait)},
        limit=name,
        retry_after=wait,
    )


def _locked_out(refusal: Seen) -> Problem:
    """The 429 that replaces the refusal of a token (401/403) at an address past its refused
    tokens' limit."""
    addr, item = client_address(), refusal.rate.item
    wait = _retry_after(refusal.stats()[0])
    return Problem(
        "rate-limited",
        f"this token was refused, and too many requests from address {addr} carried a token "
        f"that was refused (the limit is {item.amount} per {_window(item)}); check the token "
        f"(POST /games/{{game_id}}/seats/{{seat}}/claim or POST /bots/accounts "
        f"issue one) and retry after {wait} s; requests with a valid token are not held back",
        headers={"Retry-After": str(wait)},
        limit=BAD_TOKENS,
        retry_after=wait,
    )


def token_refused() -> None:
    """Note that the request's token is refused with a 403 because it is not a credential the
    operation accepts at all (not the admin token): counted as a 401 is (``Limits.after``). A
    403 to a valid token that may not do this (another seat's, another account's) is not."""
    g._get_current_object().__dict__[_REFUSED] = True


@dataclass
class Limits:
    counters: Counters
    general: tuple[Rate, ...]  # every request of an address without a token (shortest first)
    per_token: tuple[Rate, ...]  # every request with a token, per token (shortest first)
    bad_tokens: tuple[Rate, ...]  # as configured
    routes: dict[str, tuple[Rate, ...]]  # endpoint -> its limit's rates (shortest window first)

    @property
    def store(self) -> RateLimitStore:
        return self.counters.store

    # --- rates and bad tokens --------------------------------------------------------------
    def before(self) -> None:
        """Before the view: ``check``, except for a view that checks its limits itself
        (``CHECKED_IN_VIEW``, with its seat's token)."""
        if request.endpoint in CHECKED_IN_VIEW and not _automatic_options():
            return
        self.check()

    def check(self, beside: Read[T] | None = None) -> T | None:
        """Every limit of the request in one round trip, 429 if one refuses; with ``beside``
        (another owner's read) sent in the same round trip, its answer.

        In order: the general limit (per token for a request with a token, else per address;
        not for a health check or a URL no route matches), the route's limit (when Flask will
        call its view); a refused one stops the rest; then, for a request with a token, its
        address's general limit, which past it refuses the request only if its token is not
        valid (a look-up: ``_token_is_valid``). The rate the headers report is kept for them.
        The bad-token window is not looked at: it refuses nothing before the view (``after``)."""
        bearer, admin = _auth()
        endpoint = request.endpoint
        general: tuple[Rate, ...] = ()
        route: tuple[Rate, ...] = ()
        if not admin and endpoint is not None and endpoint.rpartition(".")[2] != "static":
            if endpoint not in EXEMPT:
                general = self.general if bearer is None else self.per_token
            route = self.routes.get(endpoint, ())
            if route and _automatic_options():
                route = ()
        address = "address:" + client_address()
        checks: list[Check] = [(r, client_key(), "h") for r in general]
        if route:
            whose = route_owner() if route[0].whose == "token" else address
            checks += [(r, whose, "h") for r in route]
        limited = len(checks)
        if bearer is not None and general:  # counted for its address too, refusing nothing yet
            checks += [(r, address, "h") for r in self.general]
        if not checks:
            return None if beside is None else self.store.read(beside)
        seen, refused, answer = self.counters.run(checks, beside=beside)
        ctx = g._get_current_object().__dict__
        if refused is not None and refused < limited:
            ctx[_SEEN] = seen[refused]
            raise _too_many(seen[refused])
        if refused is not None and not _token_is_valid():  # the address's, and not valid
            ctx[_SEEN] = seen[refused]
            raise _too_many(seen[refused])
        if limited:  # the tightest that let it through: least left (the route's of equals)
            ctx[_SEEN] = min(reversed(seen[:limited]), key=lambda x: x.stats()[1])
        return answer

    def after(self, resp: Response) -> Response:
        """After the view: a refused token (401, or a 403 ``token_refused``) counted against its
        address, answered 429 instead when the address is past its limit; the headers."""
        bearer, admin = _auth()
        if bearer is not None and not admin:
            if resp.status_code == 401 or (resp.status_code == 403 and g.get(_REFUSED)):
                resp = self._refused(resp)
        seen: Seen | None = g.get(_SEEN)
        if seen is not None:
            item, name = seen.rate.item, seen.rate.name
            remaining = seen.stats()[1]
            reset = max(0, math.ceil(seen.reset_at() - time.time()))
            resp.headers["RateLimit-Policy"] = f'"{name}";q={item.amount};w={item.get_expiry()}'
            resp.headers["RateLimit"] = f'"{name}";r={remaining};t={reset}'
        return resp

    def _refused(self, resp: Response) -> Response:
        """A refused token's answer: counted in its address's bad-token window (one round
        trip), 429 instead when the window is past its limit (then it counts nothing)."""
        address = "address:" + client_address()
        try:
            seen, refused, _ = self.counters.run(
                [(r, address, "h") for r in self.bad_tokens], stop=False
            )
        except Exception as exc:
            if not is_outage(exc):
                raise
            return resp  # the store went away or refuses writes: the answer leaves uncounted
        return resp if refused is None else problem_response(_locked_out(seen[refused]))

    # --- concurrent streams ----------------------------------------------------------------
    def hold_stream(self, gen: Iterator[str]) -> Iterator[str]:
        """The stream, counted among the client's open streams while it runs (429 if full)."""
        cfg = current_app.config
        owner, addr = client_key(), client_address()
        member = uuid.uuid4().hex
        now = time.time()
        until = now + float(cfg["SSE_MAX_SECONDS"]) + 60
        caps = [int(cfg["MAX_STREAMS_PER_TOKEN"]), int(cfg["MAX_STREAMS_PER_ADDRESS"])]
        full = self.store.acquire_stream(owner, addr, member, now, until, caps)
        if full:
            who = "this token" if full == 1 and owner.startswith("token:") else f"address {addr}"
            raise Problem(
                "rate-limited",
                f"{who} has {caps[full - 1]} streams open already, the most allowed; "
                f"close one (or let it end) before opening another",
                headers={"Retry-After": "5"},
                limit="open-streams",
                retry_after=5,
            )
        return _released(gen, self.store, owner, addr, member)

    # --- open games ------------------------------------------------------------------------
    def check_open_games(self, store: Any) -> None:
        cap = int(current_app.config["MAX_OPEN_GAMES_PER_ADDRESS"])
        if cap <= 0 or _is_admin():
            return
        if self.store.open_games(client_address(), store, cap) >= cap:
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
        keep = max(86400, 2 * int(current_app.config["ABANDONED_GAME_SECONDS"]))
        self.store.open_game(client_address(), game_id, time.time(), keep)


def _released(
    gen: Iterator[str], store: RateLimitStore, owner: str, address: str, member: str
) -> Iterator[str]:
    try:
        yield from gen
    finally:
        close = getattr(gen, "close", None)
        if close is not None:
            close()
        try:
            store.release_stream(owner, address, member)
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


def check(beside: Read[T] | None = None) -> T | None:
    """A ``CHECKED_IN_VIEW`` view's limits (``Limits.check``: 429 when one refuses), with
    ``beside`` in the same round trip: its answer. None without limits: the caller reads."""
    lim = limits()
    return None if lim is None else lim.check(beside)


def init_app(app: Flask, client: Any, prefix: str) -> Limits | None:
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
        Counters(client, prefix),
        rates(GENERAL, str(cfg["LIMIT_PER_ADDRESS"])),
        rates(PER_TOKEN, str(cfg["LIMIT_PER_TOKEN"]), "token"),
        rates(BAD_TOKENS, str(cfg["LIMIT_BAD_TOKENS"]), ordered=False),
        routes,
    )
    app.extensions["rfg-limits"] = lim
    app.before_request(lim.before)
    app.after_request(lim.after)
    return lim
