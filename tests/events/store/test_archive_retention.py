"""Retention keeps faith with archives: a finished game that expires (``RFG_FINISHED_GAME_SECONDS``)
loses its archive file with its keys - Redis expires the keys silently, the workers' sweep notices
and removes the file - while a game kept for good keeps its archive (real Redis, real files)."""

from __future__ import annotations

import time
import uuid
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
import redis

from events.store import RedisStore
from tests.conftest import REDIS_URL, purge_prefix
from workers import Runtime, WorkerSettings
from workers.dispatch import next_plan, plans
from workers.sweep import Sweeper
from workers.turns import play

pytestmark = pytest.mark.redis

BOTS2 = {"seats": [{"kind": "bot", "bot": "heuristic"}] * 2}
#: RFG_FINISHED_GAME_SECONDS of the game that expires: the sweep archives it well before
KEEP_FOR = 3


@pytest.fixture
def prefix(real_redis: Any) -> Iterator[str]:
    p = f"t{uuid.uuid4().hex[:10]}"
    yield p
    purge_prefix(real_redis, p)


@pytest.fixture
def rt(prefix: str, tmp_path: Path) -> Runtime:
    rt = Runtime(
        redis.Redis.from_url(REDIS_URL),
        WorkerSettings(prefix=prefix, queue=prefix, play_on=600, compact_after=0),
        listen=False,
    )
    rt.store.archive_dir = str(tmp_path)
    return rt


def finished(rt: Runtime, seed: str, keep_for: int) -> str:
    """A 2-player bot game played to its end by a job in this process (so the dispatcher saw it
    end and the sweep will compact it), created with ``RFG_FINISHED_GAME_SECONDS=keep_for``."""
    gid, _ = rt.games.create(2, seed=seed, table=BOTS2)
    rt.store.set_retention(gid, 0, keep_for)
    state, _v, clocks = rt.games.load_clocks(gid)
    nxt = next_plan(plans(gid, state, clocks, "heuristic"))
    play(rt, gid, nxt.seat, nxt.decision_id)
    assert rt.games.load(gid)[0].over
    return gid


def expire_now(client: Any, store: RedisStore, gid: str) -> None:
    """What Redis does when the game's TTL runs out, a little early: every key goes, silently."""
    for key in (*store.game_keys(gid), store.compacted_key(gid)):
        client.pexpire(key, 1)
    deadline = time.monotonic() + 5
    while client.exists(store.keys(gid)[1]):
        assert time.monotonic() < deadline, "the keys did not expire"
        time.sleep(0.01)


def test_expiry_removes_the_archive_and_a_game_kept_for_good_keeps_it(
    rt: Runtime, real_redis: Any, tmp_path: Path
) -> None:
    kept = finished(rt, "kept", keep_for=0)
    expiring = finished(rt, "expiring", keep_for=KEEP_FOR)
    sweeper = Sweeper(rt)
    sweeper.tick(force=True)  # compacts and archives both
    store = rt.store
    files = {gid: tmp_path / store.prefix / f"{gid}.rfgz" for gid in (expiring, kept)}
    assert all(f.is_file() for f in files.values())
    assert all(real_redis.hexists(store.keys(g)[1], "archived") for g in files)

    sweeper.tick(force=True)  # nothing expired yet: both stay
    assert all(f.is_file() for f in files.values())

    deadline = time.monotonic() + KEEP_FOR + 5  # Redis expires the keys, silently
    while real_redis.exists(store.keys(expiring)[1]):
        assert time.monotonic() < deadline, "the keys did not expire"
        time.sleep(0.05)
    assert files[expiring].is_file()
    sweeper.tick(force=True)
    assert not files[expiring].exists()
    assert files[kept].is_file()
    assert [p.name for p in (tmp_path / store.prefix).iterdir()] == [f"{kept}.rfgz"]
    assert len(store.read(kept)) == store.version(kept)  # still served from its archive
    assert real_redis.zcard(f"{store.prefix}:archives") == 0  # nothing left to remember

    for _ in range(3):  # later sweeps have nothing to do and remove nothing else
        sweeper.tick(force=True)
    assert files[kept].is_file()


def test_a_game_that_expires_while_it_is_archived_leaves_no_file(
    rt: Runtime, real_redis: Any, tmp_path: Path
) -> None:
    """The keys expire between the archive file being written and the script that records it:
    the file is removed, by ``archive`` itself or by the next sweep."""
    gid = finished(rt, "racing", keep_for=3600)
    store = rt.store
    assert store.compact(gid) is not None

    def hook(point: str) -> None:
        if point == "written":
            expire_now(real_redis, store, gid)

    assert store.archive(gid, hook=hook) is None
    Sweeper(rt).tick(force=True)
    assert list(tmp_path.rglob("*.rfgz")) == []
    assert real_redis.zcard(f"{store.prefix}:archives") == 0
