"""Server-Sent Events: a game's feed for one viewer as a ``text/event-stream``.

Each event is sent as ``id: <seq>`` + ``data: <feed item JSON>`` (the default ``message`` event,
so ``EventSource.onmessage`` sees them all); a reconnecting client sends ``Last-Event-ID`` and the
stream resumes after it. While nothing happens the server waits on the game's Redis stream with
``XREAD BLOCK`` (no polling) and sends a ``: keep-alive`` comment every ``keepalive`` seconds so
proxies keep the connection open. After the game's last event an ``end`` event is sent and the
stream closes; otherwise it closes after ``max_seconds`` and the client reconnects (``retry``).
That bound also frees the worker under gunicorn's sync workers (keep it below gunicorn's
``--timeout`` there: a sync worker cannot report alive while it streams); a threaded server (the
dev server, gunicorn ``gthread`` as ``make run`` uses) serves streams and commands side by side.

Items come from ``Games.feed`` only, so redaction is the engine's ``redact``.
"""

from __future__ import annotations

import json
import logging
import time
from collections.abc import Callable, Iterator
from typing import Any

import redis

from events import RedisStore
from events.games import Games
from events.projections import Viewer

PAGE = 200
#: what redis-py raises while Redis is down, restarting or stalled
STORE_ERRORS = (redis.exceptions.ConnectionError, redis.exceptions.TimeoutError)
log = logging.getLogger(__name__)


def still_allowed(allowed: Callable[[], bool]) -> bool:
    """The credential check, taken as passed while the store does not answer."""
    try:
        return allowed()
    except STORE_ERRORS:
        return True


def frame(item: dict[str, Any]) -> str:
    return f"id: {item['seq']}\ndata: {json.dumps(item, separators=(',', ':'))}\n\n"


def event_stream(
    games: Games,
    store: RedisStore,
    game_id: str,
    viewer: Viewer,
    after: int,
    *,
    finished: bool,
    version: int,
    max_seconds: float,
    keepalive: float,
    retry_ms: int = 2000,
    blocking_client: Any = None,
    allowed: Callable[[], bool] | None = None,
) -> Iterator[str]:
    """Frames from ``after`` on; ``finished`` and ``version`` describe the game when the request
    came (a finished game's stream ends once the client has every event).

    ``blocking_client`` (default ``store.client``) does the ``XREAD BLOCK``: its socket timeout
    must exceed ``keepalive``. While Redis is unreachable the stream stays open and says so in a
    comment every second or so, and carries on when Redis answers again (an ``EventSource`` would
    not reconnect after the 503 a new request gets meanwhile).

    ``allowed`` (the request's credential, ``service.auth.credential_check``) is asked at least
    once a keep-alive interval: once the token is revoked or rotated the stream closes."""
    deadline = time.monotonic() + max_seconds
    stream_key = store.keys(game_id)[0]
    cursor = after
    yield f"retry: {retry_ms}\n\n"
    reader = store.client if blocking_client is None else blocking_client
    down = False
    next_check = time.monotonic() + min(1.0, keepalive)
    while True:
        if allowed is not None and time.monotonic() >= next_check:
            next_check = time.monotonic() + min(1.0, keepalive)
            if not still_allowed(allowed):
                yield ": the token of this stream was revoked\n\n"
                return
        try:
            items = games.feed(game_id, viewer, after=cursor, limit=PAGE)
        except STORE_ERRORS as exc:
            if time.monotonic() >= deadline:
                return
            if not down:
                log.warning(
                    "SSE %s: the store does not answer (%s); the stream waits", game_id, exc
                )
            down = True
            yield ": the event store is unreachable; waiting for it\n\n"
            _pause(deadline)
            continue
        down = False
        for item in items:
            cursor = version = item["seq"]
            finished = finished or item["type"] == "GameEnded"
            yield frame(item)
        if len(items) == PAGE:
            continue
        if finished:
            yield f"event: end\ndata: {json.dumps({'game_id': game_id, 'version': version})}\n\n"
            return
        left = deadline - time.monotonic()
        if left <= 0:
            return
        if not _wait_for_more(reader, stream_key, cursor, min(keepalive, left), deadline):
            yield ": keep-alive\n\n"


def _pause(deadline: float) -> None:
    """About a second (not past ``deadline``): the store is not answering."""
    time.sleep(min(1.0, max(0.0, deadline - time.monotonic())))


def _wait_for_more(reader: Any, key: str, cursor: int, wait: float, deadline: float) -> bool:
    """``XREAD BLOCK`` until an event after ``cursor`` is stored (True) or ``wait`` seconds have
    passed (False: a keep-alive is due). A store error pauses and counts as True: the feed read
    at the top of the stream's loop reports it and waits."""
    try:
        got = reader.xread({key: f"{cursor}-0"}, count=1, block=max(1, int(wait * 1000)))
    except STORE_ERRORS:
        _pause(deadline)
        return True
    return bool(got)
