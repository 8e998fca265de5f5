"""Many connections against the API as ``rfg run`` serves it (``rfgcli.run.api_command``: gunicorn's
gevent worker), on a Redis of the test's own: open event streams, slow and silent clients cost
the server memory, not a thread or a Redis connection each.

On the threaded server this replaced (gunicorn gthread, 8 threads a worker) every open stream
held a thread and a blocking Redis connection, and a client sending its request head a byte at a
time held a thread until it finished: 16 streams or 12 slow clients stopped every other request.
Counts stay small here (loopback only, bounded time); ``bench/streams.py`` measures thousands.
"""

from __future__ import annotations

import http.client
import json
import socket
import threading
import time
from collections.abc import Callable
from typing import Any
from urllib.parse import urlsplit

import pytest
import redis
from rfg_client import Client

from tests.processes import Proc

from .conftest import ADMIN, RedisServer

pytestmark = [pytest.mark.redis]

STREAMS = 200
ADDRESSES = 50  # 4 streams each: within the per-address and per-token caps, as real users are
SLOW = 40
POOL = 64  # API_REDIS_CONNECTIONS' default


def _addr(i: int) -> str:
    return f"127.0.{1 + i // 250}.{1 + i % 250}"


def _open_stream(host: str, port: int, path: str, source: str) -> socket.socket:
    s = socket.create_connection((host, port), timeout=30, source_address=(source, 0))
    s.sendall(f"GET {path} HTTP/1.1\r\nHost: x\r\nAccept: text/event-stream\r\n\r\n".encode())
    return s


def _read_until(s: socket.socket, marker: bytes, limit: float) -> bytes:
    """What ``s`` sent until ``marker`` appeared (or the time or the connection ran out)."""
    got = b""
    deadline = time.monotonic() + limit
    while marker not in got and time.monotonic() < deadline:
        s.settimeout(max(0.1, deadline - time.monotonic()))
        try:
            chunk = s.recv(65536)
        except TimeoutError:
            break
        if not chunk:
            break
        got += chunk
    return got


def _dribble(host: str, port: int, source: str, stop: threading.Event, closed: list[float]) -> None:
    """A client that sends a request head one byte a second and notes when the server hangs up."""
    head = b"GET /healthz HTTP/1.1\r\nHost: slow.example\r\nX-Padding: " + b"x" * 60 + b"\r\n\r\n"
    started = time.monotonic()
    try:
        s = socket.create_connection((host, port), timeout=5, source_address=(source, 0))
    except OSError:
        return
    with s:
        for byte in head:
            if stop.is_set():
                return
            try:
                s.sendall(bytes([byte]))
            except OSError:
                closed.append(time.monotonic() - started)
                return
            if stop.wait(1.0):
                return
            s.setblocking(False)
            try:
                if s.recv(1) == b"":
                    closed.append(time.monotonic() - started)
                    return
            except BlockingIOError:
                pass
            except OSError:
                closed.append(time.monotonic() - started)
                return
            finally:
                s.setblocking(True)


def _clients(r: redis.Redis) -> int:
    return int(r.info("clients")["connected_clients"])


def test_streams_and_slow_clients_cost_neither_threads_nor_redis_connections(
    own_redis: RedisServer, start_api: Callable[..., tuple[Proc, str]]
) -> None:
    url = f"redis://127.0.0.1:{own_redis.port}/0"
    proc, base = start_api(url, "many", workers=1, RFG_SSE_MAX_SECONDS="120")
    host, port = urlsplit(base).hostname or "", urlsplit(base).port or 0
    api = Client(base, admin_token=ADMIN, timeout=10)
    gid = api.create_game([{"kind": "human"}, {"kind": "human"}], seed="many")["game_id"]
    probe = redis.Redis.from_url(url)
    before = _clients(probe)

    stop = threading.Event()
    hung_up: list[float] = []
    slow = [
        threading.Thread(
            target=_dribble, args=(host, port, _addr(200 + i), stop, hung_up), daemon=True
        )
        for i in range(SLOW)
    ]
    for t in slow:
        t.start()
    streams = [
        _open_stream(host, port, f"/games/{gid}/events/stream", _addr(i % ADDRESSES))
        for i in range(STREAMS)
    ]
    try:
        firsts = [_read_until(s, b"\nid: 1\n", 30) for s in streams]
        missing = [i for i, got in enumerate(firsts) if b"id: 1" not in got]
        assert not missing, (
            f"{len(missing)} of {STREAMS} streams got no event; first: {firsts[missing[0]][:300]!r}"
            f"\nAPI log:\n{proc.log()[-2000:]}"
        )
        # every stream open and waiting, slow clients mid-head: the API still answers everyone
        answered = 0
        for _ in range(10):
            c = http.client.HTTPConnection(host, port, timeout=10)
            c.request("GET", "/healthz")
            assert c.getresponse().status == 200
            c.close()
            answered += 1
        view = api.view(gid)
        assert view["version"] >= 1 and answered == 10
        # and the streams wait on one reader, not on a Redis connection each: the API holds at
        # most its pool (requests borrow from it) and the reader's own connection
        held = _clients(probe) - before
        assert held <= POOL + 2, f"{STREAMS} open streams hold {held} Redis connections"

        # a new event reaches every open stream
        token = api.claim(gid, 0)
        seat = api.view(gid, seat=0, token=token)
        from bots import get_bot
        from engine.rng import Rng

        command = get_bot("random").act(seat["view"]["decision"], None, Rng(1))
        api.submit(gid, 0, command, expected_version=seat["version"], token=token)
        nxt = f"\nid: {seat['version'] + 1}\n".encode()
        late = [i for i, s in enumerate(streams) if nxt not in _read_until(s, nxt, 20)]
        assert not late, f"{len(late)} of {STREAMS} streams did not get the new event"
    finally:
        for s in streams:
            s.close()
    # the slow clients (each would take 100 s to send its head) are dropped once the head
    # timeout (5 s) has passed, not served for as long as they keep dribbling
    for t in slow:
        t.join(timeout=15)
    stop.set()
    assert len(hung_up) >= SLOW * 0.9, f"only {len(hung_up)} of {SLOW} slow clients were dropped"
    assert max(hung_up) < 30, hung_up


