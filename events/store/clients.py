"""Timeouts, health checks and retries of every Redis client the project makes, chosen per use.

redis-py's defaults fit no use here: since redis-py 8 every read times out after 5 s (which cuts a
``XREAD BLOCK`` of 15 s and RQ's blocking dequeue of 45 s), and before 8 a stalled server blocked
a request forever. So ``events.store.connect`` takes a ``ClientSettings`` and each caller says what its
client is for:

* ``COMMANDS`` - ordinary commands (the API, the jobs, the sweep): a reply must come within
  ``RFG_REDIS_TIMEOUT`` seconds (default 5), so a stalled Redis turns into an error (the API
  answers 503) in a bounded time instead of hanging a request;
* ``blocking(seconds)`` - a client whose longest call blocks ``seconds`` on the server
  (``XREAD BLOCK`` of an SSE stream, RQ's ``BLPOP``): its socket timeout is that plus
  ``BLOCK_MARGIN``, so an idle wait is never mistaken for a dead server.

All of them: connect within ``CONNECT_TIMEOUT`` (a refused or unroutable server fails fast), TCP
keep-alive on, a ``PING`` before reusing a connection idle longer than ``HEALTH_CHECK_INTERVAL``
(a connection a restarted Redis or a NAT dropped is replaced before a command is lost on it), and
a few quick retries on ``ConnectionError`` only (a refused or reset connection: Redis restarting).
Timeouts are not retried: a stalled server would multiply the wait. Retrying a write is safe here:
appends are checked against the expected version and deduplicated by command id.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, replace
from typing import Any

from redis.backoff import ExponentialWithJitterBackoff
from redis.exceptions import ConnectionError as RedisConnectionError
from redis.retry import Retry

from events import config

#: seconds to open a connection (Redis on the same host or network answers in milliseconds)
CONNECT_TIMEOUT = 2.0
#: seconds a blocking client's socket waits beyond the server-side block time
BLOCK_MARGIN = 10.0
#: seconds of idleness after which a pooled connection is PINGed before use
HEALTH_CHECK_INTERVAL = 30


@dataclass(frozen=True)
class ClientSettings:
    """What a redis-py client is built with (``kwargs()`` gives the ``redis.Redis`` arguments)."""

    #: seconds to wait for a reply (longer than any server-side block time of the client)
    socket_timeout: float
    connect_timeout: float = CONNECT_TIMEOUT
    health_check_interval: int = HEALTH_CHECK_INTERVAL
    #: retries after a ConnectionError (backoff 0.05 s doubling up to 0.5 s, with jitter)
    retries: int = 3
    #: at most this many connections (a caller beyond waits up to ``socket_timeout`` for one);
    #: None: as many as callers at once (a process with a few threads)
    max_connections: int | None = None

    def kwargs(self) -> dict[str, Any]:
        return {
            "socket_timeout": self.socket_timeout,
            "socket_connect_timeout": self.connect_timeout,
            "socket_keepalive": True,
            "health_check_interval": self.health_check_interval,
            "retry": Retry(
                ExponentialWithJitterBackoff(base=0.05, cap=0.5),
                self.retries,
                supported_errors=(RedisConnectionError,),
            ),
        }

    def pooled(self, max_connections: int) -> ClientSettings:
        """The same client with at most ``max_connections`` connections: a server with thousands
        of concurrent requests (gevent) borrows from a bounded pool instead of opening one each."""
        return replace(self, max_connections=max_connections)

    def blocking(self, block_seconds: float) -> ClientSettings:
        """The same client for calls that block up to ``block_seconds`` on the server."""
        return replace(self, socket_timeout=max(self.socket_timeout, block_seconds + BLOCK_MARGIN))


def command_timeout(environ: Mapping[str, str] | None = None) -> float:
    """``RFG_REDIS_TIMEOUT`` (seconds, > 0), else ``COMMAND_TIMEOUT`` (``events.config``)."""
    seconds: float = config.value("RFG_REDIS_TIMEOUT", environ)
    return seconds


def commands(environ: Mapping[str, str] | None = None) -> ClientSettings:
    """Settings for ordinary commands."""
    return ClientSettings(socket_timeout=command_timeout(environ))


def blocking(block_seconds: float, environ: Mapping[str, str] | None = None) -> ClientSettings:
    """Settings for a client whose longest call blocks ``block_seconds`` on the server."""
    return commands(environ).blocking(block_seconds)
