"""Time control: the clock fold, deadlines in the views, timeouts, abandonment, the policies."""

from __future__ import annotations

import json
from datetime import UTC, datetime, timedelta

import pytest

import engine
from engine.rng import Rng
from events.envelope import iso_utc
from events.games.time_control import Clocks, parse_time_control, validate_table
from tests.workers.checks import check_finished_game
from tests.workers.conftest import FakeClock, burst
from workers import Runtime, Sweeper
from workers.policy import bot_command, minimal_command

T0 = datetime(2026, 1, 1, tzinfo=UTC)


def ts(seconds: float) -> str:
    return iso_utc(T0 + timedelta(seconds=seconds))


def _two_seat_clocks(
    tc: dict[str, float], abandon_after: int = 3
) -> tuple[Clocks, engine.GameState]:
    table = {
        "seats": [{"kind": "human"}, {"kind": "human"}],
        "time_control": tc,
        "abandon_after": abandon_after,
    }
    state = engine.replay(engine.create("tc", 2, None, table))
    clocks = Clocks.for_table(state.table, 2)
    clocks.apply(state, version=state.seq, ts=ts(0), actor="system", seat=None)
    return clocks, state


def _act(state: engine.GameState, seat: int) -> None:
    decision = engine.legal(state, seat)
    assert decision is not None
    engine.play(state, seat, minimal_command(decision))


def test_bank_increment_and_delay_arithmetic() -> None:
    clocks, state = _two_seat_clocks(
        {"per_decision": 5, "bank": 60, "increment": 10, "bank_max": 70}
    )
    assert clocks.deadline(0) == T0 + timedelta(seconds=65)  # delay + bank
    _act(state, 0)  # seat 0 answers after 20 s: 15 s come off the bank, then +10
    clocks.apply(state, version=state.seq, ts=ts(20), actor="seat:0", seat=0)
    assert clocks.seats[0].bank_ms == 55_000
    assert clocks.deadline(1) == T0 + timedelta(seconds=65)  # seat 1's clock kept running
    _act(state, 1)  # seat 1 times out (late): the bank is empty, the increment still comes
    clocks.apply(state, version=state.seq, ts=ts(70), actor="timeout", seat=1)
    assert clocks.seats[1].bank_ms == 10_000 and clocks.seats[1].timeouts == 1
    assert clocks.deadline(1) == T0 + timedelta(seconds=70 + 5 + 10)
    since = clocks.seats[0].since
    assert since == ts(70)  # both seats' next decisions started with the batch that made them


def test_a_seat_acting_itself_resets_its_consecutive_timeouts() -> None:
    clocks, state = _two_seat_clocks({"per_decision": 30}, abandon_after=2)
    _act(state, 0)
    clocks.apply(state, version=state.seq, ts=ts(31), actor="timeout", seat=0)
    _act(state, 1)
    clocks.apply(state, version=state.seq, ts=ts(32), actor="seat:1", seat=1)
    seat0 = engine.pending(state)
    assert 0 in seat0
    _act(state, 0)
    clocks.apply(state, version=state.seq, ts=ts(40), actor="seat:0", seat=0)
    assert clocks.seats[0].timeouts == 0 and clocks.seats[0].timeouts_total == 1
    assert not clocks.seats[0].abandoned


@pytest.mark.parametrize(
    "table, message",
    [
        ({"time_control": {"per_decision": -1}}, "between 0"),
        ({"time_control": {"per_decison": 5}}, "unknown key"),
        ({"time_control": {"per_decision": 0}}, "gives no time"),
        ({"time_control": {"bank_max": 30}}, "gives no time"),
        ({"timeout_policy": "coinflip"}, "timeout_policy"),
        ({"abandon_after": -2}, "abandon_after"),
        ({"seats": [{"kind": "bot"}, {"kind": "human"}]}, "must name its bot"),
        ({"seats": [{"kind": "human"}]}, "exactly 2 seats"),
        ({"challenge": "not-an-id"}, "challenge id"),
        ({"challenge": "0123456789ABCDEF"}, "challenge id"),
        ({"challenge": 123}, "challenge id"),
        ({"challenge": "0123456789abcdef0"}, "challenge id"),
    ],
)
def test_malformed_tables_are_refused_before_anything_is_stored(
    fake_rt: Runtime, table: dict[str, object], message: str
) -> None:
    with pytest.raises(ValueError, match=message):
        validate_table(table, 2)
    with pytest.raises(ValueError, match=message):
        fake_rt.games.create(2, table=table)
    assert fake_rt.store.list_games() == []


def test_time_control_round_trips_to_the_view() -> None:
    tc = parse_time_control({"per_decision": 2.5, "bank": 60, "increment": 1})
    assert tc is not None and tc.to_dict() == {"per_decision": 2.5, "bank": 60, "increment": 1}
    assert parse_time_control({}) is None and parse_time_control(None) is None
    only_increment = parse_time_control({"increment": 5})  # the bank starts empty and grows
    assert only_increment is not None and only_increment.bank_ms == 0