def test_a_body_sent_too_slowly_gets_408(
    real_redis: Any, prefix: str, start_api: Callable[..., tuple[Proc, str]]
) -> None:
    from tests.conftest import REDIS_URL

    _proc, base = start_api(REDIS_URL, prefix, RFG_BODY_READ_SECONDS="2")
    host, port = urlsplit(base).hostname or "", urlsplit(base).port or 0
    body = json.dumps({"seats": [{"kind": "human"}, {"kind": "human"}]}).encode()
    with socket.create_connection((host, port), timeout=20) as s:
        s.sendall(
            b"POST /games HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\n"
            b"Content-Length: " + str(len(body)).encode() + b"\r\n\r\n" + body[:3]
        )
        answer = b""
        for byte in body[3:]:  # a byte a second: 2 s of grace run out long before the end
            try:
                s.sendall(bytes([byte]))
            except OSError:
                break
            s.settimeout(1.0)
            try:
                chunk = s.recv(65536)
            except TimeoutError:
                continue
            answer += chunk
            if not chunk or b"\r\n\r\n" in answer:
                break
        answer += _read_until(s, b"}", 5)
        # the connection is closed once the head timeout passes without a new request
        s.settimeout(15)
        assert s.recv(1) == b"", "the server kept the connection after the 408"
    status, _, rest = answer.partition(b"\r\n")
    assert status.startswith(b"HTTP/1.1 408"), answer[:400]
    assert b"request-timeout" in rest
    # the server still serves the next client
    assert Client(base, admin_token=ADMIN, timeout=10).create_game(
        [{"kind": "human"}, {"kind": "human"}]
    )["game_id"]


def test_a_stop_ends_every_stream_with_a_resumable_last_frame_within_3_s(
    own_redis: RedisServer, start_api: Callable[..., tuple[Proc, str]]
) -> None:
    """SIGTERM with streams open: each gets the stopping comment after its events (its client
    resumes with ``Last-Event-ID``) and its connection closed, and the server exits within 3 s,
    well inside its 15 s graceful timeout (before, each ended stream kept its connection open
    for another request until the 5 s head timeout, holding the stop that long)."""
    url = f"redis://127.0.0.1:{own_redis.port}/0"
    proc, base = start_api(url, "stop", workers=2, RFG_SSE_MAX_SECONDS="120")
    host, port = urlsplit(base).hostname or "", urlsplit(base).port or 0
    api = Client(base, admin_token=ADMIN, timeout=10)
    gid = api.create_game([{"kind": "human"}, {"kind": "human"}], seed="stop")["game_id"]
    streams = [
        _open_stream(host, port, f"/games/{gid}/events/stream", _addr(i % 25)) for i in range(100)
    ]
    try:
        firsts = [_read_until(s, b"\nid: 1\n", 30) for s in streams]
        assert all(b"id: 1" in got for got in firsts), proc.log()[-2000:]
        started = time.monotonic()
        proc.send_signal(15)
        ends = [_read_until(s, b"\r\n0\r\n\r\n", 10) for s in streams]
        proc.wait(10)
        took = time.monotonic() - started
    finally:
        for s in streams:
            s.close()
    stopped = [got for got in ends if b"the server is stopping" in got]
    assert len(stopped) == len(streams), f"{len(stopped)} of {len(streams)} got the last frame"
    # the last frame is a comment: the client's Last-Event-ID is still its last event's seq
    assert all(b"\nid: " not in got for got in ends)
    assert took < 3.0, f"the server took {took:.1f} s to stop\n{proc.log()[-2000:]}"
