"""Game affinity (``service.affinity``): under real gunicorn masters with two workers, every
request naming a game is served by one worker, bodies arrive whole, a killed worker's queued
connections are served by its replacement, and the real API stops catching games up."""

from __future__ import annotations

import hashlib
import http.client
import json
import logging
import os
import signal
import socket
import sys
import time
import zlib
from collections.abc import Callable, Iterator
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any

import pytest
import redis

import engine
from bots import get_bot
from engine.rng import Rng
from service.affinity import _Affinity, owner_of
from tests.hosting.conftest import ADMIN, RedisServer
from tests.processes import Proc, free_port, kill_group, spawn, wait_for, wait_listening

SYNC = "service.affinity.GameAffineWorker"
GTHREAD = "service.affinity.GameAffineThreadWorker"


def test_the_owner_is_read_from_the_request_line() -> None:
    line = b"POST /games/ab12cd/seats/0/commands HTTP/1.1\r\nHost: x\r\n"
    assert owner_of(line, 2) == zlib.crc32(b"ab12cd") % 2
    assert owner_of(b"GET /games/ab12cd/view?x=1 HTTP/1.1\r\n", 3) == zlib.crc32(b"ab12cd") % 3
    assert owner_of(b"GET /games/ab12cd HTTP/1.1\r\n", 5) == zlib.crc32(b"ab12cd") % 5
    # event streams are held open for long: any worker serves them
    assert owner_of(b"GET /games/ab12cd/events/stream HTTP/1.1\r\n", 2) is None
    assert owner_of(b"GET /games/ab12cd/seats/1/events/stream HTTP/1.1\r\n", 2) is None
    # no game, a cut-off line, garbage: served where accepted
    assert owner_of(b"GET /healthz HTTP/1.1\r\n", 2) is None
    assert owner_of(b"POST /games HTTP/1.1\r\n", 2) is None
    assert owner_of(b"POST /games/ab1", 2) is None
    assert owner_of(b"\x16\x03\x01\x02\x00", 2) is None
    assert owner_of(b"GET /games/" + b"x" * 300 + b" HTTP/1.1\r\n", 2) is None


def test_without_memfd_the_workers_serve_what_they_accept(
    monkeypatch: pytest.MonkeyPatch, caplog: pytest.LogCaptureFixture
) -> None:
    """Where the system lacks what the slots need (not Linux), the worker classes still serve:
    every connection where it was accepted, with a warning saying so."""
    monkeypatch.delattr(os, "memfd_create")
    monkeypatch.setattr(_Affinity, "_slots", None)
    worker = _Affinity()
    worker.cfg = type("Cfg", (), {"workers": 2})()
    worker.log = logging.getLogger("test-affinity")
    with caplog.at_level(logging.WARNING, logger="test-affinity"):
        worker._make_slots()
    assert worker.slots is None
    assert "game affinity off" in caplog.text
    assert worker._claim() is False and worker._received() == []
    a, b = socket.socketpair()
    with a, b:
        a.sendall(b"POST /games/abc123/seats/0/commands HTTP/1.1\r\n\r\n")
        assert worker._owner_elsewhere(b) is None


def _gunicorn(tmp_path: Path, worker_class: str, app: str, env: dict[str, str]) -> tuple[Proc, int]:
    port = free_port()
    cmd = [
        sys.executable,
        "-m",
        "gunicorn",
        "--bind",
        f"127.0.0.1:{port}",
        "--workers",
        "2",
        "--worker-class",
        worker_class,
        "--threads",
        "4",
        "--no-control-socket",
        app,
    ]
    proc = spawn(cmd, env, tmp_path / f"gunicorn-{port}.log")
    wait_listening(proc, port, "gunicorn")
    return proc, port


