"""The API on a real HTTP server (werkzeug's threaded server on a free port) driven by
``rfg_client``: a whole game between two random bots while a third client follows the SSE
stream, reconnecting with Last-Event-ID each time the server closes it; idempotent retries and
version conflicts as the client sees them; export and replay verification."""

from __future__ import annotations

import threading
import uuid
from collections.abc import Iterator
from typing import Any

import pytest
from rfg_client import ApiError, Client

from bots import get_bot
from engine.rng import Rng
from tests.conftest import serving

from .conftest import ADMIN, make_app


@pytest.fixture
def server() -> Iterator[str]:
    app = make_app(f"memory://{uuid.uuid4().hex}", SSE_MAX_SECONDS=0.5, SSE_KEEPALIVE_SECONDS=0.1)
    with serving(app) as url:
        yield url


def test_a_game_over_a_real_server_with_a_live_stream(server: str) -> None:
    api = Client(server, admin_token=ADMIN, timeout=10)
    assert api.ready() and "random" in api.bots()
    game = api.create_game([{"kind": "human"}, {"kind": "human"}], seed="live-1")
    gid = game["game_id"]
    for seat in (0, 1):
        api.claim(gid, seat)

    streamed: list[dict[str, Any]] = []
    watcher = Client(server, timeout=10)
    follow = threading.Thread(
        target=lambda: streamed.extend(watcher.stream(gid, reconnect=True)), daemon=True
    )
    follow.start()

    bot, rng = get_bot("random"), Rng(2)
    n = 0
    while True:
        public = api.view(gid)
        if public["view"]["step"] == "over":
            break
        seat = min(int(s) for s in public["view"]["pending"])
        mine = api.view(gid, seat=seat)
        command = bot.act(mine["view"]["decision"], None, rng)
        cid = f"live-{n}"
        out = api.submit(gid, seat, command, command_id=cid, expected_version=mine["version"])
        if n == 0:
            # a retry (say, after a lost answer) gets the same answer and changes nothing
            assert (
                api.submit(gid, seat, command, command_id=cid, expected_version=mine["version"])
                == out
            )
            with pytest.raises(ApiError) as stale:
                api.submit(gid, seat, command, expected_version=mine["version"])
            assert stale.value.status == 409
            assert stale.value.problem["current_version"] == out["version"]
        n += 1
        assert n < 2000

    follow.join(15)
    assert not follow.is_alive(), "the stream ends with the game"
    version = api.view(gid)["version"]
    assert [e["seq"] for e in streamed] == list(range(1, version + 1)), "no event lost or repeated"
    paged: list[dict[str, Any]] = []
    while True:
        page = api.feed(gid, after=paged[-1]["seq"] if paged else 0, limit=500)
        paged += page["events"]
        if not page["more"]:
            break
    assert streamed == paged

    log = api.export(gid)
    verdict = api.verify(log)
    assert verdict["ok"] and verdict["commands"] == n
    seat_log = api.export(gid, seat=0)
    assert seat_log == log

    with pytest.raises(ApiError) as exc:
        api.claim(gid, 0)
    assert exc.value.status == 409 and exc.value.type == "/problems/seat-unavailable"
