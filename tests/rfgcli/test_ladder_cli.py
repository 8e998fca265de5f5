"""``rfg ladder`` run as a real command against the real Redis, as a host would: ``run --games N``
plays exactly N games, and ``pause`` / ``resume`` / ``delete`` work without an admin token."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import uuid
from collections.abc import Iterator
from pathlib import Path
from types import SimpleNamespace
from typing import Any

import pytest
import redis

import events.store
from bots import get_bot
from engine.rng import Rng
from events.games.service import GameService
from events.store import RedisStore
from ladder.service import Ladders
from tests.conftest import REDIS_URL, purge_prefix
from tests.processes import kill_group, spawn, wait_for

ROOT = Path(__file__).resolve().parents[2]
RFG = str(Path(sys.executable).parent / "rfg")


@pytest.fixture
def prefix(real_redis: Any) -> Iterator[str]:
    p = f"t{uuid.uuid4().hex[:10]}"
    yield p
    purge_prefix(real_redis, p)


def rfg(prefix: str, *args: str, timeout: float = 180) -> subprocess.CompletedProcess[str]:
    env = {**os.environ, "REDIS_URL": REDIS_URL, "RFG_STORE_PREFIX": prefix}
    env.pop("RFG_ADMIN_TOKEN", None)
    return subprocess.run(
        [RFG, "ladder", *args], cwd=ROOT, env=env, capture_output=True, text=True, timeout=timeout
    )


def ladders(prefix: str) -> Ladders:
    client = redis.Redis.from_url(REDIS_URL)
    return Ladders(client, GameService(RedisStore(client, prefix=prefix)), prefix=prefix)


def make_ladder(prefix: str, name: str, concurrency: int) -> None:
    for args in (
        ["create", name, "--players", "2", "--concurrency", str(concurrency)],
        ["add", name, "h", "--bot", "heuristic"],
        ["add", name, "r", "--bot", "random"],
    ):
        out = rfg(prefix, *args)
        assert out.returncode == 0, out.stderr


def test_run_games_n_plays_exactly_n_games(prefix: str) -> None:
    """Concurrency 2 and --games 3: two games, then one more - not two and two (4)."""
    make_ladder(prefix, "exact", concurrency=2)
    out = rfg(prefix, "run", "exact", "--games", "3", "--inline")
    assert out.returncode == 0, out.stderr
    lad = ladders(prefix)
    games = lad.ladder_games("exact")
    assert len(games) == 3, f"{len(games)} games were started, not 3"
    assert all(g["status"] == "finished" for g in games.values())
    assert len(lad.results("exact")) == 3
    board = json.loads(rfg(prefix, "leaderboard", "exact", "--json").stdout)
    assert sum(r["games"] for r in board) == 2 * 3  # two seats per game


def test_run_refuses_a_paused_ladder_and_a_bad_count(prefix: str) -> None:
    make_ladder(prefix, "p", concurrency=1)
    assert rfg(prefix, "pause", "p").returncode == 0
    out = rfg(prefix, "run", "p", "--games", "1", "--inline", timeout=30)
    assert out.returncode == 2 and "paused" in out.stderr and "rfg ladder resume p" in out.stderr
    out = rfg(prefix, "run", "p", "--games", "0", timeout=30)
    assert out.returncode == 2 and "--games" in out.stderr


def test_pause_resume_and_delete_without_an_admin_token(prefix: str) -> None:
    make_ladder(prefix, "ops", concurrency=2)
    lad = ladders(prefix)

    out = rfg(prefix, "pause", "ops")
    assert out.returncode == 0, out.stderr
    assert "paused" in out.stdout
    assert lad.config("ops").paused
    assert lad.schedule("ops") == [], "a paused ladder must start no game (the workers' pass)"

    out = rfg(prefix, "resume", "ops")
    assert out.returncode == 0, out.stderr
    assert not lad.config("ops").paused
    started = lad.schedule("ops")  # what a worker's scheduling pass does
    assert len(started) == 2

    out = rfg(prefix, "delete", "ops")
    assert out.returncode == 0, out.stderr
    assert "2 running" in out.stdout
    assert "ops" not in lad.names()
    assert list(lad.client.scan_iter(match=f"{prefix}:ladder:*ops*")) == []
    for gid in started:  # the running games stay, as ordinary games
        state, _, _ = lad.games.load(gid)
        assert state.table["ladder"] == "ops"

    out = rfg(prefix, "delete", "ops")
    assert out.returncode == 2 and "no ladder named 'ops'" in out.stderr
    out = rfg(prefix, "pause", "nope")
    assert out.returncode == 2 and "no ladder named 'nope'" in out.stderr


def test_run_inline_while_workers_play_the_same_games(prefix: str, tmp_path: Path) -> None:
    """``rfg ladder run --inline`` with ``make run`` up: the workers' sweep finds the ladder's
    games and plays them too. The command used to exit with a ``ConcurrencyConflict`` traceback
    at the first decision a worker stored first; now both play each decision under the same
    command id and the games are the same whoever stores which move."""
    make_ladder(prefix, "busy", concurrency=3)
    env = {"REDIS_URL": REDIS_URL, "RFG_STORE_PREFIX": prefix, "RFG_DATA_DIR": str(tmp_path)}
    worker = [sys.executable, "-m", "rfgcli.main", "worker", "--url", REDIS_URL]
    worker += ["--prefix", prefix, "--sweep-interval", "0.1", "--ladder-interval", "0"]
    logs = [tmp_path / f"worker-{i}.log" for i in range(2)]
    procs = [spawn(worker, env, log) for log in logs]
    lad = ladders(prefix)
    runs = by_workers = 0
    try:
        for i, log in enumerate(logs):  # both workers are up and sweeping before games start
            wait_for(lambda log=log: "sweep every" in log.read_text(), 60, f"worker {i} to start")  # type: ignore[misc]
        while runs < 3 and not by_workers:  # the inline player is fast: race until they met
            out = rfg(prefix, "run", "busy", "--games", "6", "--inline")
            runs += 1
            assert out.returncode == 0 and "Traceback" not in out.stderr, out.stderr
            text = "".join(log.read_text() for log in logs)
            by_workers = sum(text.count(f"played {gid} ") for gid in lad.ladder_games("busy"))
    finally:
        for proc in procs:
            kill_group(proc)
    games = lad.ladder_games("busy")
    assert len(games) == 6 * runs and all(g["status"] == "finished" for g in games.values())
    assert len(lad.results("busy")) == 6 * runs
    # the race was real: the workers stored some of these games' moves, the command the rest
    moves = sum(
        1 for gid in games for e in lad.games.store.read(gid) if e.type == "CommandSubmitted"
    )
    assert 0 < by_workers < moves, (by_workers, moves)


def test_play_inline_reads_the_game_again_when_a_worker_stored_the_move_first() -> None:
    """Deterministically: between the inline player's read and its append, "a worker" stores a
    move (this very decision under its command id, or another seat's)."""
    import engine
    from rfgcli.ladder import play_inline

    client = events.store.connect(f"memory://{uuid.uuid4().hex}")
    games = GameService(RedisStore(client, prefix="rfg"))
    table = {"seats": [{"kind": "bot", "bot": "random"}, {"kind": "bot", "bot": "heuristic"}]}
    gid, _ = games.create(2, seed="inline-race", table=table)
    real_submit = games.submit
    raced: list[str] = []

    def racing_submit(game_id: str, seat: int, cmd: Any, command_id: str, *a: Any, **k: Any) -> Any:
        if len(raced) < 40:  # "a worker" plays the other pending seat (or this one) first
            state, version, clocks = games.load_clocks(game_id)
            other = max(engine.pending(state))
            since = clocks.seats[other].decision_id
            bot = get_bot(state.table["seats"][other]["bot"])
            view = engine.observe(state, other) if bot.needs_view else None
            wid = f"bot:{other}:{since}"
            move = bot.act(engine.legal(state, other), view, Rng.for_bot(state.seed, wid))
            real_submit(game_id, other, move, wid, version, actor=f"bot:{bot.name}")
            raced.append(wid)
        return real_submit(game_id, seat, cmd, command_id, *a, **k)

    games.submit = racing_submit  # type: ignore[method-assign]
    play_inline(SimpleNamespace(games=games), gid)
    state, _, _ = games.load(gid)
    assert state.over and len(raced) == 40


def test_open_and_close_without_an_admin_token(prefix: str) -> None:
    make_ladder(prefix, "doors", concurrency=1)
    lad = ladders(prefix)
    assert not lad.config("doors").open
    out = rfg(prefix, "open", "doors")
    assert out.returncode == 0 and "open" in out.stdout, out.stderr
    assert lad.config("doors").open
    assert lad.join("doors", "0123456789abcdef", "2026-01-01T00:00:00Z")[1]
    out = rfg(prefix, "close", "doors")
    assert out.returncode == 0 and "closed" in out.stdout, out.stderr
    assert not lad.config("doors").open
    assert lad.current_entrant("doors", "0123456789abcdef") == "acct.0123456789abcdef"
