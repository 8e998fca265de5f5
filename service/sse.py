"""Server-Sent Events: the one loop every ``text/event-stream`` of the API runs (``serve``), and
its source for a game's feed (``GameFeed``; the bot account's decisions stream is
``service.decisions``).

**The loop** (``serve``). It sends ``retry: <ms>`` first (the client reconnects after that long),
then whatever its source has ready, and waits on the source (the process's ``Fanout``: one
reader watches Redis for every stream of the process, no connection, thread or poll per stream)
until more may be ready, sending a ``: keep-alive`` comment after ``keepalive`` seconds of
silence so proxies keep the connection open: each stream's silence is a little shorter, drawn
once between ``(1-KEEPALIVE_SPREAD)*keepalive`` and ``keepalive``, so that streams that fell
silent together (the spectators of a game after its last event, a crowd that opened at once)
send theirs spread over most of a second rather than in one turn of the worker's loop (2,500 at
once held every request of the worker for 7-10 ms on a quiet machine, up to 100 ms on a loaded
one). It closes after ``max_seconds`` (the client
reconnects, resuming with ``Last-Event-ID``), when the source is done, once ``allowed`` (the
request's credential, asked once a keep-alive interval) says the token was revoked or rotated,
or when the process stops (``stop_streams``: gunicorn's hooks in ``service.gunicorn_conf`` call
it as a worker begins to stop): every open stream of the process then sends a last comment and
ends at once, whatever it waits on, and its client reconnects after ``retry`` ms, resuming with
``Last-Event-ID`` (on another process, or on the server started again). A stream ended so also
closes its connection (``response``): left open, an HTTP/1.1 connection would wait for another
request until the head timeout, holding the worker's stop for that long.
A client that stops reading is dropped once a write to it has waited ``SSE_SEND_SECONDS`` (its
send buffer full, ``_connection``); it resumes with ``Last-Event-ID``.
While Redis does not answer the stream stays open and says so in a comment every second or so,
and carries on when Redis answers again (an ``EventSource`` would not reconnect after the 503 a
new request gets meanwhile). Every frame's data is written by orjson, the one JSON library on the
wire; a stored view goes in as the bytes the projection wrote (``orjson.Fragment``).

**A game's feed** (``GameFeed``). Each event is sent as ``id: <seq>`` + ``data: <feed item
JSON>`` (the default ``message`` event, so ``EventSource.onmessage`` sees them all); a
reconnecting client sends ``Last-Event-ID`` and the stream resumes after it. After the game's last
event an ``end`` event is sent and the stream closes. Items come from ``GameService.feed`` only,
so redaction is the engine's ``redact``. Streams of one process that wait at the same place with
the same eyes (the spectators of one game, the streams of one seat) share one read of the feed,
redacted and framed once (``FeedPages``): each then writes the same text.

**The turn signal** (seat streams only, ``service.api.events.turn_signal``): after a batch of
events (the events one read returned, the stream caught up), the seat's view is read once (the
stored bytes ``GET .../view`` serves) and, when the seat owes a decision the stream has not
signalled yet, an ``event: decision`` frame follows the batch with the decision, its
``decision_id`` and the seat's view. It carries no ``id:`` (``Last-Event-ID`` stays the last
event's seq). On connect, resuming or not, the decision pending then (if any) is sent once after
the backlog: a decision is a level, what is owed now. A signal never runs ahead of the events: a
view newer than the last event the stream sent (its page was read before the latest append)
waits until those events are sent.

Under gunicorn's gevent worker (``rfg run``) an open stream costs a greenlet and its buffers;
the dev server and the test client give it a thread.
"""

from __future__ import annotations

import logging
import random
import socket
import threading
import time
from collections import OrderedDict
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from typing import Any, Protocol

import orjson
from flask import Response, current_app, request

from events.games.projections import Viewer
from events.games.service import GameService
from events.store import RedisStore
from service import fanout as _fanout
from service.fanout import STORE_ERRORS, Fanout
from service.limits import hold_stream

PAGE = 200
#: the send buffer of an event stream's connection (the kernel doubles it): what may wait there
#: for a client that stops reading, before its writes wait (and then time out, ``_connection``)
SEND_BUFFER = 64 * 1024
log = logging.getLogger(__name__)

#: the turn signal's reader: (the decision's id, the game version of the view it was read from,
#: the frame's data) or None (nothing owed)
TurnReader = Callable[[], tuple[int, int, bytes] | None]


#: how much shorter than ``keepalive`` a stream's silence before a keep-alive may be (a share)
KEEPALIVE_SPREAD = 0.05

#: the last frame of every stream when the process stops (a comment: ``EventSource`` reconnects)
STOPPING = ": the server is stopping; reconnect (Last-Event-ID resumes the stream)\n\n"


class _Stop:
    """The process-wide stop flag (``stop_streams``)."""

    requested = False


def stop_streams() -> None:
    """End every open stream of the process: each sends ``STOPPING`` and closes, now (those
    waiting on the process's ``Fanout`` are woken) and from now on (a new one ends after its
    ``retry``). Called once the process stops taking requests; idempotent."""
    _Stop.requested = True
    _fanout.close_all()