def test_deadlines_are_in_the_public_seat_and_summary_views(fake_rt: Runtime) -> None:
    table = {
        "seats": [{"kind": "human"}, {"kind": "bot", "bot": "random"}],
        "time_control": {"per_decision": 30},
    }
    gid, _ = fake_rt.games.create(2, seed="views", table=table)
    created = fake_rt.store.read(gid)[0].ts
    want = iso_utc(datetime.fromisoformat(created) + timedelta(seconds=30))
    for viewer in ("public", 0, 1):
        clock = json.loads(fake_rt.games.view(gid, viewer)[1])["clock"]
        assert clock["time_control"] == {"per_decision": 30}
        assert clock["seats"][0]["deadline"] == want and clock["seats"][0]["timed"]
        assert clock["seats"][1]["deadline"] is None and not clock["seats"][1]["timed"]
    assert json.loads(fake_rt.games.view(gid, "summary")[1])["next_deadline"] == want


@pytest.mark.parametrize("policy", ["heuristic", "ismcts", "minimal"])
def test_a_seat_that_never_acts_times_out_then_is_abandoned_and_the_game_finishes(
    fake_rt: Runtime, clock: FakeClock, policy: str
) -> None:
    k = 2
    table = {
        "seats": [{"kind": "human"}, {"kind": "bot", "bot": "random"}],
        "time_control": {"per_decision": 60},
        "timeout_policy": policy,
        "abandon_after": k,
        "hand_over": True,
    }
    gid, _ = fake_rt.games.create(2, seed=f"absent-{policy}", table=table)
    sweeper = Sweeper(fake_rt)
    for _ in range(20):
        burst(fake_rt)  # the bot seat plays; seat 0's timeout waits for its deadline
        state, _, clocks = fake_rt.games.load_clocks(gid)
        if state.over:
            break
        assert not clocks.seats[0].abandoned
        # the deadline passes; RQ's scheduler keeps real time, so the sweep (which rescues
        # timeouts still scheduled after their deadline) enqueues the job here
        clock.advance(60 + fake_rt.settings.stale_after + 1)
        assert sweeper.tick(force=True)
    summary, commands = check_finished_game(fake_rt.games, gid)
    timeouts = [c for c in commands if c.actor == "timeout"]
    assert [c.seat for c in timeouts] == [0] * k
    later = [c for c in commands if c.seat == 0][k:]
    assert later and {c.actor for c in later} == {"bot:heuristic"}  # a bot plays it to the end
    assert summary["abandoned"] == [0] and summary["timeouts"] == [k, 0]
    assert summary["away"] == [] and summary["bot_decisions"] == [len(later) + k, 0]
    public = json.loads(fake_rt.games.view(gid, "public")[1])
    assert public["clock"]["seats"][0]["abandoned"] and public["clock"]["seats"][0]["timeouts"] == k
    envs = fake_rt.store.read(gid)
    timed_out = [e for e in envs if e.command_id.startswith("timeout:")]
    assert timed_out and {e.actor for e in timed_out} == {"timeout"}
    if policy == "minimal":  # the timeout played exactly the minimal legal default
        first = next(e for e in timed_out if e.type == "CommandSubmitted")
        state = engine.replay([e.event() for e in envs if e.seq < first.seq])
        decision = engine.legal(state, 0)
        assert decision is not None
        assert first.payload["command"] == minimal_command(decision)


def test_a_timeout_job_that_runs_early_does_nothing(fake_rt: Runtime) -> None:
    from workers import turns

    table = {"seats": [{"kind": "human"}, {"kind": "human"}], "time_control": {"per_decision": 60}}
    gid, version = fake_rt.games.create(2, seed="early", table=table)
    assert turns.play(fake_rt, gid, 0, version).status == "early"
    assert fake_rt.store.version(gid) == version


@pytest.mark.parametrize("players", [2, 3, 4, 5])
def test_the_minimal_policy_is_always_legal(players: int) -> None:
    for g in range(3):
        state, _ = engine.new_game(f"minimal-{players}-{g}", players)
        rng = Rng(g)
        while not state.over and state.round < 60:
            for seat in sorted(engine.pending(state)):
                decision = engine.legal(state, seat)
                if decision is None:
                    continue
                if seat == 0:
                    cmd = minimal_command(decision)
                else:
                    cmd = bot_command(state, seat, "random", rng)
                engine.play(state, seat, cmd)  # raises IllegalCommand if the default is wrong
                if state.over:
                    break
        assert state.over


def test_clocks_copy_is_equal_and_independent() -> None:
    """The per-process cache hands out copies of the clocks: every field must be carried."""
    import dataclasses

    from events.games.time_control import Clocks, SeatClock

    clocks = Clocks.for_table({"time_control": {"per_decision": 60}}, 2)
    for s in clocks.seats:  # a value other than the default in every field
        for f in dataclasses.fields(SeatClock):
            v = getattr(s, f.name)
            setattr(
                s,
                f.name,
                {bool: True, int: 7, str: "x"}.get(type(v), "y") if v in (None, 0, False) else v,
            )
    clocks.version = 42
    copy = clocks.copy()
    assert copy == clocks and copy is not clocks
    copy.seats[0].timeouts += 1
    assert clocks.seats[0].timeouts == 7 and copy.seats[0] is not clocks.seats[0]
