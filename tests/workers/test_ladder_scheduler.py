"""External seats are left to their bot (only their clock is enforced), and the ladder scheduler
in the worker's sweep thread keeps a ladder's games running and records their results."""

from __future__ import annotations

from datetime import timedelta

import engine
from ladder.service import LadderConfig, Ladders, tables_equal
from tests.workers.conftest import FakeClock, burst
from workers import Runtime, Sweeper
from workers.ladders import LadderScheduler


def test_workers_leave_external_seats_to_their_bot_and_time_them(
    fake_rt: Runtime, clock: FakeClock
) -> None:
    table = {
        "seats": [
            {"kind": "external", "account": "0123456789abcdef", "entrant": "x"},
            {"kind": "bot", "bot": "random", "entrant": "r"},
        ],
        "time_control": {"per_decision": 60},
    }
    gid, _ = fake_rt.games.create(2, seed="ext", table=table)
    burst(fake_rt)
    state, _, clocks = fake_rt.games.load_clocks(gid)
    assert not state.over and 0 in engine.pending(state)
    assert clocks.deadline(0) is not None  # timed like a person
    jobs = fake_rt.queue.scheduled_job_registry.get_job_ids()
    assert jobs and all("-timeout-0-" in j for j in jobs), jobs  # only its timeout, no bot job
    # nothing in the queue plays seat 0 before its deadline
    assert not [e for e in fake_rt.store.read(gid) if e.command_id.startswith("bot:0:")]
    clock.advance(60 + fake_rt.settings.stale_after + 1)
    Sweeper(fake_rt).tick(force=True)
    burst(fake_rt)
    assert any(e.actor == "timeout" for e in fake_rt.store.read(gid))


def test_the_ladder_scheduler_keeps_games_running_and_records_results(fake_rt: Runtime) -> None:
    ladders = Ladders(fake_rt.client, fake_rt.games, prefix=fake_rt.settings.prefix)
    ladders.create(LadderConfig("w", players=[2, 3], concurrency=2))
    for name, bot in (("h", "heuristic"), ("r", "random"), ("r2", "random")):
        ladders.add_entrant("w", name, bot=bot)
    sched = LadderScheduler(fake_rt)
    assert sched.due()
    first = sched.tick()
    assert len(first) == 2 and not sched.due()
    assert sched.tick() == []  # both still running
    for _ in range(4):
        burst(fake_rt)  # the workers play the games to their end
        sched.tick()
    assert len(ladders.results("w")) >= 4
    assert tables_equal(ladders.rebuild_ratings("w"), ladders.live_table("w"))
    # another worker holding the lock: this one does nothing
    other = fake_rt.leases.ladder(int(timedelta(seconds=5).total_seconds() * 1000))
    assert other.take()
    assert sched.tick() == []
    other.release()
    ladders.update("w", paused=True)
    burst(fake_rt)
    assert sched.tick() == [] and ladders.running("w") == []