def stopping() -> bool:
    """Whether ``stop_streams`` was called in this process."""
    return _Stop.requested


def still_allowed(allowed: Callable[[], bool]) -> bool:
    """The credential check, taken as passed while the store does not answer."""
    try:
        return allowed()
    except STORE_ERRORS:
        return True


def response(stream: Iterator[str]) -> Response:
    """The HTTP response of an event stream (every stream endpoint's): counted among the
    client's open streams while it runs (``service.limits.hold_stream``), never buffered by a
    proxy, sent on a connection that drops a client that stops reading (``_connection``), and
    that connection closed once a stopping process ended it."""
    send_seconds = float(current_app.config["SSE_SEND_SECONDS"])
    body = _connection(hold_stream(stream), request.environ, send_seconds)
    resp = Response(body, mimetype="text/event-stream")
    resp.headers["Cache-Control"] = "no-cache"
    resp.headers["X-Accel-Buffering"] = "no"
    return resp


def _connection(body: Iterator[str], environ: dict[str, Any], send_seconds: float) -> Iterator[str]:
    """``body`` on its client's connection (gunicorn's ``gunicorn.socket``; elsewhere - the dev
    server, the test client - ``body`` as it is).

    A client that stops reading is dropped: the connection's send buffer is bounded
    (``SEND_BUFFER``) and every write on it must be done within ``send_seconds``, else the
    server gives the connection up (gunicorn closes it; ``service.gunicorn_conf`` logs it) and
    the stream's greenlet ends. Only that stream waits on its client: the others are written by
    greenlets of their own. The client resumes with ``Last-Event-ID`` (the last whole frame it
    got; an ``EventSource`` drops a partial one). The timeout stays for the connection's life.

    Once ``body`` ends, if the process is stopping, the server stops reading from the connection:
    it sends the body's last chunk, finds no further request and closes it at once, instead of
    keeping it for the client's next request (up to the head timeout, as long as a stop then
    waits)."""
    sock = environ.get("gunicorn.socket")
    if not isinstance(sock, socket.socket):
        yield from body
        return
    try:
        sock.setsockopt(socket.SOL_SOCKET, socket.SO_SNDBUF, SEND_BUFFER)
        sock.settimeout(send_seconds)
    except OSError:
        pass  # the client is gone already: the first write says so
    yield from body
    if _Stop.requested:
        try:
            sock.shutdown(socket.SHUT_RD)
        except OSError:
            pass  # the client is gone already


def frame(data: Any, event: str | None = None, ident: str | None = None) -> str:
    """One Server-Sent Event: ``data`` is written as JSON (bytes are JSON already)."""
    raw = data if isinstance(data, bytes) else orjson.dumps(data)
    head = (f"id: {ident}\n" if ident is not None else "") + (
        f"event: {event}\n" if event is not None else ""
    )
    return f"{head}data: {raw.decode('utf-8')}\n\n"


class Source(Protocol):
    """What one stream sends, for ``serve``."""

    def ready(self) -> list[str]:
        """The frames ready now (may raise a store error: asked again once the store answers)."""

    def more(self) -> bool:
        """Whether more is ready at once (``ready`` is asked again without waiting)."""

    def done(self) -> bool:
        """Whether the stream has sent everything it ever will."""

    def wait(self, seconds: float) -> bool:
        """Wait up to ``seconds`` for something new; whether it came."""


def serve(
    source: Source,
    *,
    max_seconds: float,
    keepalive: float,
    retry_ms: int = 2000,
    allowed: Callable[[], bool] | None = None,
    name: str = "",
) -> Iterator[str]:
    """The stream described above (``name`` says which in the logs)."""
    deadline = time.monotonic() + max_seconds
    next_check = time.monotonic() + keepalive
    last_sent = time.monotonic()  # a keep-alive goes out after ``quiet`` s of silence
    quiet = keepalive * (1 - KEEPALIVE_SPREAD * random.random())
    down = False
    yield f"retry: {retry_ms}\n\n"
    while True:
        if _Stop.requested:
            yield STOPPING
            return
        if allowed is not None and time.monotonic() >= next_check:
            next_check = time.monotonic() + keepalive
            if not still_allowed(allowed):
                yield ": the token of this stream was revoked\n\n"
                return
        try:
            frames = source.ready()
        except STORE_ERRORS as exc:
            if time.monotonic() >= deadline:
                return
            if not down:
                log.warning("SSE %s: the store does not answer (%s); the stream waits", name, exc)
            down = True
            yield ": the event store is unreachable; waiting for it\n\n"
            last_sent = time.monotonic()
            _pause(deadline)
            continue
        down = False
        if frames:
            yield from frames
            last_sent = time.monotonic()
        if source.done():
            return
        if source.more():
            continue
        now = time.monotonic()
        if now >= deadline:
            return
        wait = min(deadline, last_sent + quiet) - now
        if allowed is not None:
            wait = min(wait, next_check - now)
        if not source.wait(max(0.0, wait)) and time.monotonic() - last_sent >= quiet:
            yield ": keep-alive\n\n"
            last_sent = time.monotonic()