@pytest.fixture
def gunicorns(tmp_path: Path) -> Iterator[Callable[..., tuple[Proc, int]]]:
    procs: list[Proc] = []

    def start(worker_class: str, app: str = "tests.hosting.affinity_app:app", **env: str):
        proc, port = _gunicorn(tmp_path, worker_class, app, env)
        procs.append(proc)
        return proc, port

    yield start
    for proc in procs:
        kill_group(proc)


def _call(port: int, method: str, path: str, body: bytes | None = None, **headers: str) -> Any:
    """One request on a connection of its own; (status, parsed JSON answer)."""
    conn = http.client.HTTPConnection("127.0.0.1", port, timeout=30)
    try:
        conn.request(method, path, body=body, headers={"Connection": "close", **headers})
        resp = conn.getresponse()
        return resp.status, json.loads(resp.read() or b"null")
    finally:
        conn.close()


def _both_workers_up(port: int) -> set[int]:
    """Wait until two worker processes have answered (each has started its loop)."""
    seen: set[int] = set()

    def two() -> bool:
        with ThreadPoolExecutor(4) as pool:
            for _status, answer in pool.map(lambda _: _call(port, "GET", "/up"), range(8)):
                seen.add(answer["pid"])
        return len(seen) >= 2

    wait_for(two, 30, "both gunicorn workers to answer")
    return seen


@pytest.mark.parametrize("worker_class", [SYNC, GTHREAD])
def test_each_games_requests_are_served_by_one_worker_and_arrive_whole(
    gunicorns: Callable[..., tuple[Proc, int]], worker_class: str
) -> None:
    _proc, port = gunicorns(worker_class)
    pids = _both_workers_up(port)
    games = [f"g{n:03d}x" for n in range(24)]
    jobs = [(g, os.urandom(1500 + 97 * k)) for k in range(5) for g in games]

    def post(job: tuple[str, bytes]) -> tuple[str, int, dict[str, Any], bytes]:
        game, body = job
        status, answer = _call(
            port, "POST", f"/games/{game}/seats/0/commands", body, **{"Content-Type": "x/y"}
        )
        return game, status, answer, body

    with ThreadPoolExecutor(8) as pool:
        results = list(pool.map(post, jobs))
    served: dict[str, set[int]] = {}
    for game, status, answer, body in results:
        assert status == 200
        assert answer["body_sha256"] == hashlib.sha256(body).hexdigest(), "a body was cut"
        served.setdefault(game, set()).add(answer["pid"])
    assert all(len(p) == 1 for p in served.values()), served
    owners = {next(iter(p)) for p in served.values()}
    assert owners == pids, "the games were not spread over both workers"
    # a game's owner is the same worker whichever accepted: crc32(id) % 2 picks it
    by_slot: dict[int, set[int]] = {}
    for game, p in served.items():
        by_slot.setdefault(zlib.crc32(game.encode()) % 2, set()).update(p)
    assert all(len(p) == 1 for p in by_slot.values()) and len(by_slot) == 2
    # paths naming no game go to whichever worker accepts them (both, over a few rounds)
    seen = set()
    with ThreadPoolExecutor(8) as pool:
        for _ in range(20):
            seen |= {a["pid"] for s, a in pool.map(lambda _: _call(port, "GET", "/x"), range(8))}
            if len(seen) == 2:
                break
    assert seen == pids


def test_a_killed_workers_queued_connections_are_served_by_its_replacement(
    gunicorns: Callable[..., tuple[Proc, int]],
) -> None:
    _proc, port = gunicorns(SYNC)
    _both_workers_up(port)
    game = "victim1"
    status, answer = _call(port, "POST", f"/games/{game}/seats/0/commands", b"{}")
    owner = answer["pid"]
    os.kill(owner, signal.SIGKILL)
    # straight away (the slot still looks alive for a few seconds): 12 requests for its game;
    # those the other worker accepts are queued for the slot, whose next worker serves them
    started = time.monotonic()
    with ThreadPoolExecutor(12) as pool:
        results = list(
            pool.map(
                lambda k: _call(port, "POST", f"/games/{game}/seats/0/commands", b"[%d]" % k),
                range(12),
            )
        )
    assert [s for s, _a in results] == [200] * 12, "a request was lost with the killed worker"
    assert owner not in {a["pid"] for _s, a in results}
    assert time.monotonic() - started < 30
    # and the game has one worker again
    after = {
        _call(port, "POST", f"/games/{game}/seats/0/commands", b"{}")[1]["pid"] for _ in range(8)
    }
    assert len(after) == 1


