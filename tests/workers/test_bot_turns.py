"""Bot turns on fakeredis with RQ ``SimpleWorker(burst=True)``: games finish with workers only,
each decision is played once however often its job runs, rejected commands are not retried,
infrastructure errors are, and the sweep recovers lost dispatches and dead jobs."""

from __future__ import annotations

import json
import logging
import threading
import uuid
from typing import Any

import pytest
import redis
from rq.job import Job, JobStatus
from rq.registry import FailedJobRegistry

import engine
import events.store
from events.games.projections import view_name
from events.games.service import GameService
from events.store.accounts import SeatTokenStore
from tests.workers.checks import check_finished_game
from tests.workers.conftest import FakeClock, burst
from workers import Runtime, Sweeper, WorkerSettings, install, process, turns
from workers.dispatch import JOB_FUNC

BOTS4 = {"seats": [{"kind": "bot", "bot": "heuristic"}] * 4}
BOTS2 = {"seats": [{"kind": "bot", "bot": "heuristic"}, {"kind": "bot", "bot": "random"}]}


def test_a_four_bot_game_created_through_the_api_finishes_with_workers_only() -> None:
    from service import create_app

    url = f"memory://{uuid.uuid4().hex}"
    app = create_app({"STORE_URL": url, "TESTING": True})
    api = app.test_client()
    r = api.post("/games", json={"seats": BOTS4["seats"]})
    assert r.status_code == 201, r.get_json()
    gid = r.get_json()["game_id"]
    # the API has no dispatcher attached: nothing is queued until a worker's sweep finds the game
    settings = WorkerSettings(prefix="rfg", queue=f"q{uuid.uuid4().hex[:8]}")
    try:
        assert process.run(url, settings, burst=True) == 0  # the `rfg worker --burst` code path
    finally:
        install(None)
    summary, commands = check_finished_game(
        GameService(events.store.RedisStore(events.store.connect(url))), gid
    )
    assert commands and {c.actor for c in commands} == {"bot:heuristic"}
    assert summary["abandoned"] == [] and summary["timeouts"] == [0, 0, 0, 0]
    assert api.get(f"/games/{gid}").get_json()["status"] == "finished"


def test_jobs_chain_a_game_to_its_end_and_views_rebuild_identically(fake_rt: Runtime) -> None:
    gid, _ = fake_rt.games.create(4, seed="chain", table=BOTS4)
    assert fake_rt.queue.count == 4  # every seat owes its start tiles
    burst(fake_rt)
    summary, commands = check_finished_game(fake_rt.games, gid)
    assert len(commands) > 100
    assert fake_rt.dispatcher.agenda.due(gid) is None  # a finished game leaves the agenda


def test_the_views_a_bots_last_move_renders_show_the_seats_names(fake_rt: Runtime) -> None:
    """The worker's game service reads the seats' display names as the API's does: the final
    views, rendered by the append of the move that ends the game, name the seats."""
    gid, _ = fake_rt.games.create(2, seed="names", table=BOTS2)
    assert SeatTokenStore(fake_rt.store).claim(gid, 0, "d" * 64, "", "Ada") == "ok"
    burst(fake_rt)
    version, text = fake_rt.store.get_view(gid, view_name("public"))
    view = json.loads(text)
    assert view["step"] == "over" and version == fake_rt.store.version(gid)
    assert [p.get("name") for p in view["players"]] == ["Ada", None]


def test_dispatching_the_same_state_again_enqueues_nothing(fake_rt: Runtime) -> None:
    gid, _ = fake_rt.games.create(4, seed="once", table=BOTS4)
    state, version, clocks = fake_rt.games.load_clocks(gid)
    assert fake_rt.dispatcher.dispatch(gid, state, clocks, version) == []
    assert fake_rt.dispatcher.dispatch(gid, state, clocks, version, rescue=True) == []
    assert fake_rt.queue.count == 4
    assert Sweeper(fake_rt).tick(force=True) == []


