"""Appends that need no worker: a command after which every pending decision is a person's
without a clock is stored ``unattended`` (meta field of that version) and costs the dispatcher no
write; the sweep does not load such a game for it. Anything a worker must do is still dispatched."""

from __future__ import annotations

from typing import Any

import engine
from tests.workers.conftest import FakeClock
from workers import Runtime, Sweeper

PEOPLE = {"seats": [{"kind": "human"}, {"kind": "human"}]}
PERSON_AND_BOT = {"seats": [{"kind": "human"}, {"kind": "bot", "bot": "random"}]}
TIMED = {
    "seats": [{"kind": "human"}, {"kind": "human"}],
    "time_control": {"per_decision": 30},
}


def start_tiles(rt: Runtime, gid: str, seat: int, cid: str) -> int:
    state, version, _ = rt.games.load_clocks(gid)
    decision = engine.legal(state, seat)
    assert decision is not None and decision["kind"] == "start_tiles"
    cmd = {"kind": "start_tiles", "development": decision["options"][0]["development"]}
    return rt.games.submit(gid, seat, cmd, cid, version).version


def meta(rt: Runtime, gid: str) -> dict[str, str]:
    raw = rt.client.hgetall(rt.store.keys(gid)[1])
    return {k.decode(): v.decode() for k, v in raw.items()}


def counting_loads(rt: Runtime, monkeypatch: Any) -> list[str]:
    loaded: list[str] = []
    load = rt.games.load_clocks

    def counted(game_id: str) -> Any:
        loaded.append(game_id)
        return load(game_id)

    monkeypatch.setattr(rt.games, "load_clocks", counted)
    return loaded


def test_a_command_among_people_without_clocks_writes_no_agenda_and_no_sweep_loads_it(
    fake_rt: Runtime, clock: FakeClock, monkeypatch: Any
) -> None:
    gid, _ = fake_rt.games.create(2, seed="people", table=PEOPLE)
    sweeper = Sweeper(fake_rt)
    sweeper.tick(force=True)  # the game is on the agenda (from the lobby), seen at its creation
    entry_before = {g: (d, s) for g, d, s in fake_rt.dispatcher.agenda.entries()}[gid]
    v1 = start_tiles(fake_rt, gid, 0, "a")
    v2 = start_tiles(fake_rt, gid, 1, "b")
    assert meta(fake_rt, gid)["unattended"] == str(v2) and v2 > v1
    entries = {g: (d, s) for g, d, s in fake_rt.dispatcher.agenda.entries()}
    assert entries[gid] == entry_before  # no agenda write for either command
    assert fake_rt.queue.count == 0
    loaded = counting_loads(fake_rt, monkeypatch)
    clock.advance(fake_rt.settings.stale_after + 1)  # (not yet the periodic recheck)
    assert sweeper.tick(force=True) == []
    assert loaded == []  # the moved version was stored unattended: not looked at


def test_a_command_that_makes_a_bot_decision_pending_is_dispatched(
    fake_rt: Runtime, clock: FakeClock
) -> None:
    gid, _ = fake_rt.games.create(2, seed="mixed", table=PERSON_AND_BOT)
    state, version, _ = fake_rt.games.load_clocks(gid)
    assert fake_rt.queue.count == 1  # the bot's start tiles
    v = start_tiles(fake_rt, gid, 0, "a")
    assert meta(fake_rt, gid).get("unattended") is None  # the bot still owes its decision
    seen = {g: s for g, _, s in fake_rt.dispatcher.agenda.entries()}
    assert seen[gid] == v


def test_a_person_under_a_clock_is_attended_and_a_lost_dispatch_is_found(
    fake_rt: Runtime, clock: FakeClock, monkeypatch: Any
) -> None:
    gid, _ = fake_rt.games.create(2, seed="timed", table=TIMED)
    sweeper = Sweeper(fake_rt)
    sweeper.tick(force=True)
    # the process that stores the command dies before its dispatch (no listener runs)
    monkeypatch.setattr(fake_rt.games, "listeners", [])
    v = start_tiles(fake_rt, gid, 0, "a")
    assert meta(fake_rt, gid).get("unattended") is None  # seat 1's clock runs: a timeout job
    loaded = counting_loads(fake_rt, monkeypatch)
    sweeper.tick(force=True)
    assert loaded == [gid]  # the moved version is looked at and dispatched
    assert {g: s for g, _, s in fake_rt.dispatcher.agenda.entries()}[gid] == v
