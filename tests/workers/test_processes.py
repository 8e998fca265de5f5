"""Real ``rfg worker`` processes on the real Redis: games finish, racing workers play each
decision once, a worker SIGKILLed in the middle of a bot turn loses nothing, and timeouts go
through RQ's scheduler."""

from __future__ import annotations

import signal
from collections.abc import Callable
from datetime import datetime, timedelta

import pytest

from tests.workers.checks import check_finished_game
from tests.workers.conftest import WorkerProcess, kill_group, wait_for
from workers import Runtime
from workers.dispatch import JOB_FUNC

pytestmark = pytest.mark.redis

BOTS4 = {"seats": [{"kind": "bot", "bot": "heuristic"}] * 4}
Spawn = Callable[..., WorkerProcess]


def _over(rt: Runtime, gid: str) -> bool:
    return rt.games.load(gid)[0].over


def test_two_worker_processes_finish_games_and_play_each_decision_once(
    real_rt: Runtime, spawn_worker: Spawn
) -> None:
    gids = [real_rt.games.create(4, seed=f"procs-{i}", table=BOTS4)[0] for i in range(3)]
    # every first decision also gets a second job under another id: the workers race on them
    for gid in gids:
        _, _, clocks = real_rt.games.load_clocks(gid)
        for sc in clocks.seats:
            real_rt.queue.enqueue(
                JOB_FUNC,
                gid,
                sc.seat,
                sc.decision_id,
                real_rt.settings.prefix,
                job_id=f"{real_rt.settings.prefix}-dup-{gid}-{sc.seat}",
            )
    spawn_worker()
    spawn_worker()
    wait_for(lambda: all(_over(real_rt, g) for g in gids), 90, "three games to finish")
    for gid in gids:
        _, commands = check_finished_game(real_rt.games, gid)
        assert {c.actor for c in commands} == {"bot:heuristic"}


@pytest.mark.parametrize("crash", ["before_append:40", "after_append:40", "external"])
def test_a_worker_killed_mid_turn_loses_and_duplicates_nothing(
    real_rt: Runtime, spawn_worker: Spawn, crash: str
) -> None:
    # before_append: one job per decision, so the dead worker's job is the one left STARTED (a
    # worker killed while playing on: test_play_on.py)
    doomed = spawn_worker(
        *(["--play-on", "0"] if crash.startswith("before") else []),
        crash=None if crash == "external" else crash,
    )
    gid, _ = real_rt.games.create(4, seed=f"sigkill-{crash}", table=BOTS4)
    if crash == "external":
        wait_for(lambda: real_rt.store.version(gid) >= 150, 60, "the game to get going")
        kill_group(doomed, signal.SIGKILL)  # the worker and its scheduler, mid-flight
    else:  # the worker SIGKILLs itself at that point of its 40th bot turn
        wait_for(lambda: doomed.poll() is not None, 60, "the worker to crash")
        assert doomed.returncode == -signal.SIGKILL
    stopped_at = real_rt.store.version(gid)
    assert not _over(real_rt, gid)
    rescuer = spawn_worker()
    wait_for(lambda: _over(real_rt, gid), 90, "the game to finish after the crash")
    assert real_rt.store.version(gid) > stopped_at
    if crash.startswith("before_append"):  # the dead worker's STARTED job was replaced
        assert "enqueuing it again" in rescuer.log_path.read_text()
    _, commands = check_finished_game(real_rt.games, gid)
    assert {c.actor for c in commands} == {"bot:heuristic"}


def test_an_absent_person_times_out_through_the_scheduler_and_is_away(
    real_rt: Runtime, spawn_worker: Spawn
) -> None:
    k = 2
    table = {
        "seats": [{"kind": "human"}, {"kind": "bot", "bot": "random"}],
        "time_control": {"per_decision": 1},
        "abandon_after": k,
    }
    gid, _ = real_rt.games.create(2, seed="absent-real", table=table)
    spawn_worker()
    wait_for(lambda: _over(real_rt, gid), 60, "the game to finish through timeouts")
    summary, commands = check_finished_game(real_rt.games, gid)
    assert summary["away"] == [0] and summary["timeouts"] == [k, 0]  # a bot played it since
    assert [c.actor for c in commands if c.seat == 0][:k] == ["timeout"] * k
    # each timeout came at or after its deadline (never early), as the view showed it
    envs = {e.seq: e for e in real_rt.store.read(gid)}
    applied = {e.command_id: datetime.fromisoformat(e.ts) for e in envs.values()}
    for c in commands:
        if c.actor == "timeout":
            started = datetime.fromisoformat(envs[c.decision_id].ts)
            assert applied[c.command_id] >= started + timedelta(seconds=1)
