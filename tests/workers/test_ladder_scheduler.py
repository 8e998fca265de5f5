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


def test_the_scheduler_pairs_an_account_that_joined_and_skips_it_once_it_left(
    fake_rt: Runtime,
) -> None:
    ladders = Ladders(fake_rt.client, fake_rt.games, prefix=fake_rt.settings.prefix)
    ladders.create(LadderConfig("o", players=[2], concurrency=6, open=True))
    for name, bot in (("h", "heuristic"), ("r", "random")):
        ladders.add_entrant("o", name, bot=bot)
    account = "0123456789abcdef"
    entrant, new = ladders.join("o", account, "2026-01-01T00:00:00Z")
    assert new and entrant["entrant"] == f"acct.{account}"
    sched = LadderScheduler(fake_rt)
    created = sched.tick()
    assert len(created) == 6
    games = ladders.ladder_games("o")
    mine = [g for g in created if f"acct.{account}" in games[g]["seats"]]
    assert mine, "the joined account was never paired"
    assert set(mine) <= set(ladders.accounts.active_games(account))  # its decisions stream's
    for gid in mine:
        state, _, _ = fake_rt.games.load(gid)
        seat = games[gid]["seats"].index(f"acct.{account}")
        assert state.table["seats"][seat] == {
            "kind": "external",
            "account": account,
            "entrant": f"acct.{account}",
        }
    ladders.leave("o", account, "2026-01-01T00:01:00Z")
    for _ in range(3):
        burst(fake_rt)  # the built-in bots' games end; the account's wait for it
        for gid in sched.tick():
            assert f"acct.{account}" not in ladders.ladder_games("o")[gid]["seats"]
    assert len(ladders.results("o")) >= 6 - len(mine)
    assert all(g in ladders.running("o") for g in mine)  # its games play on, unhurried