def _rendezvous(runtimes: tuple[Runtime, ...]) -> None:
    """Both racers decide, then submit at the same moment: each runtime's submit waits for the
    other's."""
    barrier = threading.Barrier(len(runtimes), timeout=10)
    for rt in runtimes:
        submit = rt.games.submit

        def submit_together(*args: Any, submit: Any = submit, **kwargs: Any) -> Any:
            barrier.wait()
            return submit(*args, **kwargs)

        rt.games.submit = submit_together  # type: ignore[method-assign]


def test_two_workers_racing_on_one_pending_decision_produce_one_command(fake_rt: Runtime) -> None:
    other = Runtime(fake_rt.client, fake_rt.settings, fake_rt.clock)  # its own state cache
    gid, _ = Runtime(fake_rt.client, fake_rt.settings, listen=False).games.create(
        2, seed="race", table=BOTS2
    )
    state, version, clocks = fake_rt.games.load_clocks(gid)
    since = clocks.seats[0].decision_id
    assert since is not None
    _rendezvous((fake_rt, other))
    outcomes: list[str] = []

    def race(rt: Runtime) -> None:
        outcomes.append(turns.play(rt, gid, 0, since).status)

    threads = [threading.Thread(target=race, args=(rt,)) for rt in (fake_rt, other)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert sorted(outcomes) in (["duplicate", "played"], ["moved_on", "played"])
    records = [e for e in fake_rt.store.read(gid) if e.type == "CommandSubmitted"]
    assert [(e.payload["seat"], e.command_id) for e in records] == [(0, f"bot:0:{since}")]


def test_the_same_decision_enqueued_twice_is_played_once(fake_rt: Runtime) -> None:
    gid, _ = fake_rt.games.create(2, seed="twice", table=BOTS2)
    _, _, clocks = fake_rt.games.load_clocks(gid)
    since = clocks.seats[1].decision_id
    # a second job for seat 1's decision under another id (as if two processes had raced)
    fake_rt.queue.enqueue(JOB_FUNC, gid, 1, since, fake_rt.settings.prefix, job_id="dup-1")
    burst(fake_rt)
    result = Job.fetch("dup-1", connection=fake_rt.client).return_value()
    assert result is not None and result["status"] in ("duplicate", "moved_on")
    check_finished_game(fake_rt.games, gid)


def test_a_rejected_command_fails_loudly_and_is_not_retried(
    fake_rt: Runtime, monkeypatch: pytest.MonkeyPatch, caplog: pytest.LogCaptureFixture
) -> None:
    monkeypatch.setattr(turns, "bot_command", lambda *a: {"kind": "manage"})  # wrong kind
    gid, version = fake_rt.games.create(2, seed="bad", table=BOTS2)
    with caplog.at_level(logging.ERROR):
        burst(fake_rt)
    assert "REJECTED COMMAND" in caplog.text
    failed = FailedJobRegistry(queue=fake_rt.queue)
    assert failed.count == 2
    for job_id in failed.get_job_ids():
        job = Job.fetch(job_id, connection=fake_rt.client)
        assert job.meta["rejected"] and job.number_of_retries in (None, 0)
    assert fake_rt.store.version(gid) == version  # nothing stored
    assert Sweeper(fake_rt).tick(force=True) == []  # the sweep leaves it for a person


def test_infrastructure_errors_are_retried(
    fake_rt: Runtime, monkeypatch: pytest.MonkeyPatch
) -> None:
    rt = Runtime(fake_rt.client, fake_rt.settings.with_(retry_intervals=(0,)), fake_rt.clock)
    install(rt)
    real = rt.games.load_clocks
    failures = {"left": 1}

    def flaky(game_id: str) -> Any:
        if failures["left"]:
            failures["left"] -= 1
            raise redis.ConnectionError("connection reset by peer")
        return real(game_id)

    monkeypatch.setattr(rt.games, "load_clocks", flaky)
    gid, _ = rt.games.create(2, seed="flaky", table=BOTS2)
    burst(rt)
    retried = [
        Job.fetch(j, connection=rt.client) for j in rt.queue.finished_job_registry.get_job_ids()
    ]
    assert any(j.number_of_retries == 1 for j in retried)
    check_finished_game(rt.games, gid)


def test_the_sweep_recovers_a_dispatch_lost_after_the_append(fake_rt: Runtime) -> None:
    # a process that stores commands but dies before it enqueues (or an API without workers)
    lost = Runtime(fake_rt.client, fake_rt.settings, fake_rt.clock, listen=False)
    gid, _ = lost.games.create(2, seed="lost", table=BOTS2)
    state, version, clocks = lost.games.load_clocks(gid)
    decision = engine.legal(state, 0)
    assert decision is not None
    cmd = {"kind": "start_tiles", "development": decision["options"][0]["development"]}
    since = clocks.seats[0].decision_id
    lost.games.submit(gid, 0, cmd, f"bot:0:{since}", version, actor="bot:heuristic")
    assert fake_rt.queue.count == 0
    assert len(Sweeper(fake_rt).tick(force=True)) == 1  # seat 1 still owes its start tiles
    burst(fake_rt)
    check_finished_game(fake_rt.games, gid)


def test_the_sweep_replaces_a_job_whose_worker_died(fake_rt: Runtime, clock: FakeClock) -> None:
    gid, _ = fake_rt.games.create(2, seed="dead", table=BOTS2)
    # a worker takes seat 0's job and dies: the job stays STARTED in the started registry
    job_id = fake_rt.client.lpop(fake_rt.queue.key).decode()
    job = Job.fetch(job_id, connection=fake_rt.client)
    job.set_status(JobStatus.STARTED)
    fake_rt.client.hset(job.key, "started_at", "2020-01-01T00:00:00.000000Z")
    sweeper = Sweeper(fake_rt)
    clock.advance(1)  # not stale yet by the agenda (bot decisions are checked after stale_after)
    assert sweeper.tick(force=True) == []
    clock.advance(fake_rt.settings.stale_after)
    assert sweeper.tick(force=True) == [job_id]
    burst(fake_rt)
    check_finished_game(fake_rt.games, gid)


def test_the_sweep_replaces_a_job_stranded_between_dequeue_and_start(
    fake_rt: Runtime, clock: FakeClock
) -> None:
    gid, _ = fake_rt.games.create(2, seed="stranded", table=BOTS2)
    # a worker moved the job to RQ's intermediate list (LMOVE) and died before starting it
    job_id = fake_rt.client.lmove(fake_rt.queue.key, fake_rt.queue.intermediate_queue_key).decode()
    clock.advance(fake_rt.settings.stale_after + 1)
    assert Sweeper(fake_rt).tick(force=True) == [job_id]
    assert fake_rt.client.llen(fake_rt.queue.intermediate_queue_key) == 0
    burst(fake_rt)
    check_finished_game(fake_rt.games, gid)


def test_an_unknown_bot_fails_its_job_once_and_is_left_alone(fake_rt: Runtime) -> None:
    table = {"seats": [{"kind": "bot", "bot": "no-such-bot"}, {"kind": "human"}]}
    gid, version = fake_rt.games.create(2, seed="unknown", table=table)
    burst(fake_rt)
    failed = FailedJobRegistry(queue=fake_rt.queue)
    assert failed.count == 1
    assert Job.fetch(failed.get_job_ids()[0], connection=fake_rt.client).meta["rejected"]
    assert Sweeper(fake_rt).tick(force=True) == [] and fake_rt.store.version(gid) == version


def test_a_lost_dispatch_is_recovered_even_after_later_commands_were_dispatched(
    fake_rt: Runtime, clock: FakeClock
) -> None:
    lost = Runtime(fake_rt.client, fake_rt.settings, fake_rt.clock, listen=False)
    gid, version = lost.games.create(2, seed="later", table=BOTS2)  # both seats' jobs lost
    assert turns.play(fake_rt, gid, 0, version).status == "played"  # dispatched: seat 0 is done
    assert fake_rt.queue.count == 0  # seat 1's decision predates that command: not re-enqueued
    sweeper = Sweeper(fake_rt)
    assert sweeper.tick(force=True) == []  # the version was dispatched; not due yet
    clock.advance(fake_rt.settings.stale_after + 1)
    assert len(sweeper.tick(force=True)) == 1  # a bot decision pending too long: looked at
    burst(fake_rt)
    check_finished_game(fake_rt.games, gid)