# --- the real API: commands through affine workers, no catch-ups --------------------------------


def _script(seed: str, players: int, count: int) -> list[tuple[int, dict[str, Any], int, int]]:
    """The first ``count`` commands a random bot plays in the game ``seed`` deals, with the
    version each is decided on and the version it leads to."""
    state = engine.replay(events := engine.create(seed, players, {}, None))
    version, bot, rng = len(events), get_bot("random"), Rng(7)
    out = []
    while not state.over and len(out) < count:
        seat = min(engine.pending(state))
        cmd = bot.act(engine.legal(state, seat), None, rng)
        engine.evolve(state, engine.command_submitted(seat, cmd))
        new = version + 1 + len(engine.play(state, seat, cmd))
        out.append((seat, cmd, version, new))
        version = new
    return out


@pytest.mark.parametrize("worker_class", [GTHREAD, "gthread"])
def test_the_api_on_affine_workers_does_not_catch_games_up(
    gunicorns: Callable[..., tuple[Proc, int]], own_redis: RedisServer, worker_class: str
) -> None:
    _proc, port = gunicorns(
        worker_class,
        "rfgcli.wsgi:create_app()",
        REDIS_URL=own_redis.url,
        RFG_STORE_URL=own_redis.url,
        RFG_STORE_PREFIX="aff",
        RFG_ADMIN_TOKEN=ADMIN,
        RFG_RATE_LIMITS="0",
    )
    wait_for(lambda: _call(port, "GET", "/healthz")[0] == 200, 30, "the API")
    games = []
    for n in range(4):
        seed = f"affinity:{n}"
        status, made = _call(
            port,
            "POST",
            "/games",
            json.dumps({"seats": [{"kind": "human"}] * 2, "seed": seed}).encode(),
            **{"Authorization": f"Bearer {ADMIN}", "Content-Type": "application/json"},
        )
        assert status == 201, made
        gid = made["game_id"]
        tokens = [_call(port, "POST", f"/games/{gid}/seats/{s}/claim")[1]["token"] for s in (0, 1)]
        games.append((gid, tokens, _script(seed, 2, 25)))
    probe = redis.Redis.from_url(own_redis.url)
    probe.config_resetstat()

    def play(game: tuple[str, list[str], list[Any]]) -> list[tuple[int, int]]:
        gid, tokens, script = game
        out = []
        for n, (seat, cmd, expected, new) in enumerate(script):
            body = {"command_id": f"c{n}", "expected_version": expected, "command": cmd}
            status, answer = _call(
                port,
                "POST",
                f"/games/{gid}/seats/{seat}/commands",
                json.dumps(body).encode(),
                **{"Authorization": f"Bearer {tokens[seat]}", "Content-Type": "application/json"},
            )
            out.append((status, answer.get("version") if isinstance(answer, dict) else None))
            assert (status, out[-1][1]) == (201, new), answer
        return out

    with ThreadPoolExecutor(4) as pool:
        played = sum(len(r) for r in pool.map(play, games))
    assert played == 100
    stats = probe.info("commandstats")
    catch_ups = stats.get("cmdstat_xrange", {}).get("calls", 0)  # the catch-up script's XRANGE
    probe.close()
    if worker_class == GTHREAD:
        assert catch_ups <= len(games), f"{catch_ups} catch-ups with game affinity"
    else:  # (what affinity saves: the plain workers take turns at each game)
        assert catch_ups > 10, catch_ups


