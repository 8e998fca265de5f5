"""The environment, read in one place: every ``RFG_*`` / ``REDIS_*`` variable the API, the workers
and the CLI understand, what each accepts and its default.

``read()`` (or ``read(mapping)`` in tests) parses and checks all of them at once, so a bad value
stops the API, a worker and the CLI alike with the same message: the variable, the value and what
it accepts. A variable that is unset or empty takes its default. The API maps them onto its
settings (``service.config``), the workers onto ``WorkerSettings`` (``workers.settings``).

| variable | accepts | default |
| --- | --- | --- |
| ``RFG_STORE_URL`` (else ``REDIS_URL``) | a store URL (see ``events.store.connect``) | the embedded server in ``<data dir>/redis`` |
| ``RFG_QUEUE_URL`` | a plain Redis URL for RQ's queue | the store's URL (required with a cluster store) |
| ``RFG_STORE_PREFIX`` | key prefix in Redis | ``rfg`` |
| ``RFG_QUEUE`` | RQ queue name | the store prefix |
| ``RFG_REDIS_TIMEOUT`` | seconds > 0 a Redis command may take | 5 |
| ``RFG_REDIS_SERVER`` | path of a redis-server / valkey-server for the embedded store | the bundled one |
| ``RFG_ARCHIVE_DIR`` | directory finished games are archived to | none: kept in Redis |
| ``RFG_ADMIN_TOKEN`` | the admin bearer token | none: nobody is admin |
| ``RFG_DISPATCH`` | on/off: enqueue bot turns right after each command | off (``rfg run``: on) |
| ``RFG_BOT_REGISTRATION`` | ``open`` or ``admin`` | ``open`` |
| ``RFG_SSE_MAX_SECONDS`` | seconds > 0 an event stream stays open | 300 |
| ``RFG_BODY_READ_SECONDS`` | seconds > 0 a request body may take to arrive (plus 1 s per 32 KiB) | 10 |
| ``RFG_RATE_LIMITS`` | on/off: the rate limits below | on |
| ``RFG_LIMIT_*`` | rates such as ``20 per minute;200 per hour`` | see ``service/config.py`` |
| ``RFG_MAX_STREAMS_PER_TOKEN``, ``RFG_MAX_STREAMS_PER_ADDRESS``, ``RFG_MAX_OPEN_GAMES_PER_ADDRESS``, ``RFG_ABANDONED_GAME_SECONDS``, ``RFG_FINISHED_GAME_SECONDS``, ``RFG_PROXY_HOPS`` | a whole number >= 0 | see ``service/config.py`` |
| ``RFG_SIGNING_KEY`` / ``RFG_SIGNING_KEY_FILE`` | the replay signing key (``events.verify.signing``) | ``<data dir>/signing-key.pem`` |
| ``RFG_DATA_DIR`` | the data directory: the embedded store and the signing key (``data_dir``) | a checkout's ``run/``, else the per-user data directory |
| ``RFG_LOG_FORMAT`` | ``json`` or ``text`` | ``json`` |
| ``RFG_LOG_LEVEL`` | a logging level (``DEBUG``, ``INFO``, ``WARNING``, ``ERROR``, ``CRITICAL``) | ``INFO`` |
| ``RFG_PLAY_ON`` | seconds >= 0 one bot job may keep playing a game of bots (0: one decision per job) | 2 |
| ``RFG_COMPACT_AFTER`` | seconds after a game ends before it is compacted (negative: never) | 60 |
| ``RFG_WORKER_CRASH`` | ``<point>:<n>``: crash injection for the crash tests (``workers.faults``) | none |

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
from dataclasses import dataclass
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
    """One environment variable: its name, what it accepts (said in errors), its parser and its
    default (the parsed value an unset variable stands for; None: no value)."""

    name: str
    accepts: str
    parse: Callable[[str], Any]
    default: Any = None


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

#: the rate-limit settings of the API (``RFG_<key>``) and their defaults
LIMIT_RATES: dict[str, str] = {
    "LIMIT_PER_ADDRESS": "1200 per minute",
    "LIMIT_CREATE_GAME": "20 per minute;200 per hour",
    "LIMIT_REGISTER_BOT": "5 per minute;20 per day",
    "LIMIT_CLAIM": "30 per minute",
    "LIMIT_COMMANDS": "600 per minute",
    "LIMIT_REPLAY_UPLOADS": "6 per minute;60 per hour",
    "LIMIT_STREAM_OPENS": "60 per minute",
    "LIMIT_BAD_TOKENS": "20 per minute",
    "LIMIT_SAMPLES": "30 per minute",
}
#: the API's quotas and durations that are whole numbers (``RFG_<key>``) and their defaults
LIMIT_NUMBERS: dict[str, int] = {
    "MAX_STREAMS_PER_TOKEN": 4,
    "MAX_STREAMS_PER_ADDRESS": 20,
    "MAX_OPEN_GAMES_PER_ADDRESS": 20,
    "ABANDONED_GAME_SECONDS": 3600,
    "FINISHED_GAME_SECONDS": 0,
    "PROXY_HOPS": 0,
}

VARIABLES: dict[str, Variable] = {
    v.name: v
    for v in (
        Variable("RFG_STORE_URL", STORE_URL_ACCEPTS, _store_url),
        Variable("REDIS_URL", STORE_URL_ACCEPTS, _store_url),
        Variable("RFG_QUEUE_URL", "a plain Redis URL: redis://host:port/db", _redis_url),
        Variable("RFG_STORE_PREFIX", "a key prefix such as 'rfg'", _text, "rfg"),
        Variable("RFG_QUEUE", "an RQ queue name", _text),
        Variable(
            "RFG_REDIS_TIMEOUT", "a number of seconds above 0", _seconds(0, True), COMMAND_TIMEOUT
        ),
        Variable("RFG_REDIS_SERVER", "the path of a redis-server or valkey-server", _text),
        Variable("RFG_ARCHIVE_DIR", "a directory", _text),
        Variable("RFG_ADMIN_TOKEN", "a bearer token", _text),
        Variable("RFG_DISPATCH", ON_OFF, _switch, False),
        Variable(
            "RFG_BOT_REGISTRATION",
            "'open' (anybody registers bot accounts) or 'admin' (only with the admin token)",
            _choice("open", "admin"),
            "open",
        ),
        Variable("RFG_SSE_MAX_SECONDS", "a number of seconds above 0", _seconds(0, True), 300.0),
        Variable("RFG_BODY_READ_SECONDS", "a number of seconds above 0", _seconds(0, True), 10.0),
        Variable("RFG_RATE_LIMITS", ON_OFF, _switch, True),
        *(Variable(f"RFG_{k}", RATES, _rates, d) for k, d in LIMIT_RATES.items()),
        *(Variable(f"RFG_{k}", WHOLE, _whole, d) for k, d in LIMIT_NUMBERS.items()),
        Variable("RFG_SIGNING_KEY", "a PEM private key or the base64 of 32 bytes", _text),
        Variable("RFG_SIGNING_KEY_FILE", "the path of a PEM private key", _text),
        Variable("RFG_DATA_DIR", "a directory", _text),
        Variable("RFG_LOG_FORMAT", "'json' or 'text'", _choice("json", "text"), "json"),
        Variable("RFG_LOG_LEVEL", "DEBUG, INFO, WARNING, ERROR or CRITICAL", _level, "INFO"),
        Variable(
            "RFG_PLAY_ON",
            "a number of seconds >= 0 (0: one job per decision)",
            _seconds(0, False),
            2.0,
        ),
        Variable(
            "RFG_COMPACT_AFTER",
            "a number of seconds (negative: never)",
            _seconds(-math.inf, False),
            60.0,
        ),
        Variable("RFG_WORKER_CRASH", "<point>:<n> (crash tests)", _text),
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
