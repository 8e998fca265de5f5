"""``deploy/nginx.conf`` as hosts run it, with Debian's nginx, in front of ``rfg run --routed
--workers 2`` (two API processes, each on a port of its own, the embedded store in a temp dir).

Over real HTTP through the proxy: games are created, claimed and played (commands with
``expected_version``), a public event stream delivers its frames through the proxy, and the API's
own access lines (one per request, with the process that served it) show that every request
naming a game was served by one process - that game's - while requests naming none were spread
over both. The file is run as it is, only its addresses and paths swapped for the test's own."""

from __future__ import annotations

import http.client
import json
import os
import shutil
import signal
import socket
import subprocess
import sys
import time
from collections import defaultdict
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

import engine
from bots import get_bot
from engine.rng import Rng
from events.store import find_server_binary
from tests.processes import free_port, wait_for

ROOT = Path(__file__).resolve().parents[2]
RFG = str(Path(sys.executable).parent / "rfg")
CONF = ROOT / "deploy" / "nginx.conf"
ADMIN = "nginx-routing-admin"
GAMES = 12
COMMANDS_PER_GAME = 6


def _nginx() -> str:
    found = shutil.which("nginx") or ("/usr/sbin/nginx" if Path("/usr/sbin/nginx").exists() else "")
    if not found:
        pytest.fail(
            "nginx is not installed: apt-get install nginx-light (.ci/run installs it) - this "
            "test runs deploy/nginx.conf with it"
        )
    return found


def _two_free_ports() -> int:
    """A port P with P and P + 1 both free (``rfg run --routed --workers 2`` binds both)."""
    for _ in range(50):
        port = free_port()
        with socket.socket() as s:
            try:
                s.bind(("127.0.0.1", port + 1))
            except OSError:
                continue
        return port
    raise RuntimeError("no two consecutive free ports")


def _conf(tmp: Path, api_port: int, listen: int) -> Path:
    """deploy/nginx.conf with the test's ports and paths (each swap checked: the file as shipped)."""
    text = CONF.read_text()
    swaps = {
        "server 127.0.0.1:8000;": f"server 127.0.0.1:{api_port};",
        "server 127.0.0.1:8001;": f"server 127.0.0.1:{api_port + 1};",
        "listen 8080;": f"listen 127.0.0.1:{listen};",
        "pid /run/nginx-rfg.pid;": f"pid {tmp}/nginx.pid;",
        "error_log /var/log/nginx/rfg-error.log warn;": f"error_log {tmp}/error.log warn;",
    }
    for old, new in swaps.items():
        assert text.count(old) == 1, f"deploy/nginx.conf no longer has {old!r}"
        text = text.replace(old, new)
    out = tmp / "nginx.conf"
    out.write_text(text)
    return out


@pytest.fixture
def proxied(tmp_path: Path) -> Iterator[tuple[int, Path]]:
    """(the proxy's port, rfg run's log)."""
    nginx = _nginx()
    if find_server_binary() is None:
        pytest.fail("no redis-server/valkey-server binary for the embedded store")
    api_port, listen = _two_free_ports(), free_port()
    log = tmp_path / "run.log"
    env = {k: v for k, v in os.environ.items() if k not in ("REDIS_URL", "RFG_STORE_URL")}
    env |= {
        "PYTHONPATH": str(ROOT),
        "RFG_DATA_DIR": str(tmp_path / "run"),
        "RFG_ADMIN_TOKEN": ADMIN,
        "RFG_PROXY_HOPS": "1",
    }
    run = subprocess.Popen(
        [RFG, "run", "--routed", "--workers", "2", "--port", str(api_port)]
        + ["--bot-workers", "0", "--grace", "5"],
        cwd=tmp_path,
        env=env,
        stdout=open(log, "wb"),  # noqa: SIM115 - closed with the process
        stderr=subprocess.STDOUT,
        start_new_session=True,
    )
    conf = _conf(tmp_path, api_port, listen)
    proxy = subprocess.Popen(
        [nginx, "-p", str(tmp_path), "-c", str(conf), "-g", "daemon off;"],
        stdout=subprocess.DEVNULL,
        stderr=open(tmp_path / "nginx.out", "wb"),  # noqa: SIM115
        start_new_session=True,
    )
    try:
        for port in (api_port, api_port + 1):
            wait_for(lambda p=port: _status(p, "GET", "/healthz")[0] == 200, 60, f"API :{port}")
        wait_for(lambda: _status(listen, "GET", "/healthz")[0] == 200, 30, "nginx to proxy")
        yield listen, log
    finally:
        for proc in (proxy, run):
            if proc.poll() is None:
                os.killpg(proc.pid, signal.SIGTERM)
        for proc in (proxy, run):
            try:
                proc.wait(timeout=20)
            except subprocess.TimeoutExpired:
                os.killpg(proc.pid, signal.SIGKILL)
                proc.wait()
        pid_file = tmp_path / "run" / "redis" / "server.pid"
        if pid_file.exists():  # the embedded store, if it outlived its supervisor
            try:
                os.kill(int(pid_file.read_text()), signal.SIGKILL)
            except (ProcessLookupError, ValueError):
                pass