def _one_worker_per_game(port: int, games: list[str], rounds: int = 4) -> dict[str, set[int]]:
    """Which worker processes served each game, over ``rounds`` requests per game in parallel."""
    jobs = [g for _ in range(rounds) for g in games]
    with ThreadPoolExecutor(8) as pool:
        answers = list(
            pool.map(
                lambda g: (g, _call(port, "POST", f"/games/{g}/seats/0/commands", b"{}")), jobs
            )
        )
    served: dict[str, set[int]] = {}
    for game, (status, answer) in answers:
        assert status == 200
        served.setdefault(game, set()).add(answer["pid"])
    return served


@pytest.mark.parametrize("worker_class", [SYNC, GTHREAD])
def test_after_a_reload_the_new_workers_take_the_slots(
    gunicorns: Callable[..., tuple[Proc, int]], worker_class: str
) -> None:
    proc, port = gunicorns(worker_class)
    old = _both_workers_up(port)
    games = [f"r{n:02d}z" for n in range(12)]
    os.kill(proc.pid, signal.SIGHUP)  # gunicorn starts new workers, then stops the old ones

    def renewed() -> bool:
        with ThreadPoolExecutor(8) as pool:
            seen = {a["pid"] for _s, a in pool.map(lambda _: _call(port, "GET", "/x"), range(16))}
        return len(seen) == 2 and not seen & old

    wait_for(renewed, 30, "the reloaded workers to answer alone")

    def affine() -> bool:  # the new workers take the freed slots within a second or so
        served = _one_worker_per_game(port, games)
        return all(len(p) == 1 for p in served.values()) and len(set().union(*served.values())) == 2

    wait_for(affine, 30, "each game to be served by one of the new workers")


@pytest.mark.parametrize("worker_class", [SYNC, GTHREAD])
def test_a_client_slow_to_send_its_request_is_still_served_by_the_games_worker(
    gunicorns: Callable[..., tuple[Proc, int]], worker_class: str
) -> None:
    """A connection silent for longer than gthread's 5 s wait for data goes to the poller and is
    routed once its request arrives (and a sync worker waits in its peek, as in its parser)."""
    _proc, port = gunicorns(worker_class)
    _both_workers_up(port)
    game = "slow42"
    owner = _call(port, "POST", f"/games/{game}/seats/0/commands", b"{}")[1]["pid"]
    with socket.create_connection(("127.0.0.1", port), timeout=30) as s:
        time.sleep(5.5)
        s.sendall(
            f"POST /games/{game}/seats/0/commands HTTP/1.1\r\nHost: x\r\nConnection: close\r\n"
            "Content-Length: 2\r\n\r\n{}".encode()
        )
        data = b""
        while chunk := s.recv(65536):
            data += chunk
    head, _, body = data.partition(b"\r\n\r\n")
    assert head.startswith(b"HTTP/1.1 200"), head
    assert json.loads(body)["pid"] == owner


def test_silent_connections_do_not_hold_up_the_threaded_workers(
    gunicorns: Callable[..., tuple[Proc, int]],
) -> None:
    """Clients that connect and say nothing wait in the poller, not in a thread: with three times
    as many of them open as there are threads, other requests are answered at once (gunicorn's
    own gthread worker holds a thread for up to 5 s for each)."""
    _proc, port = gunicorns(GTHREAD)
    _both_workers_up(port)
    silent = [socket.create_connection(("127.0.0.1", port)) for _ in range(24)]  # 2 x 4 threads
    try:
        time.sleep(0.2)
        started = time.monotonic()
        for n in range(4):
            status, _answer = _call(port, "POST", f"/games/quiet{n}/seats/0/commands", b"{}")
            assert status == 200
        assert time.monotonic() - started < 3, "requests waited behind silent connections"
    finally:
        for s in silent:
            s.close()
