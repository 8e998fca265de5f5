"""Finished games compacted (one zlib blob for the log, its hash chain recomputed and checked) and
archived to files: export, replay verification, views, reads, command records and loading still
served; a compaction killed at any point loses nothing (real Redis, real processes)."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import textwrap
import uuid
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
import redis

from events.errors import StoreError
from events.games.service import GameService
from events.store import RedisStore
from events.verify.replay import verify_text
from tests.conftest import REDIS_URL, purge_prefix
from workers import Runtime, WorkerSettings
from workers.dispatch import next_plan, plans
from workers.turns import play

pytestmark = pytest.mark.redis

ROOT = Path(__file__).resolve().parents[3]
BOTS4 = {"seats": [{"kind": "bot", "bot": "heuristic"}] * 4}


@pytest.fixture
def prefix(real_redis: Any) -> Iterator[str]:
    p = f"t{uuid.uuid4().hex[:10]}"
    yield p
    purge_prefix(real_redis, p)


def finished_game(prefix: str, seed: str) -> str:
    """A 4-player bot game played to its end in this process (one job's worth of playing on)."""
    rt = Runtime(
        redis.Redis.from_url(REDIS_URL),
        WorkerSettings(prefix=prefix, queue=prefix, play_on=600),
        listen=False,
    )
    gid, _ = rt.games.create(4, seed=seed, table=BOTS4)
    state, _v, clocks = rt.games.load_clocks(gid)
    nxt = next_plan(plans(gid, state, clocks, "heuristic"))
    play(rt, gid, nxt.seat, nxt.decision_id)
    assert rt.games.load(gid)[0].over
    return gid


def snapshot(store: RedisStore, gid: str) -> dict[str, Any]:
    """Everything a reader may ask of a finished game, through a process with a cold cache."""
    games = GameService(store)
    envs = store.read(gid)
    first_cmd = envs[10].command_id
    state, version, _ = games.load(gid)
    return {
        "export": games.export(gid, "server"),
        "views": [games.view(gid, v) for v in ("public", "summary", 0, 1, 2, 3)],
        "feed": games.feed(gid, 2, after=5, limit=40),
        "slice": [e.to_json() for e in store.read(gid, after=100, limit=7)],
        "command": store.command_result(gid, first_cmd),
        "catch_up": [e.seq for e in store.catch_up(gid, 600, first_cmd)[1]],
        "state": (version, state.scores, state.winners),
        "rebuilt": games.rebuild_views(gid),
        "head": store.head(gid),
    }


def memory(client: Any, store: RedisStore, gid: str) -> int:
    keys = [*store.game_keys(gid), store.compacted_key(gid)]
    return sum(client.memory_usage(k) or 0 for k in keys)


def test_a_compacted_game_is_served_as_before_in_a_tenth_of_the_memory(
    real_redis: Any, prefix: str, tmp_path: Path
) -> None:
    gid = finished_game(prefix, "compact-me")
    store = RedisStore(redis.Redis.from_url(REDIS_URL), prefix=prefix)
    before = snapshot(store, gid)
    used_before = memory(real_redis, store, gid)
    assert verify_text("\n".join(before["export"])).ok
    assert store.compact(gid) is not None
    assert store.compact(gid) is None  # once
    stream, _meta, cmds, views = store.keys(gid)
    assert not real_redis.exists(stream, cmds)
    assert real_redis.hkeys(views) == [b"summary"]  # what the lobby lists (service/lobby.py)
    used_after = memory(real_redis, store, gid)
    assert used_after <= 40_000 < used_before
    fresh = RedisStore(redis.Redis.from_url(REDIS_URL, decode_responses=True), prefix=prefix)
    assert snapshot(fresh, gid) == before
    with pytest.raises(StoreError, match="compacted"):  # nothing lands on a compacted log
        store.append(gid, before["head"].version, "late", [])

    # archived: only the meta hash, the summary (and the seat tokens, the lobby entry) stay in Redis
    archiving = RedisStore(
        redis.Redis.from_url(REDIS_URL), prefix=prefix, archive_dir=str(tmp_path)
    )
    path = archiving.archive(gid)
    assert path is not None and Path(path).is_file()
    assert not real_redis.exists(store.compacted_key(gid))
    assert memory(real_redis, store, gid) < 1_500  # (the summary's hash: about 700 bytes of it)
    reader = RedisStore(redis.Redis.from_url(REDIS_URL), prefix=prefix, archive_dir=str(tmp_path))
    assert snapshot(reader, gid) == before
    with pytest.raises(StoreError, match="RFG_ARCHIVE_DIR"):
        RedisStore(redis.Redis.from_url(REDIS_URL), prefix=prefix).read(gid)


def test_an_active_game_is_not_compacted(prefix: str) -> None:
    store = RedisStore(redis.Redis.from_url(REDIS_URL), prefix=prefix)
    gid, version = GameService(store).create(2, seed="active")
    assert store.compact(gid) is None
    assert store.version(gid) == version and len(store.read(gid)) == version


CRASHER = textwrap.dedent("""
    import os, signal, sys
    import redis
    from events.store import RedisStore
    url, prefix, gid, point, archive = sys.argv[1:6]
    store = RedisStore(redis.Redis.from_url(url), prefix=prefix, archive_dir=archive)
    def hook(at):
        if at == point:
            os.kill(os.getpid(), signal.SIGKILL)
    store.compact(gid, hook=hook)
    store.archive(gid, hook=hook)
""")


@pytest.mark.parametrize("point", ["packed", "written"])
def test_a_compaction_killed_midway_loses_nothing_and_can_run_again(
    prefix: str, tmp_path: Path, point: str
) -> None:
    gid = finished_game(prefix, f"crash-{point}")
    store = RedisStore(redis.Redis.from_url(REDIS_URL), prefix=prefix, archive_dir=str(tmp_path))
    before = snapshot(store, gid)
    proc = subprocess.run(
        [sys.executable, "-c", CRASHER, REDIS_URL, prefix, gid, point, str(tmp_path)],
        cwd=ROOT,
        env={**os.environ, "PYTHONPATH": str(ROOT)},
        capture_output=True,
        timeout=60,
    )
    assert proc.returncode == -signal.SIGKILL, proc.stderr.decode()[-2000:]
    assert snapshot(store, gid) == before  # still served, whole, from wherever it is now
    store.compact(gid)
    assert store.archive(gid) is not None
    assert snapshot(store, gid) == before
    assert not list(tmp_path.rglob("*.tmp"))
