"""Server-Sent Events: a game's feed for one viewer as a ``text/event-stream``.

Each event is sent as ``id: <seq>`` + ``data: <feed item JSON>`` (the default ``message`` event,
so ``EventSource.onmessage`` sees them all); a reconnecting client sends ``Last-Event-ID`` and the
stream resumes after it. While nothing happens the stream waits on the process's ``Fanout`` (one
reader watches the game's Redis stream for every stream of the process: no connection, thread or
poll of its own) and sends a ``: keep-alive`` comment every ``keepalive`` seconds so proxies keep
the connection open. After the game's last event an ``end`` event is sent and the stream closes;
otherwise it closes after ``max_seconds`` and the client reconnects (``retry``).

**The turn signal** (seat streams only: ``turn``, see ``service.api.events``): after a batch of
events (the events one read returned, the stream caught up), the seat's decision is read once
(its view: ``GameService.view``, the same read a ``GET .../view`` makes) and, when the seat owes a
decision the stream has not signalled yet, an ``event: decision`` frame follows the batch with
the decision, its ``decision_id`` and the seat's view. It carries no ``id:`` (``Last-Event-ID``
stays the last event's seq). On connect, resuming or not, the decision pending then (if any) is
sent once after the backlog: a decision is a level, what is owed now.

Under gunicorn's gevent worker (``rfg run``) an open stream costs a greenlet and its buffers;
the dev server and the test client give it a thread.

Items come from ``GameService.feed`` only, so redaction is the engine's ``redact``. Streams of one
process that wait at the same place with the same eyes (spectators of one game) share one read
of the feed (``FeedPages``).
"""

from __future__ import annotations

import json
import logging
import threading
import time
from collections import OrderedDict
from collections.abc import Callable, Iterator
from typing import Any

from events.games.projections import Viewer
from events.games.service import GameService
from events.store import RedisStore
from service.fanout import STORE_ERRORS, Fanout

PAGE = 200
log = logging.getLogger(__name__)


def still_allowed(allowed: Callable[[], bool]) -> bool:
    """The credential check, taken as passed while the store does not answer."""
    try:
        return allowed()
    except STORE_ERRORS:
        return True


def frame(item: dict[str, Any]) -> str:
    return f"id: {item['seq']}\ndata: {json.dumps(item, separators=(',', ':'))}\n\n"


def decision_frame(turn: dict[str, Any]) -> str:
    """The turn signal: no ``id`` (a client's ``Last-Event-ID`` stays the last event's seq)."""
    return f"event: decision\ndata: {json.dumps(turn, separators=(',', ':'))}\n\n"


class FeedPages:
    """Pages of a game's feed read for one stream and kept for the others of the process that
    ask for the same page (game, viewer, after) before the game moves again: a thousand
    spectators of one game read each new event from Redis once, not a thousand times.

    A page is kept with the ``Fanout`` generation of its game's key when it was read, and used
    only while that generation holds; at most ``size`` pages, the least recently used go."""

    def __init__(self, games: GameService, fanout: Fanout, size: int = 512) -> None:
        self.games, self.fanout, self.size = games, fanout, size
        self._pages: OrderedDict[tuple[str, str, int], tuple[int, list[dict[str, Any]]]] = (
            OrderedDict()
        )
        self._lock = threading.Lock()
        self._reading: dict[tuple[str, str, int], threading.Lock] = {}

    def read(self, game_id: str, key: str, viewer: Viewer, after: int) -> list[dict[str, Any]]:
        """Up to ``PAGE`` feed items after ``after`` (from Redis, or a page read since the game's
        stream last moved)."""
        if not isinstance(viewer, str):  # a seat's page serves one stream only: not kept
            return self.games.feed(game_id, viewer, after=after, limit=PAGE)
        name = (game_id, viewer, after)
        with self._lock:
            reading = self._reading.setdefault(name, threading.Lock())
        with reading:  # one read per page at a time: the others wait for it and share it
            gen = self.fanout.generation(key)
            with self._lock:
                kept = self._pages.get(name)
                if kept is not None and kept[0] == gen and gen >= 0:
                    self._pages.move_to_end(name)
                    return kept[1]
            try:
                items = self.games.feed(game_id, viewer, after=after, limit=PAGE)
            finally:
                with self._lock:
                    self._reading.pop(name, None)
            with self._lock:
                self._pages[name] = (gen, items)
                self._pages.move_to_end(name)
                while len(self._pages) > self.size:
                    self._pages.popitem(last=False)
            return items