def _status(
    port: int, method: str, path: str, body: Any = None, token: str | None = None
) -> tuple[int, Any]:
    conn = http.client.HTTPConnection("127.0.0.1", port, timeout=10)
    headers = {"Content-Type": "application/json"} if body is not None else {}
    if token:
        headers["Authorization"] = f"Bearer {token}"
    try:
        conn.request(method, path, None if body is None else json.dumps(body), headers)
        resp = conn.getresponse()
        raw = resp.read()
        ctype = resp.getheader("Content-Type") or ""
        return resp.status, json.loads(raw) if "json" in ctype else raw
    except OSError:
        return 0, None
    finally:
        conn.close()


def _play(port: int, n: int) -> str:
    """A seeded 2-player game created, claimed and played for a few commands through ``port``."""
    seed = f"routing-{n}"
    status, body = _status(
        port, "POST", "/games", {"seats": [{"kind": "human"}] * 2, "seed": seed}, ADMIN
    )
    assert status == 201, body
    gid: str = body["game_id"]
    tokens = {}
    for seat in (0, 1):
        status, body = _status(port, "POST", f"/games/{gid}/seats/{seat}/claim")
        assert status == 201, body
        tokens[seat] = body["token"]
    events = engine.create(seed, 2, {}, None)  # the game the server deals for this seed
    state, version = engine.replay(events), len(events)
    bot, rng = get_bot("random"), Rng(n)
    for i in range(COMMANDS_PER_GAME):
        seat = min(engine.pending(state))
        cmd = bot.act(engine.legal(state, seat), None, rng)
        engine.evolve(state, engine.command_submitted(seat, cmd))
        new = version + 1 + len(engine.play(state, seat, cmd))
        body = {"command_id": f"c{i}", "expected_version": version, "command": cmd}
        status, answer = _status(
            port, "POST", f"/games/{gid}/seats/{seat}/commands", body, tokens[seat]
        )
        assert status == 201, answer
        assert answer["version"] == new
        version = new
    return gid


def _first_frame(port: int, gid: str) -> bytes:
    """The first event frame of the game's public stream, read through the proxy."""
    with socket.create_connection(("127.0.0.1", port), timeout=15) as s:
        s.sendall(f"GET /games/{gid}/events/stream HTTP/1.1\r\nHost: t\r\n\r\n".encode())
        got = b""
        deadline = time.monotonic() + 15
        while b"\ndata:" not in got and time.monotonic() < deadline:
            chunk = s.recv(65536)
            if not chunk:
                break
            got += chunk
        return got


def _served_by(log: Path) -> tuple[dict[str, set[int]], set[int]]:
    """From the access lines: game id -> processes that served it, and the processes that served
    ``GET /catalogue`` (a request naming no game; only the test sends it, through the proxy)."""
    games: dict[str, set[int]] = defaultdict(set)
    others: set[int] = set()
    for line in log.read_text().splitlines():
        if not line.startswith("{"):
            continue
        rec = json.loads(line)
        if rec.get("logger") != "service.access":
            continue
        if "game_id" in rec:
            games[rec["game_id"]].add(rec["pid"])
        elif rec.get("path") == "/catalogue":
            others.add(rec["pid"])
    return games, others


def test_each_game_is_served_by_one_process_behind_nginx(proxied: tuple[int, Path]) -> None:
    port, log = proxied
    played = [_play(port, n) for n in range(GAMES)]
    frame = _first_frame(port, played[0])
    assert b"200 OK" in frame.split(b"\r\n", 1)[0] and b"\ndata:" in frame, frame[:500]
    for _ in range(40):
        assert _status(port, "GET", "/catalogue")[0] == 200

    def logged() -> bool:
        games, _ = _served_by(log)
        return all(gid in games for gid in played)

    wait_for(logged, 10, "the access lines of every game")
    games, others = _served_by(log)
    spread = {gid: sorted(games[gid]) for gid in played}
    assert all(len(p) == 1 for p in spread.values()), spread
    assert len({p[0] for p in spread.values()}) == 2, f"all {GAMES} games on one process: {spread}"
    assert len(others) == 2, f"requests naming no game were all served by {others}"
