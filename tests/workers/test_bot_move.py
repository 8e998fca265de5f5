"""A bot move loads the game once and plans it once: the job reads the game from the store once,
decides on it, and every state it or its appends make is planned (``workers.dispatch.plans``)
once, whether a job per decision plays or one job plays on."""

from __future__ import annotations

import uuid
from collections import Counter
from collections.abc import Iterator
from typing import Any

import fakeredis
import pytest

import workers.dispatch
import workers.turns
from engine.state import GameState
from events.games.time_control import Clocks
from tests.workers.conftest import FakeClock, burst
from workers import Runtime, WorkerSettings, install
from workers.dispatch import Plan

PERSON_AND_BOT = {
    "seats": [{"kind": "human"}, {"kind": "bot", "bot": "random"}],
    "time_control": {"per_decision": 30},  # (the person's clock: every version owes a worker)
}
BOTS = {"seats": [{"kind": "bot", "bot": "random"}] * 2}


def runtime(clock: FakeClock, play_on: float) -> Runtime:
    prefix = f"t{uuid.uuid4().hex[:8]}"
    client = fakeredis.FakeRedis(server=fakeredis.FakeServer())
    return Runtime(
        client, WorkerSettings(prefix=prefix, queue=prefix, play_on=play_on), clock=clock
    )


@pytest.fixture
def planned(monkeypatch: pytest.MonkeyPatch) -> Iterator[Counter[int]]:
    """Versions planned (``workers.dispatch.plans``) -> how often."""
    counts: Counter[int] = Counter()
    plans = workers.dispatch.plans

    def counting(game_id: str, state: GameState, clocks: Clocks, default_bot: str) -> list[Plan]:
        counts[clocks.version] += 1
        return plans(game_id, state, clocks, default_bot)

    monkeypatch.setattr(workers.dispatch, "plans", counting)
    monkeypatch.setattr(workers.turns, "plans", counting)
    yield counts
    install(None)


def reads(rt: Runtime, monkeypatch: pytest.MonkeyPatch) -> list[str]:
    """The game ids whose stream this runtime's service reads (``EventStore.catch_up``)."""
    read: list[str] = []
    catch_up = rt.store.catch_up

    def counting(game_id: str, *args: Any, **kwargs: Any) -> Any:
        read.append(game_id)
        return catch_up(game_id, *args, **kwargs)

    monkeypatch.setattr(rt.store, "catch_up", counting)
    return read


def test_a_job_per_decision_loads_once_and_plans_each_state_once(
    clock: FakeClock, planned: Counter[int], monkeypatch: pytest.MonkeyPatch
) -> None:
    rt = runtime(clock, play_on=0)
    install(rt)
    gid, _ = rt.games.create(2, seed="one-move", table=PERSON_AND_BOT)
    assert rt.queue.count == 1  # the bot's first decision (the person's timeout is scheduled)
    read = reads(rt, monkeypatch)
    planned.clear()
    burst(rt)
    assert read == [gid]  # the job read the game once; its append needed no second look
    version = rt.store.version(gid)
    # the loaded state, planned by the job, and the stored one, planned by its dispatch
    assert planned == {1: 1, version: 1} and version > 1


def test_playing_on_loads_once_and_plans_each_state_once(
    clock: FakeClock, planned: Counter[int], monkeypatch: pytest.MonkeyPatch
) -> None:
    rt = runtime(clock, play_on=600)
    install(rt)
    gid, _ = rt.games.create(2, seed="played-on", table=BOTS)
    read = reads(rt, monkeypatch)
    planned.clear()
    burst(rt)
    state, _version, _ = rt.games.load_clocks(gid)
    assert state.over  # one job played the whole game
    assert read == [gid, gid]  # the job's one load, and load_clocks above
    assert len(planned) > 20 and max(planned.values()) == 1
