"""Playing on: one job keeps a game of built-in bots and plays decision after decision through
``GameService.submit``; the log is the one a job per decision writes, and a worker killed while playing
on loses and duplicates nothing."""

from __future__ import annotations

import uuid
from collections.abc import Callable, Iterator
from typing import Any

import pytest
import redis
from rq.registry import FinishedJobRegistry, StartedJobRegistry

from tests.conftest import REDIS_URL, purge_prefix
from tests.workers.checks import check_finished_game
from tests.workers.conftest import WorkerProcess, burst, wait_for
from workers import Runtime, WorkerSettings, install

pytestmark = pytest.mark.redis

BOTS4 = {"seats": [{"kind": "bot", "bot": "heuristic"}] * 4}


@pytest.fixture
def two_runtimes(real_redis: Any) -> Iterator[tuple[Runtime, Runtime]]:
    """The same Redis, two prefixes: one job per decision, and playing on."""
    base = f"t{uuid.uuid4().hex[:10]}"
    made = []
    for name, play_on in (("a", 0.0), ("b", 30.0)):
        prefix = f"{base}{name}"
        made.append(
            Runtime(
                redis.Redis.from_url(REDIS_URL),
                WorkerSettings(prefix=prefix, queue=prefix, play_on=play_on),
            )
        )
    yield made[0], made[1]
    install(None)
    for rt in made:
        purge_prefix(real_redis, rt.settings.prefix)


def _log(rt: Runtime, gid: str) -> list[tuple[Any, ...]]:
    return [
        (e.seq, e.type, e.payload, e.actor, e.command_id, e.visibility) for e in rt.store.read(gid)
    ]


def test_a_game_played_on_by_one_job_has_the_events_of_a_job_per_decision(
    two_runtimes: tuple[Runtime, Runtime],
) -> None:
    per_decision, kept = two_runtimes
    logs = []
    for rt in (per_decision, kept):
        install(rt)
        gid, _ = rt.games.create(4, seed="play-on-same", table=BOTS4, game_id="same-game")
        burst(rt)
        check_finished_game(rt.games, gid)  # verifies, each decision once, views rebuild
        logs.append(_log(rt, gid))
    a, b = logs
    assert len(a) > 500 and len(a) == len(b)
    assert a == b  # types, payloads, actors, command ids, visibility: all but the timestamps
    jobs = [FinishedJobRegistry(queue=rt.queue).count for rt in (per_decision, kept)]
    commands = sum(1 for e in a if e[1] == "CommandSubmitted")
    assert jobs[0] >= commands  # a job per decision (and some that found it played)
    assert jobs[1] == 1  # one job played the whole game (its budget is 30 s)
    assert not kept.leases.kept("same-game")


def test_play_on_stops_at_its_budget_and_hands_the_game_back(real_redis: Any) -> None:
    prefix = f"t{uuid.uuid4().hex[:10]}"
    rt = Runtime(
        redis.Redis.from_url(REDIS_URL), WorkerSettings(prefix=prefix, queue=prefix, play_on=0.01)
    )
    install(rt)
    try:
        gid, _ = rt.games.create(4, seed="play-on-budget", table=BOTS4)
        burst(rt)
        _, commands = check_finished_game(rt.games, gid)
        # a 10 ms budget cannot hold a whole game (hundreds of decisions of about a millisecond
        # each): it went back to the queue several times, yet each job played on past its own
        jobs = FinishedJobRegistry(queue=rt.queue).count
        assert 2 < jobs < len(commands)
    finally:
        install(None)
        purge_prefix(real_redis, prefix)


def test_a_worker_killed_while_playing_on_loses_and_duplicates_nothing(
    real_rt: Runtime, spawn_worker: Callable[..., WorkerProcess]
) -> None:
    # the worker SIGKILLs itself just before its 40th append, in the middle of playing on
    doomed = spawn_worker("--play-on", "60", crash="before_append:40")
    gid, _ = real_rt.games.create(4, seed="sigkill-play-on", table=BOTS4)
    wait_for(lambda: doomed.poll() is not None, 60, "the worker to crash")
    commands_before = [e for e in real_rt.store.read(gid) if e.type == "CommandSubmitted"]
    assert len(commands_before) == 39
    # 39 commands stored by at most two jobs (the creation's, and one the sweep may have sent
    # back): the rest were played on
    jobs = (
        StartedJobRegistry(queue=real_rt.queue).count
        + FinishedJobRegistry(queue=real_rt.queue).count
    )
    assert 1 <= jobs <= 2
    assert real_rt.leases.kept(gid)  # the dead keeper's
    rescuer = spawn_worker()
    wait_for(lambda: real_rt.games.load(gid)[0].over, 90, "the game to finish after the crash")
    _, commands = check_finished_game(real_rt.games, gid)  # no decision missing or played twice
    assert {c.actor for c in commands} == {"bot:heuristic"}
    assert [c.command_id for c in commands[:39]] == [e.command_id for e in commands_before]
    assert rescuer.poll() is None


def test_the_sweep_compacts_finished_games(
    real_rt: Runtime, spawn_worker: Callable[..., WorkerProcess]
) -> None:
    spawn_worker("--compact-after", "0")
    gid, _ = real_rt.games.create(4, seed="compact-by-sweep", table=BOTS4)
    meta = real_rt.store.keys(gid)[1]
    wait_for(lambda: real_rt.client.hexists(meta, "compacted"), 60, "the game to be compacted")
    assert not real_rt.client.exists(real_rt.store.keys(gid)[0])  # the stream is gone
    real_rt.games.forget(gid)
    check_finished_game(real_rt.games, gid)  # served from the blob: verifies, views rebuild
