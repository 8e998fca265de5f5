"""Done when: a ladder with an external bot (examples/random_bot.py, a separate process speaking
only HTTP to a live API server) and two built-in bots (heuristic, random) plays a few dozen games
through the real Redis and real ``rfg worker`` processes, which schedule the ladder's games,
play the built-in seats and record the results.

Checked: every entrant is rated, heuristic ranks above random, the live ratings equal the ratings
rebuilt from the games' own logs, no game is left unfinished, and the external bot played its own
decisions (commands under its seats' actor, not timeouts)."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import threading
import time
import urllib.request
import uuid
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
import redis
from werkzeug.serving import BaseWSGIServer, make_server

from events.games.service import GameService
from events.store import RedisStore
from ladder.service import Ladders, tables_equal
from rfgcli.wsgi import create_app

ROOT = Path(__file__).resolve().parents[2]
from tests.conftest import REDIS_URL, purge_prefix  # noqa: E402

RFG = str(Path(sys.executable).parent / "rfg")
ADMIN = "ladder-e2e-admin"
GAMES = 30


@pytest.fixture
def prefix(real_redis: Any) -> Iterator[str]:
    client = real_redis
    p = f"t{uuid.uuid4().hex[:10]}"
    yield p
    purge_prefix(client, p)


@pytest.fixture
def server(prefix: str) -> Iterator[str]:
    app = create_app(
        {
            "STORE_URL": REDIS_URL,
            "STORE_PREFIX": prefix,
            "ADMIN_TOKEN": ADMIN,
            "SSE_MAX_SECONDS": 5.0,
            "SSE_KEEPALIVE_SECONDS": 1.0,
            "DECISIONS_POLL_SECONDS": 0.05,
            "DISPATCH_TURNS": True,
            "RATE_LIMITS": False,
        }
    )  # an external bot polls far faster than a person
    srv: BaseWSGIServer = make_server("127.0.0.1", 0, app, threaded=True)
    thread = threading.Thread(target=srv.serve_forever, daemon=True)
    thread.start()
    yield f"http://127.0.0.1:{srv.server_port}"
    srv.shutdown()
    thread.join(5)


def call(
    url: str, method: str, path: str, body: Any = None, token: str | None = None
) -> tuple[int, Any]:
    headers = {"Content-Type": "application/json"} if body is not None else {}
    if token:
        headers["Authorization"] = f"Bearer {token}"
    data = json.dumps(body).encode() if body is not None else None
    req = urllib.request.Request(url + path, data=data, method=method, headers=headers)
    try:
        with urllib.request.urlopen(req, timeout=30) as resp:
            raw = resp.read()
            return resp.status, json.loads(
                raw
            ) if raw and resp.headers.get_content_subtype() == "json" else raw
    except urllib.error.HTTPError as exc:
        return exc.code, json.loads(exc.read() or b"null")


def spawn(cmd: list[str], log: Path, **kw: Any) -> subprocess.Popen[bytes]:
    return subprocess.Popen(
        cmd,
        cwd=ROOT,
        stdout=open(log, "wb"),
        stderr=subprocess.STDOUT,  # noqa: SIM115
        start_new_session=True,
        **kw,
    )


def stop(proc: subprocess.Popen[bytes], sig: int = signal.SIGKILL) -> None:
    try:
        os.killpg(proc.pid, sig)
    except ProcessLookupError:
        return
    try:
        proc.wait(timeout=10)
    except subprocess.TimeoutExpired:
        os.killpg(proc.pid, signal.SIGKILL)
        proc.wait(timeout=5)


def test_a_ladder_with_an_external_bot_and_two_builtin_bots(
    server: str, prefix: str, tmp_path: Path
) -> None:
    started = time.monotonic()
    status, acct = call(
        server, "POST", "/bots/accounts", {"name": "example", "contact": "t@example.org"}
    )
    assert status == 201, acct
    assert (
        call(
            server,
            "POST",
            "/ladders",
            {
                "name": "e2e",
                "players": [2, 3],
                "concurrency": 6,
                "time_control": {"per_decision": 20},
            },
            ADMIN,
        )[0]
        == 201
    )
    for body in (
        {"entrant": "heur", "bot": "heuristic"},
        {"entrant": "rand", "bot": "random"},
        {"entrant": "ext", "account": acct["account_id"]},
    ):
        assert call(server, "POST", "/ladders/e2e/entrants", body, ADMIN)[0] == 201

    procs = []
    try:
        bot = spawn(
            [
                sys.executable,
                "examples/random_bot.py",
                "--url",
                server,
                "--token",
                acct["token"],
                "--seed",
                "1",
            ],
            tmp_path / "bot.log",
        )
        procs.append(bot)
        for i in range(2):
            procs.append(
                spawn(
                    [
                        RFG,
                        "worker",
                        "--url",
                        REDIS_URL,
                        "--prefix",
                        prefix,
                        "--sweep-interval",
                        "0.2",
                        "--stale-after",
                        "2",
                        "--ladder-interval",
                        "0.2",
                    ],
                    tmp_path / f"worker-{i}.log",
                )
            )

        def ladder() -> dict[str, Any]:
            return call(server, "GET", "/ladders/e2e")[1]

        deadline = time.monotonic() + 150
        while ladder()["results"] < GAMES:
            assert time.monotonic() < deadline, (
                f"only {ladder()['results']} results: {_logs(tmp_path)}"
            )
            assert all(p.poll() is None for p in procs), _logs(tmp_path)
            time.sleep(0.5)
        # pause: no new games; the running ones finish and are recorded by the workers
        status, cfg = call(server, "PATCH", "/ladders/e2e", {"paused": True}, ADMIN)
        assert status == 200 and cfg["paused"]
        while (info := ladder())["running"]:
            assert time.monotonic() < deadline, (
                f"{info['running']} games still running: {_logs(tmp_path)}"
            )
            time.sleep(0.5)
        bot.send_signal(signal.SIGINT)
        bot.wait(timeout=15)
        played = json.loads((tmp_path / "bot.log").read_text().strip().splitlines()[-1])
    finally:
        for p in procs:
            stop(p)
    elapsed = time.monotonic() - started

    board = call(server, "GET", "/ladders/e2e/leaderboard")[1]
    rows = {r["entrant"]: r for r in board["rows"]}
    assert set(rows) == {"heur", "rand", "ext"} and all(r["games"] > 0 for r in rows.values()), rows
    assert rows["heur"]["position"] < rows["rand"]["position"], rows
    assert board["applied"] >= GAMES

    client = redis.Redis.from_url(REDIS_URL)
    ladders = Ladders(client, GameService(RedisStore(client, prefix=prefix)), prefix=prefix)
    assert tables_equal(ladders.rebuild_ratings("e2e"), ladders.live_table("e2e"))
    games = ladders.ladder_games("e2e")
    assert len(games) == board["applied"] == len(ladders.results("e2e"))
    ext_games = 0
    timeouts = 0
    for gid, info in games.items():
        state, _, _ = ladders.games.load(gid)
        assert state.over and info["status"] == "finished", gid
        if "ext" in info["seats"]:
            ext_games += 1
            seat = info["seats"].index("ext")
            actors = {
                e.actor
                for e in ladders.games.store.read(gid)
                if e.type == "CommandSubmitted" and e.payload.get("seat") == seat
            }
            assert actors == {f"seat:{seat}"}, (gid, actors)  # only the example bot played it
            _, text = ladders.games.view(gid, "summary")
            timeouts += sum(json.loads(text).get("timeouts") or [])
    assert ext_games == rows["ext"]["games"]
    assert played["played"] > ext_games and played["rejected"] == 0, played
    # every external decision was answered by the example bot itself: none timed out
    assert timeouts == 0, "the example bot answered every decision before its deadline"
    print(
        f"\n{len(games)} ladder games ({ext_games} with the external bot, {played['played']} of its "
        f"commands) in {elapsed:.1f}s; leaderboard: "
        + ", ".join(f"{r['entrant']} {r['rating']:.2f}" for r in board["rows"])
    )


def _logs(tmp_path: Path) -> str:
    return "\n".join(
        f"--- {p.name}\n{p.read_text()[-2000:]}" for p in sorted(tmp_path.glob("*.log"))
    )


def test_the_rfg_ladder_cli_still_runs_inline(prefix: str) -> None:
    """``rfg ladder run --inline`` (no worker) keeps working next to the workers' scheduler."""
    env = {**os.environ, "REDIS_URL": REDIS_URL, "RFG_STORE_PREFIX": prefix}
    for args in (
        ["create", "cli", "--players", "2", "--concurrency", "2"],
        ["add", "cli", "h", "--bot", "heuristic"],
        ["add", "cli", "r", "--bot", "random"],
        ["run", "cli", "--games", "2", "--inline"],
    ):
        out = subprocess.run(
            [RFG, "ladder", *args], cwd=ROOT, env=env, capture_output=True, timeout=120
        )
        assert out.returncode == 0, out.stderr.decode()
    out = subprocess.run(
        [RFG, "ladder", "leaderboard", "cli", "--json"],
        cwd=ROOT,
        env=env,
        capture_output=True,
        timeout=60,
    )
    rows = json.loads(out.stdout)
    assert {r["entrant"] for r in rows} == {"h", "r"} and all(r["games"] >= 2 for r in rows)
