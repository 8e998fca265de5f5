"""Paced bots (``bot_pace_seconds``): an all-bot game a person can follow live.

The bots of a paced table play one decision at a time, each scheduled no earlier than the pace
after the last bot decision (no worker sleeps); the proof is in the log's own timestamps. A table
without a pace is played as fast as before."""

from __future__ import annotations

from collections.abc import Callable
from datetime import datetime, timedelta
from typing import Any

import pytest
from rq.registry import ScheduledJobRegistry

from events.games.time_control import bot_pace_ms, validate_table
from tests.workers.conftest import WorkerProcess, burst, wait_for
from workers import Runtime, turns
from workers.dispatch import plans

BOTS2 = [{"kind": "bot", "bot": "random"}, {"kind": "bot", "bot": "heuristic"}]


def test_the_pace_is_checked_when_the_table_is_made() -> None:
    assert bot_pace_ms({}) == 0 and bot_pace_ms({"bot_pace_seconds": 1.5}) == 1500
    for bad, words in [(6, "between 0 and 5"), (-1, "between 0 and 5"), ("1", "a number")]:
        with pytest.raises(ValueError, match=words):
            validate_table({"seats": BOTS2, "bot_pace_seconds": bad}, 2)
    with pytest.raises(ValueError, match="a number"):
        validate_table({"seats": BOTS2, "bot_pace_seconds": True}, 2)


def test_a_paced_game_schedules_one_bot_decision_at_a_time_and_plays_none_early(
    fake_rt: Runtime,
) -> None:
    gid, version = fake_rt.games.create(
        2, seed="paced", table={"seats": BOTS2, "bot_pace_seconds": 2}
    )
    created = datetime.fromisoformat(fake_rt.store.read(gid)[0].ts)
    state, _, clocks = fake_rt.games.load_clocks(gid)
    owed = plans(gid, state, clocks, "heuristic")
    # both seats owe their start tiles; only the first is given a job, for 2 s after creation
    assert len(state.players) == 2 and [p.seat for p in owed] == [0]
    assert owed[0].at == created + timedelta(seconds=2)
    assert fake_rt.queue.count == 0  # nothing to run now
    scheduled = ScheduledJobRegistry(queue=fake_rt.queue)
    assert scheduled.get_job_ids() == [owed[0].job_id(fake_rt.settings.prefix)]
    # a job that runs before its time plays nothing
    assert turns.play(fake_rt, gid, 0, version).status == "early"
    assert fake_rt.store.version(gid) == version


def test_a_game_without_a_pace_is_played_at_once(fake_rt: Runtime) -> None:
    gid, _ = fake_rt.games.create(2, seed="unpaced", table={"seats": BOTS2})
    assert fake_rt.queue.count == 2  # both start-tile decisions, now
    burst(fake_rt)
    assert fake_rt.games.load(gid)[0].over


@pytest.mark.redis
def test_an_all_bot_game_with_a_pace_takes_at_least_the_pace_per_decision(
    real_rt: Runtime, spawn_worker: Callable[..., WorkerProcess]
) -> None:
    """A real worker (with RQ's scheduler) plays a paced 2-bot game: every bot decision is stored
    at least the pace after the one before, so the first ``k`` decisions take at least ``k``
    times the pace (read from the envelopes' timestamps, not from the test's clock)."""
    pace, k = 0.5, 8
    spawn_worker()
    table = {"seats": BOTS2, "bot_pace_seconds": pace}
    gid, _ = real_rt.games.create(2, seed="paced-live", table=table)

    def commands() -> list[Any]:
        return [e for e in real_rt.store.read(gid) if e.type == "CommandSubmitted"]

    wait_for(lambda: len(commands()) >= k, 60, f"{k} paced bot decisions")
    envs = real_rt.store.read(gid)
    created = datetime.fromisoformat(envs[0].ts)
    times = [datetime.fromisoformat(e.ts) for e in commands()]
    assert all(e.actor.startswith("bot:") for e in commands())
    gaps = [(b - a).total_seconds() for a, b in zip([created, *times], times, strict=False)]
    assert min(gaps) >= pace, gaps  # never two bot decisions closer than the pace
    assert (times[k - 1] - created).total_seconds() >= k * pace
