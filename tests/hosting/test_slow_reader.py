"""A client that stops reading an event stream, against the API as ``rfg run`` serves it: its
connection's send buffer is bounded and a write that waits ``RFG_SSE_SEND_SECONDS`` for it drops
it (``service.sse._connection``), while another spectator of the same game gets each new event
as it comes; the dropped client resumes with ``Last-Event-ID``."""

from __future__ import annotations

import http.client
import json
import re
import socket
import time
from collections.abc import Callable
from typing import Any
from urllib.parse import urlsplit

import pytest

import engine
from bots import get_bot
from engine.rng import Rng
from service.gunicorn_conf import DROPPED
from tests.processes import Proc

from .conftest import ADMIN, RedisServer

pytestmark = [pytest.mark.redis]

SEND_SECONDS = 2.0
LIVE = 12  # commands sent while both spectators are connected, the last ones of the game
PROMPTLY = 1.0  # seconds within which the reading spectator must get each new event


def _call(port: int, method: str, path: str, body: Any = None, token: str | None = None) -> Any:
    conn = http.client.HTTPConnection("127.0.0.1", port, timeout=10)
    headers = {"Content-Type": "application/json"}
    if token:
        headers["Authorization"] = f"Bearer {token}"
    conn.request(method, path, json.dumps(body) if body is not None else None, headers)
    resp = conn.getresponse()
    out = json.loads(resp.read() or b"null")
    conn.close()
    assert resp.status in (200, 201), (method, path, resp.status, out)
    return out


def _script(seed: str) -> list[tuple[int, dict[str, Any], int]]:
    """A whole 2-player game played by the random bot: (seat, command, version it expects)."""
    events = engine.create(seed, 2, {}, None)  # the game the server deals for this seed
    state, version = engine.replay(events), len(events)
    bot, rng = get_bot("random"), Rng(7)
    out = []
    while engine.pending(state):
        seat = min(engine.pending(state))
        cmd = bot.act(engine.legal(state, seat), None, rng)
        out.append((seat, cmd, version))
        engine.evolve(state, engine.command_submitted(seat, cmd))
        version += 1 + len(engine.play(state, seat, cmd))
    return out


def _stream(port: int, gid: str, source: str, last_id: int | None = None) -> socket.socket:
    s = socket.socket()
    s.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, 4096)  # a small window, set before connect
    s.bind((source, 0))
    s.connect(("127.0.0.1", port))
    resume = f"Last-Event-ID: {last_id}\r\n" if last_id is not None else ""
    s.sendall(f"GET /games/{gid}/events/stream HTTP/1.1\r\nHost: x\r\n{resume}\r\n".encode())
    return s


def _ids(data: bytes) -> list[int]:
    """The ids of the whole frames in ``data`` (a frame ends with a blank line)."""
    return [int(m) for m in re.findall(rb"id: ([0-9]+)\ndata: [^\n]*\n\n", data)]


def test_a_client_that_stops_reading_is_dropped_and_the_others_keep_flowing(
    own_redis: RedisServer, start_api: Callable[..., tuple[Proc, str]]
) -> None:
    url = f"redis://127.0.0.1:{own_redis.port}/0"
    proc, base = start_api(url, "slowread", workers=1, RFG_SSE_SEND_SECONDS=str(SEND_SECONDS))
    port = urlsplit(base).port or 0
    seed = "slow-reader"
    gid = _call(port, "POST", "/games", {"seats": [{"kind": "human"}] * 2, "seed": seed}, ADMIN)[
        "game_id"
    ]
    tokens = {s: _call(port, "POST", f"/games/{gid}/seats/{s}/claim")["token"] for s in (0, 1)}
    script = _script(seed)
    assert len(script) > LIVE + 100, "the game is too short to fill a stream's buffers"

    def command(i: int) -> int:
        seat, cmd, version = script[i]
        body = {"command_id": f"c{i}", "expected_version": version, "command": cmd}
        answer = _call(port, "POST", f"/games/{gid}/seats/{seat}/commands", body, tokens[seat])
        return int(answer["version"])

    for i in range(len(script) - LIVE):  # a backlog of well over the buffers' size
        version = command(i)

    stuck = _stream(port, gid, "127.0.0.2")  # never reads (until the end)
    reader = _stream(port, gid, "127.0.0.3")
    got = b""

    def read_until(seq: int, within: float) -> bool:
        nonlocal got
        deadline = time.monotonic() + within
        while time.monotonic() < deadline:
            if f"id: {seq}\n".encode() in got:
                return True
            reader.settimeout(max(0.01, deadline - time.monotonic()))
            try:
                chunk = reader.recv(1 << 20)
            except TimeoutError:
                continue
            assert chunk, f"the reading spectator was dropped\nAPI log:\n{proc.log()[-2000:]}"
            got += chunk
        return f"id: {seq}\n".encode() in got

    assert read_until(version, 15), f"the backlog did not arrive; got {got[-300:]!r}"
    opened = time.monotonic()
    late = []
    for i in range(len(script) - LIVE, len(script)):
        version = command(i)
        sent = time.monotonic()
        if not read_until(version, PROMPTLY):
            late.append((i, version))
        time.sleep(max(0.0, 0.4 - (time.monotonic() - sent)))
    assert not late, f"events late or missing at the reading spectator: {late}"
    deadline = opened + SEND_SECONDS + 5
    while DROPPED not in proc.log() and time.monotonic() < deadline:
        time.sleep(0.1)
    assert DROPPED in proc.log(), (
        f"the stuck client was not dropped\nAPI log:\n{proc.log()[-2000:]}"
    )

    # what the stuck client has is the backlog's start, then the end of the connection
    stuck.settimeout(5)
    held = b""
    try:
        while chunk := stuck.recv(1 << 20):
            held += chunk
    except TimeoutError:
        pytest.fail(f"the stuck client's connection is still open after {len(held)} bytes")
    last = _ids(held)[-1]
    assert last < version, "the stuck client got everything: its buffers never filled"
    stuck.close()
    again = _stream(port, gid, "127.0.0.2", last_id=last)
    again.settimeout(10)
    rest = b""
    while b"event: end" not in rest and (chunk := again.recv(1 << 20)):
        rest += chunk
    again.close()
    reader.close()
    assert _ids(rest) == list(range(last + 1, version + 1)), "the resumed stream has a gap"
