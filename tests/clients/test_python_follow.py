"""rfg_client's ``Client.follow`` (what the bot's two streams run on) against a scripted
Server-Sent Events server over real HTTP: a stream the server closes is resumed with the last
event's id as ``Last-Event-ID``; a 503 is waited out for its ``Retry-After``; a connection silent
past the read timeout is dropped and resumed; a 401 (a revoked or rotated token) ends it."""

from __future__ import annotations

import json
import threading
import time
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

import pytest
from rfg_client import ApiError, Client
from rfg_client import client as client_module


class Script(ThreadingHTTPServer):
    """Answers the n-th request with the n-th step: ``("events", [(id, type)...])`` (then
    closes), ``("status", code, headers)``, ``("silent", seconds)``."""

    daemon_threads = True

    def __init__(self, steps: list[tuple[Any, ...]]) -> None:
        super().__init__(("127.0.0.1", 0), _Step)
        self.steps = steps
        self.seen: list[str | None] = []  # each request's Last-Event-ID
        threading.Thread(target=self.serve_forever, daemon=True).start()


class _Step(BaseHTTPRequestHandler):
    server: Script

    def log_message(self, format: str, *args: Any) -> None:  # noqa: A002 - the base's name
        pass

    def do_GET(self) -> None:
        self.server.seen.append(self.headers.get("Last-Event-ID"))
        step = self.server.steps[min(len(self.server.seen), len(self.server.steps)) - 1]
        if step[0] == "status":
            body = json.dumps({"status": step[1], "title": "x", "detail": "scripted"}).encode()
            self.send_response(step[1])
            for k, v in step[2].items():
                self.send_header(k, v)
            self.send_header("Content-Length", str(len(body)))
            self.end_headers()
            self.wfile.write(body)
            return
        self.send_response(200)
        self.send_header("Content-Type", "text/event-stream")
        self.send_header("Connection", "close")
        self.end_headers()
        self.wfile.write(b"retry: 2000\n\n: keep-alive\n\n")
        self.wfile.flush()
        if step[0] == "silent":
            time.sleep(step[1])
            return
        for ident, kind in step[1]:
            data = json.dumps({"type": kind, "n": ident})
            frame = (f"id: {ident}\n" if ident else "") + f"event: {kind}\ndata: {data}\n\n"
            self.wfile.write(frame.encode())
        self.wfile.flush()


@pytest.fixture
def fast(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(client_module, "EVENTS_READ_TIMEOUT", 0.5)
    monkeypatch.setattr(client_module, "MAX_BACKOFF", 0.05)


def _take(events: Iterator[tuple[str, dict[str, Any]]], n: int) -> list[tuple[str, Any]]:
    return [(kind, data["n"]) for kind, data in (next(events) for _ in range(n))]


@pytest.mark.usefixtures("fast")
def test_follow_resumes_after_the_last_id_through_closes_503s_and_silence() -> None:
    server = Script(
        [
            ("events", [(None, "challenge"), ("1-0", "game-started")]),  # the state: last has id
            ("events", [("1-1", "game-finished")]),
            ("status", 503, {"Retry-After": "0"}),
            ("silent", 3.0),  # no byte after the first keep-alive: dropped after the timeout
            ("events", [("1-2", "challenge-accepted")]),
        ]
    )
    api = Client(f"http://127.0.0.1:{server.server_address[1]}", bot_token="rfgb_test")
    started = time.monotonic()
    got = _take(api.follow("/bots/me/events"), 4)
    assert got == [
        ("challenge", None),
        ("game-started", "1-0"),
        ("game-finished", "1-1"),
        ("challenge-accepted", "1-2"),
    ]
    assert server.seen == [None, "1-0", "1-1", "1-1", "1-1"]
    assert time.monotonic() - started < 2.5  # the silent connection was given up at 0.5 s
    server.shutdown()


@pytest.mark.usefixtures("fast")
def test_follow_ends_on_a_401_and_account_events_give_the_data() -> None:
    server = Script([("events", [("2-0", "game-started")]), ("status", 401, {})])
    api = Client(f"http://127.0.0.1:{server.server_address[1]}", bot_token="rfgb_test")
    events = api.account_events(last_event_id="1-9")
    assert next(events) == {"type": "game-started", "n": "2-0"}
    with pytest.raises(ApiError) as raised:
        next(events)
    assert raised.value.status == 401
    assert server.seen == ["1-9", "2-0"]
    server.shutdown()
