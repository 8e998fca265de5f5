"""Waits as long as production waits, on the real Redis at ``$REDIS_URL``: an idle SSE stream held
30 s over gunicorn (a keep-alive every 15 s, nothing breaks, then the next event arrives at
once), and an idle ``rfg worker`` left alone over a minute that then plays a 4-bot game promptly.

With redis-py 8's default 5 s socket timeout both broke: the stream was cut at 5.0 s
(``XREAD BLOCK`` 15 s on a 5 s socket) and the worker backed off up to 60 s between dequeues."""

from __future__ import annotations

import http.client
import json
import time
from collections.abc import Callable
from typing import Any
from urllib.parse import urlsplit

import pytest
import redis
from rfg_client import Client

from service.sse import KEEPALIVE_SPREAD
from tests.conftest import REDIS_URL
from tests.processes import Proc, wait_for
from workers import Runtime, WorkerSettings

from .conftest import ADMIN

pytestmark = [pytest.mark.redis, pytest.mark.slow]

#: seconds: two keep-alives, each after 15 s of quiet less the stream's spread (``serve`` draws
#: it once per stream, up to ``KEEPALIVE_SPREAD`` of the interval), less a little scheduling slack
IDLE_STREAM = 2 * 15 * (1 - KEEPALIVE_SPREAD) - 0.3
#: a minute and a little more: with the old 5 s socket RQ's dequeue back-off (1, 2, 4 ... s after
#: each 5 s timeout) was sleeping 32 s from 61 s on, so the first move waited about half a minute
IDLE_WORKER = 65.0


def test_an_idle_stream_stays_open_for_30s_with_keep_alives(
    real_redis: Any, prefix: str, start_api: Callable[..., tuple[Proc, str]]
) -> None:
    api_proc, base = start_api(REDIS_URL, prefix, RFG_SSE_MAX_SECONDS="120")
    api = Client(base, admin_token=ADMIN, timeout=10)
    game = api.create_game([{"kind": "human"}, {"kind": "human"}], seed="idle-stream")
    gid = game["game_id"]
    version = api.view(gid)["version"]

    parts = urlsplit(base)
    # a read waits at most 20 s: a keep-alive is due every 15 s
    conn = http.client.HTTPConnection(parts.hostname or "", parts.port, timeout=20)
    conn.request("GET", f"/games/{gid}/events/stream", headers={"Accept": "text/event-stream"})
    resp = conn.getresponse()
    assert resp.status == 200
    opened = time.monotonic()
    ids: list[int] = []
    keepalives: list[float] = []
    while len(keepalives) < 2:  # two keep-alives, 15 s apart: the stream was held 30 s
        line = resp.fp.readline()
        assert line, (
            f"the stream was closed after {time.monotonic() - opened:.1f}s of quiet; "
            f"API log:\n{api_proc.log()[-3000:]}"
        )
        if line.startswith(b"id: "):
            ids.append(int(line[4:]))
        elif line.startswith(b": keep-alive"):
            keepalives.append(time.monotonic() - opened)
    assert ids == list(range(1, version + 1)), "the events so far came first"
    assert 14 <= keepalives[0] <= 17 and 14 <= keepalives[1] - keepalives[0] <= 17, keepalives
    assert keepalives[1] >= IDLE_STREAM, f"held {keepalives[1]:.1f}s"

    # after the quiet, the stream is still live: the next event arrives at once
    token = api.claim(gid, 0)
    view = api.view(gid, seat=0, token=token)
    from bots import get_bot
    from engine.rng import Rng

    command = get_bot("random").act(view["view"]["decision"], None, Rng(1))
    sent = time.monotonic()
    out = api.submit(gid, 0, command, expected_version=view["version"], token=token)
    while True:
        line = resp.fp.readline()
        assert line, "the stream closed instead of sending the new event"
        if line.startswith(b"id: ") and int(line[4:]) == version + 1:
            break
    delay = time.monotonic() - sent
    assert delay < 2.0, f"the event after 30 s of quiet came {delay:.2f}s after the command"
    assert out["version"] > version
    conn.close()
    assert "Error handling request" not in api_proc.log()
    assert "TimeoutError" not in api_proc.log()


def test_an_idle_worker_plays_a_bot_game_promptly_after_a_minute(
    real_redis: Any, prefix: str, start_worker: Callable[..., Proc]
) -> None:
    worker = start_worker(REDIS_URL, prefix)
    rt = Runtime(redis.Redis.from_url(REDIS_URL), WorkerSettings(prefix=prefix, queue=prefix))
    # the worker is up (registered with RQ) and then left alone as long as a quiet server is
    wait_for(lambda: real_redis.scard(f"rq:workers:{prefix}") > 0, 30, "the worker to register")
    time.sleep(IDLE_WORKER)
    assert worker.poll() is None, f"the worker exited while idle:\n{worker.log()}"

    seats = {"seats": [{"kind": "bot", "bot": "heuristic"}] * 4}
    created = time.monotonic()
    gid, start = rt.games.create(4, seed="idle-worker", table=seats)
    first = wait_for(lambda: rt.store.version(gid) > start, 60, "the first bot move")
    finished = wait_for(lambda: rt.games.load(gid)[0].over, 120, "the game to finish")
    total = time.monotonic() - created
    log = worker.log()
    print(
        json.dumps(
            {
                "first_move_s": round(first, 3),
                "game_s": round(total, 2),
                "version": rt.store.version(gid),
            }
        )
    )
    assert first < 2.0, (
        f"first bot move {first:.1f}s after {IDLE_WORKER:.0f}s idle; worker log:\n{log[-3000:]}"
    )
    assert finished < 45.0, (
        f"a 4-bot game took {total:.1f}s after {IDLE_WORKER:.0f}s idle:\n{log[-3000:]}"
    )
    assert "could not connect to Redis" not in log and "Timeout reading" not in log, log[-3000:]
    assert worker.poll() is None