def _pause(deadline: float) -> None:
    """About a second (not past ``deadline``): the store is not answering."""
    time.sleep(min(1.0, max(0.0, deadline - time.monotonic())))


@dataclass(frozen=True)
class Page:
    """Up to ``PAGE`` items of a game's feed for one viewer, framed once (``id: <seq>`` and
    ``data: <item>`` each) for every stream of the process that sends them: one text, so one
    write per stream."""

    text: str
    last: int | None  # the seq of its last item (None: no item)
    ended: bool  # it holds the game's ``GameEnded``
    full: bool  # ``PAGE`` items: more may be ready at once


def _page(items: list[dict[str, Any]]) -> Page:
    return Page(
        "".join(frame(item, ident=str(item["seq"])) for item in items),
        items[-1]["seq"] if items else None,
        any(item["type"] == "GameEnded" for item in items),
        len(items) >= PAGE,
    )


class FeedPages:
    """Pages of a game's feed read and framed for one stream and kept for the others of the
    process that ask for the same page (game, viewer, after) before the game moves again: a
    thousand spectators of one game (or the streams of one seat) read each new event from Redis
    once and encode it once, then each writes the same text.

    A page is kept with the ``Fanout`` generation of its game's key when it was read, and used
    only while that generation holds; at most ``size`` pages, the least recently used go."""

    def __init__(self, games: GameService, fanout: Fanout, size: int = 512) -> None:
        self.games, self.fanout, self.size = games, fanout, size
        self._pages: OrderedDict[tuple[str, Viewer, int], tuple[int, Page]] = OrderedDict()
        self._lock = threading.Lock()
        self._reading: dict[tuple[str, Viewer, int], threading.Lock] = {}

    def read(self, game_id: str, key: str, viewer: Viewer, after: int) -> Page:
        """The page after ``after`` (from Redis, or one read since the game's stream last
        moved)."""
        name = (game_id, viewer, after)
        kept = self._kept(name, key)
        if kept is not None:
            return kept
        with self._lock:
            reading = self._reading.setdefault(name, threading.Lock())
        with reading:  # one read per page at a time: the others wait for it and share it
            kept = self._kept(name, key)
            if kept is not None:
                return kept
            gen = self.fanout.generation(key)
            try:
                page = _page(self.games.feed(game_id, viewer, after=after, limit=PAGE))
            finally:
                with self._lock:
                    self._reading.pop(name, None)
            with self._lock:
                self._pages[name] = (gen, page)
                self._pages.move_to_end(name)
                while len(self._pages) > self.size:
                    self._pages.popitem(last=False)
            return page

    def _kept(self, name: tuple[str, Viewer, int], key: str) -> Page | None:
        gen = self.fanout.generation(key)
        with self._lock:
            kept = self._pages.get(name)
            if kept is not None and kept[0] == gen and gen >= 0:
                self._pages.move_to_end(name)
                return kept[1]
        return None


class GameFeed:
    """A game's feed for one viewer from ``after`` on, as a ``Source``; ``finished`` and
    ``version`` describe the game when the request came (a finished game's stream ends once the
    client has every event). ``turn`` (a seat stream) reads the turn signal, asked once the
    stream has caught up: at connect and after each batch."""

    def __init__(
        self,
        pages: FeedPages,
        store: RedisStore,
        game_id: str,
        viewer: Viewer,
        after: int,
        *,
        finished: bool,
        version: int,
        turn: TurnReader | None = None,
    ) -> None:
        self.pages, self.game_id, self.viewer, self.turn = pages, game_id, viewer, turn
        self.key = store.keys(game_id)[0]
        self.cursor, self.finished, self.version = after, finished, version
        self.signalled: int | None = None  # the decision_id of the last turn signal sent
        self.ask_turn = turn is not None  # at connect, then after each batch of events
        self.full_page = False
        self.ended = False

    def ready(self) -> list[str]:
        page = self.pages.read(self.game_id, self.key, self.viewer, self.cursor)
        self.ask_turn = self.ask_turn or page.last is not None
        pending = None
        if self.turn is not None and self.ask_turn and not page.full and not self.finished:
            pending = self.turn()  # read after the events: never behind them
        if page.last is not None:
            self.cursor = self.version = page.last
        self.finished = self.finished or page.ended
        out = [page.text] if page.text else []
        self.full_page = page.full
        if page.full:
            return out
        self.ask_turn = False
        if pending is not None and pending[1] > self.cursor:
            # the view is ahead of the events this stream has sent (the page came from before
            # the latest append): the signal waits for those events, asked again after them
            self.ask_turn, pending = True, None
        if pending is not None and pending[0] != self.signalled and not self.finished:
            self.signalled = pending[0]
            out.append(frame(pending[2], event="decision"))
        if self.finished:
            out.append(frame({"game_id": self.game_id, "version": self.version}, event="end"))
            self.ended = True
        return out

    def more(self) -> bool:
        return self.full_page

    def done(self) -> bool:
        return self.ended

    def wait(self, seconds: float) -> bool:
        return self.pages.fanout.wait(self.key, (self.cursor, 0), seconds)
