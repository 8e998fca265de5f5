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
from typing import Any

import pytest
import redis

from events import RedisStore
from events.games import Games
from ladder.service import Ladders
from tests.conftest import REDIS_URL, purge_prefix

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
    return Ladders(client, Games(RedisStore(client, prefix=prefix)), prefix=prefix)


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
    assert list(lad.r.scan_iter(match=f"{prefix}:ladder:*ops*")) == []
    for gid in started:  # the running games stay, as ordinary games
        state, _, _ = lad.games.load(gid)
        assert state.table["ladder"] == "ops"

    out = rfg(prefix, "delete", "ops")
    assert out.returncode == 2 and "no ladder named 'ops'" in out.stderr
    out = rfg(prefix, "pause", "nope")
    assert out.returncode == 2 and "no ladder named 'nope'" in out.stderr