def event_stream(
    pages: FeedPages,
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
    allowed: Callable[[], bool] | None = None,
    turn: Callable[[], dict[str, Any] | None] | None = None,
) -> Iterator[str]:
    """Frames from ``after`` on; ``finished`` and ``version`` describe the game when the request
    came (a finished game's stream ends once the client has every event).

    While Redis is unreachable the stream stays open and says so in a comment every second or
    so, and carries on when Redis answers again (an ``EventSource`` would not reconnect after the
    503 a new request gets meanwhile).

    ``allowed`` (the request's credential, ``service.auth.credential_check``) is asked once a
    keep-alive interval: once the token is revoked or rotated the stream closes.

    ``turn`` (a seat stream) reads the seat's pending decision as the turn signal's data (None:
    it owes nothing), asked once the stream has caught up: at connect and after each batch."""
    deadline = time.monotonic() + max_seconds
    stream_key = store.keys(game_id)[0]
    cursor = after
    yield f"retry: {retry_ms}\n\n"
    down = False
    signalled: Any = None  # the decision_id of the last turn signal sent
    ask_turn = turn is not None  # at connect, then after each batch of events
    next_check = time.monotonic() + keepalive
    last_sent = time.monotonic()  # a keep-alive goes out after ``keepalive`` s of silence
    while True:
        if allowed is not None and time.monotonic() >= next_check:
            next_check = time.monotonic() + keepalive
            if not still_allowed(allowed):
                yield ": the token of this stream was revoked\n\n"
                return
        pending: dict[str, Any] | None = None
        try:
            items = pages.read(game_id, stream_key, viewer, cursor)
            ask_turn = ask_turn or bool(items)
            last_page = len(items) < PAGE
            if turn is not None and ask_turn and last_page and not finished:
                pending = turn()  # read after the events: never behind them
        except STORE_ERRORS as exc:
            if time.monotonic() >= deadline:
                return
            if not down:
                log.warning(
                    "SSE %s: the store does not answer (%s); the stream waits", game_id, exc
                )
            down = True
            yield ": the event store is unreachable; waiting for it\n\n"
            last_sent = time.monotonic()
            _pause(deadline)
            continue
        down = False
        for item in items:
            cursor = version = item["seq"]
            finished = finished or item["type"] == "GameEnded"
            yield frame(item)
            last_sent = time.monotonic()
        if not last_page:
            continue
        ask_turn = False
        if pending is not None and pending["decision_id"] != signalled and not finished:
            signalled = pending["decision_id"]
            yield decision_frame(pending)
            last_sent = time.monotonic()
        if finished:
            yield f"event: end\ndata: {json.dumps({'game_id': game_id, 'version': version})}\n\n"
            return
        now = time.monotonic()
        if now >= deadline:
            return
        wait = min(deadline, last_sent + keepalive) - now
        if allowed is not None:
            wait = min(wait, next_check - now)
        if not pages.fanout.wait(stream_key, f"{cursor}-0", max(0.0, wait)):
            if time.monotonic() - last_sent >= keepalive:
                yield ": keep-alive\n\n"
                last_sent = time.monotonic()


def _pause(deadline: float) -> None:
    """About a second (not past ``deadline``): the store is not answering."""
    time.sleep(min(1.0, max(0.0, deadline - time.monotonic())))
