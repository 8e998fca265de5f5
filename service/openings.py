"""Stream openings take turns: at most ``STREAM_OPENINGS`` event streams of one process are being
opened at a time (their limits' check, the game's summary, the stream slot, up to the response
head); the others wait for a turn, costing memory only.

A stream's opening costs a millisecond or two of CPU; a thousand clients reconnecting at once
(a restart, a popular game) would otherwise queue a second or more of it ahead of every short
request that arrives meanwhile (a view, a command), since the server runs ready requests in
turn. With openings taking turns, a short request waits for at most ``STREAM_OPENINGS``
openings' steps, and the openings still use all the CPU they get. A stream waiting longer than
``OPENING_WAIT_SECONDS`` for its turn is answered 503 with ``Retry-After``.

The turns are a semaphore of the process (cooperative under the gevent server, where
``threading`` is gevent's), taken by a request hook for the stream endpoints and given back when
the request's context ends - for a stream, once its response head is ready, before its events.
"""

from __future__ import annotations

import threading

from flask import Flask, current_app, g, request

from service.errors import Problem

#: the endpoints whose openings take turns
STREAMS = frozenset({"events.public_stream", "events.seat_stream", "accounts.decisions"})
#: how long a stream waits for its turn to open before it is answered 503
OPENING_WAIT_SECONDS = 30.0
_TURN = "rfg_opening_turn"


def _take_turn() -> None:
    if request.endpoint not in STREAMS:
        return
    turns: threading.BoundedSemaphore = current_app.extensions["rfg-openings"]
    if not turns.acquire(timeout=OPENING_WAIT_SECONDS):
        raise Problem(
            "server-busy",
            f"this server has been opening more event streams than it takes at once for "
            f"{OPENING_WAIT_SECONDS:.0f} s; reconnect after Retry-After",
            status=503,
            headers={"Retry-After": "5"},
        )
    g._get_current_object().__dict__[_TURN] = turns


def _give_back(_exc: BaseException | None) -> None:
    turns = g.pop(_TURN, None)
    if turns is not None:
        turns.release()


def init_app(app: Flask) -> None:
    """Before every other hook: a stream's turn covers its limits' check too."""
    app.extensions["rfg-openings"] = threading.BoundedSemaphore(int(app.config["STREAM_OPENINGS"]))
    app.before_request_funcs.setdefault(None, []).insert(0, _take_turn)
    app.teardown_request(_give_back)
