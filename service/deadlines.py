"""How long a client may take to send a request body: ``init_app`` wraps each request's input.

The server bounds the request head (gunicorn's gevent worker drops a connection whose head has
not arrived within ``--head-timeout`` seconds, ``rfg run``); the body is read later, by the app,
as a view asks for it. Here every read of it must finish by a deadline: ``BODY_READ_SECONDS``
(default 10) plus one second per ``BODY_MIN_RATE`` bytes it announced (32 KiB: a 32 MiB replay
upload gets about 17 minutes). A client that dribbles its body slower than that gets
``408 request-timeout`` and the connection is closed: a slow client costs a greenlet for a
bounded time, never a thread.

The deadline needs a cooperative server: under gevent (``rfg run``) each read runs under a
``gevent.Timeout``. The dev server and the test client read bodies in threads, where nothing
can interrupt a blocking read: there the input is left as it is.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Iterable
from typing import Any

from flask import Flask
from werkzeug.exceptions import RequestTimeout

#: bytes per second a body must arrive at, beyond the first ``BODY_READ_SECONDS``
BODY_MIN_RATE = 32 * 1024


class _Timeout(RequestTimeout):
    description = (
        "the request body did not arrive in time: send the whole body at once, "
        "right after the request head"
    )


class DeadlineInput:
    """``wsgi.input`` whose reads must be done by ``deadline`` (``time.monotonic()``)."""

    def __init__(self, stream: Any, deadline: float, timeout_class: Any) -> None:
        self._stream, self._deadline, self._timeout = stream, deadline, timeout_class

    def _call(self, fn: Callable[..., Any], *args: Any) -> Any:
        left = self._deadline - time.monotonic()
        if left <= 0:
            raise _Timeout()
        try:
            with self._timeout(left):
                return fn(*args)
        except self._timeout:
            raise _Timeout() from None

    def read(self, *args: Any) -> bytes:
        data: bytes = self._call(self._stream.read, *args)
        return data

    def readline(self, *args: Any) -> bytes:
        data: bytes = self._call(self._stream.readline, *args)
        return data

    def readlines(self, *args: Any) -> list[bytes]:
        data: list[bytes] = self._call(self._stream.readlines, *args)
        return data

    def __iter__(self) -> DeadlineInput:
        return self

    def __next__(self) -> bytes:
        line = self.readline()
        if not line:
            raise StopIteration
        return line


def _cooperative() -> Any:
    """``gevent.Timeout`` when gevent has patched the socket module, else None."""
    try:
        from gevent import Timeout, monkey
    except ImportError:
        return None
    return Timeout if monkey.is_module_patched("socket") else None


def init_app(app: Flask) -> None:
    timeout_class = _cooperative()
    if timeout_class is None:
        return
    inner = app.wsgi_app
    base = float(app.config["BODY_READ_SECONDS"])

    def with_deadline(environ: dict[str, Any], start_response: Any) -> Iterable[bytes]:
        stream = environ.get("wsgi.input")
        if stream is not None:
            try:
                announced = int(environ.get("CONTENT_LENGTH") or 0)
            except ValueError:
                announced = 0
            deadline = time.monotonic() + base + max(0, announced) / BODY_MIN_RATE
            environ["wsgi.input"] = DeadlineInput(stream, deadline, timeout_class)
        return inner(environ, start_response)

    app.wsgi_app = with_deadline  # type: ignore[method-assign]
