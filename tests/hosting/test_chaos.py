"""Chaos: Redis is SIGKILLed and restarted three times while games are played through the real
stack - the API under gunicorn (dispatch on, as ``make run``), two ``rfg worker`` processes, and
a scripted person on seat 0 of every game over HTTP - with the production settings of the
workers and clients. Every command the API acknowledged (2xx) is in the log, every game
finishes with a log that verifies, the API never answers 5xx other than 503, and both worker
processes are still running at the end."""

from __future__ import annotations

import json
import signal
import threading
import time
from collections.abc import Callable
from typing import Any
from urllib.error import URLError

import pytest
import redis
from rfg_client import ApiError, Client

from bots import get_bot
from engine.rng import Rng
from tests.processes import Proc, wait_for
from tests.workers.checks import check_finished_game
from workers import Runtime, WorkerSettings

from .conftest import ADMIN, RedisServer

pytestmark = pytest.mark.slow

GAMES = 4
OUTAGES = 3
DOWN_SECONDS = 3.0
THINK = 0.05  # the person's pause before each decision: the games last through the outages


class Person:
    """Plays seat 0 of one game over HTTP, retrying through outages with the same command id."""

    def __init__(self, base: str, gid: str, seed: int) -> None:
        self.api = Client(
            base, timeout=30, retries=0
        )  # the test does the retrying, and counts the 503s
        self.gid = gid
        self.token = self.api.claim(gid, 0)
        self.bot, self.rng = get_bot("random"), Rng(seed)
        self.acked: dict[str, int] = {}  # command id -> version the API answered
        self.unavailable = 0  # 503s seen
        self.errors: list[str] = []
        self.thread = threading.Thread(target=self.play, name=f"person-{gid}", daemon=True)

    def _retrying(self, fn: Callable[[], Any]) -> Any:
        while True:
            try:
                return fn()
            except ApiError as exc:
                if exc.status != 503:
                    raise
                self.unavailable += 1
                assert exc.problem["type"] == "/problems/store-unavailable", exc.problem
            except (URLError, ConnectionError, TimeoutError) as exc:  # the API must stay up
                self.errors.append(f"API unreachable: {exc}")
            time.sleep(0.2)

    def play(self) -> None:
        try:
            n = 0
            while True:
                pub = self._retrying(lambda: self.api.view(self.gid))
                if pub["view"]["step"] == "over":
                    return
                if "0" not in pub["view"]["pending"]:
                    time.sleep(0.02)
                    continue
                mine = self._retrying(lambda: self.api.view(self.gid, seat=0, token=self.token))
                if mine["view"].get("decision") is None:
                    continue
                time.sleep(THINK)
                command = self.bot.act(mine["view"]["decision"], None, self.rng)
                cid = f"{self.gid}-p{n}"
                n += 1
                version: int = mine["version"]

                def submit(c: dict[str, Any] = command, i: str = cid, v: int = version) -> Any:
                    return self.api.submit(
                        self.gid, 0, c, command_id=i, expected_version=v, token=self.token
                    )

                try:
                    out = self._retrying(submit)
                except ApiError as exc:
                    if exc.status == 409:  # a bot moved first: read again, decide again
                        continue
                    raise
                self.acked[cid] = out["version"]
        except BaseException as exc:  # noqa: BLE001 - reported by the test
            self.errors.append(f"{type(exc).__name__}: {exc}")


def test_redis_killed_three_times_during_play_loses_nothing(
    own_redis: RedisServer,
    start_api: Callable[..., tuple[Proc, str]],
    start_worker: Callable[..., Proc],
) -> None:
    prefix = "chaos"
    # the rate limits stay on (they live in the same Redis) but high: four people poll fast
    api_proc, base = start_api(
        own_redis.url,
        prefix,
        workers=2,
        RFG_DISPATCH="1",
        RFG_LIMIT_PER_ADDRESS="1000000 per minute",
        RFG_LIMIT_PER_TOKEN="1000000 per minute",
        RFG_LIMIT_COMMANDS="1000000 per minute",
    )
    workers = [start_worker(own_redis.url, prefix) for _ in range(2)]
    admin = Client(base, admin_token=ADMIN, timeout=30)
    seats = [
        {"kind": "human"},
        {"kind": "bot", "bot": "heuristic"},
        {"kind": "bot", "bot": "random"},
    ]
    gids = [admin.create_game(seats, seed=f"chaos-{i}")["game_id"] for i in range(GAMES)]
    people = [Person(base, gid, i) for i, gid in enumerate(gids)]
    for p in people:
        p.thread.start()

    rt = Runtime(
        redis.Redis.from_url(own_redis.url),
        WorkerSettings(prefix=prefix, queue=prefix),
        listen=False,
    )

    def versions() -> list[int]:
        return [rt.store.version(g) for g in gids]

    outages: list[dict[str, Any]] = []
    for _ in range(OUTAGES):
        before = sum(versions())
        wait_for(lambda b=before: sum(versions()) >= b + 60, 60, "play to go on")  # type: ignore[misc]
        playing = sum(1 for g in gids if not rt.games.load(g)[0].over)
        own_redis.kill()
        time.sleep(DOWN_SECONDS)
        own_redis.start()
        rt.client.connection_pool.disconnect()
        outages.append({"games_playing": playing, "versions": versions()})
    assert all(o["games_playing"] > 0 for o in outages), (
        f"an outage came after play ended: {outages}"
    )

    finished = wait_for(
        lambda: all(not p.thread.is_alive() for p in people), 180, "every game to finish"
    )
    report: dict[str, Any] = {
        "outages": outages,
        "finished_s_after_last_restart": round(finished, 1),
        "503s": sum(p.unavailable for p in people),
        "acknowledged": sum(len(p.acked) for p in people),
        "versions": versions(),
    }
    print(json.dumps(report))
    for p in people:
        assert not p.errors, p.errors
    assert int(report["503s"]) > 0, "the outages were not seen by the API's clients"

    for p in people:
        _, commands = check_finished_game(rt.games, p.gid)  # verifies; each decision played once
        stored: dict[str, int] = {}  # command id (as the seat sent it) -> last seq of its batch
        for e in rt.store.read(p.gid):
            stored[e.command_id.removeprefix("seat:0:")] = e.seq
        for cid, version in p.acked.items():
            assert stored.get(cid) == version, (
                f"acknowledged command {cid} (version {version}) lost"
            )
        # the seat's commands are exactly those acknowledged (none stored behind the API's back)
        person = {
            c.command_id.removeprefix("seat:0:")
            for c in commands
            if c.seat == 0 and c.actor != "timeout" and not c.actor.startswith("bot:")
        }
        assert person == set(p.acked), (
            sorted(person - set(p.acked)),
            sorted(set(p.acked) - person),
        )

    for w in workers:
        assert w.poll() is None, f"a worker exited with {w.returncode}:\n{w.log()[-3000:]}"
    for w in workers:  # and a worker replaced after an outage still stops when asked
        w.send_signal(signal.SIGTERM)
    for w in workers:
        assert w.wait(15) == 0, w.log()[-3000:]
    assert "unhandled error" not in api_proc.log(), api_proc.log()[-3000:]
