"""A seat that times out ``abandon_after`` times in a row (``events.games.time_control``): by
default it is *away*, a bot plays it until its player comes back (``POST
/games/{id}/seats/{n}/back``, the command ``back``), and then its decisions are the player's
again, timed as before; a table created with ``hand_over: true`` gives the seat to the bot for
good and ``back`` is refused. Every decision a timeout or a bot made for the person is counted
(``bot_decisions``) and named by its actor in the log, which still verifies. The timeouts and
bot turns run in this process (``workers.turns.play``) as a worker would play them, on the real
Redis the API uses; the clock is a 50 ms decision, and the test waits for each deadline to
pass."""

from __future__ import annotations

import time
import uuid
from collections.abc import Iterator
from datetime import datetime
from typing import Any

import pytest
import redis
from flask import Flask
from openapi_core import OpenAPI

from events.verify.replay import verify_text
from tests.conftest import REDIS_URL, purge_prefix
from workers import Runtime, WorkerSettings
from workers.dispatch import next_plan, plans
from workers.policy import minimal_command
from workers.turns import play

from .conftest import ValidatingClient, _client, bearer, make_app

pytestmark = pytest.mark.redis

K = 2  # timeouts in a row before the seat is away
TABLE = {"time_control": {"per_decision": 0.05}, "abandon_after": K}


@pytest.fixture
def prefix(real_redis: Any) -> Iterator[str]:
    p = f"t{uuid.uuid4().hex[:10]}"
    yield p
    purge_prefix(real_redis, p)


@pytest.fixture
def app(prefix: str) -> Flask:
    return make_app(REDIS_URL, STORE_PREFIX=prefix)


@pytest.fixture
def api(app: Flask, openapi: OpenAPI) -> ValidatingClient:
    return _client(app, openapi)


@pytest.fixture
def rt(prefix: str) -> Runtime:
    """The workers' side: plays bot turns and timeouts when this test says so."""
    settings = WorkerSettings(prefix=prefix, queue=prefix, play_on=0, default_bot="random")
    return Runtime(redis.Redis.from_url(REDIS_URL), settings, listen=False)


def work_one(rt: Runtime, gid: str) -> str:
    """Play the one decision a worker would play next (waiting for a timeout's deadline to pass):
    ``bot`` or ``timeout``."""
    state, _v, clocks = rt.games.load_clocks(gid)
    assert not state.over
    owed = plans(gid, state, clocks, rt.settings.default_bot)
    assert owed, "nothing for a worker to play: a person owes every decision with no deadline"
    bots = [p for p in owed if p.kind == "bot"]
    plan = next_plan(bots) if bots else min(owed, key=lambda p: p.at or datetime.min)
    while plan.at is not None and rt.clock() < plan.at:
        time.sleep(0.01)  # the deadline is 50 ms after the decision started
    outcome = play(rt, gid, plan.seat, plan.decision_id)
    assert outcome.status == "played", outcome
    return plan.kind


def game(api: ValidatingClient, gid: str) -> dict[str, Any]:
    out: dict[str, Any] = api.get(f"/games/{gid}").get_json()
    return out


def clock_of(api: ValidatingClient, gid: str, seat: int) -> dict[str, Any]:
    out: dict[str, Any] = api.get(f"/games/{gid}/view").get_json()["view"]["clock"]["seats"][seat]
    return out


def seat0_actors(rt: Runtime, gid: str) -> list[tuple[str, str]]:
    """(actor, command kind) of each command of seat 0, in order."""
    return [
        (e.actor, e.payload["command"]["kind"])
        for e in rt.store.read(gid)
        if e.type == "CommandSubmitted" and e.payload["seat"] == 0
    ]


def start(api: ValidatingClient, **table: Any) -> tuple[str, str]:
    """A game of a person (seat 0, who then walks away) and a bot (seat 1)."""
    body = {**TABLE, **table, "seats": [{"kind": "human"}, {"kind": "bot", "bot": "random"}]}
    r = api.post("/games", json=body)
    assert r.status_code == 201, r.get_json()
    gid = r.get_json()["game_id"]
    r = api.post(f"/games/{gid}/seats/0/claim")
    assert r.status_code == 201, r.get_json()
    return gid, r.get_json()["token"]


def walk_away(api: ValidatingClient, rt: Runtime, gid: str) -> None:
    """Let seat 0's clock run out ``K`` times in a row (the bot seat plays meanwhile)."""
    while sum(a == "timeout" for a, _ in seat0_actors(rt, gid)) < K:
        assert not game(api, gid)["away"] and not game(api, gid)["abandoned"]
        work_one(rt, gid)


def test_away_a_bot_plays_until_the_player_is_back_then_the_player_plays_on(
    api: ValidatingClient, rt: Runtime
) -> None:
    gid, token = start(api)
    r = api.post(f"/games/{gid}/seats/0/back", headers=bearer(token))
    assert r.status_code == 409 and r.get_json()["code"] == "not_away", r.get_json()
    assert "answer its decision" in r.get_json()["detail"]

    walk_away(api, rt, gid)
    g = game(api, gid)
    assert g["away"] == [0] and g["abandoned"] == [] and g["bot_decisions"] == [K, 0]
    seat = clock_of(api, gid, 0)
    assert seat["away"] and seat["away_at"] is not None and seat["deadline"] is None

    # away: a bot plays each of the seat's decisions at once, never waiting for a deadline
    while sum(a.startswith("bot:") for a, _ in seat0_actors(rt, gid)) < 3:
        assert work_one(rt, gid) == "bot"
    g = game(api, gid)
    assert g["away"] == [0] and g["bot_decisions"][0] == K + 3
    assert [a for a, _ in seat0_actors(rt, gid)] == ["timeout"] * K + ["bot:random"] * 3

    # only the seat's own token brings it back
    assert api.post(f"/games/{gid}/seats/0/back").status_code == 401
    assert api.post(f"/games/{gid}/seats/0/back", headers=bearer("rfg_nope")).status_code == 401
    r = api.post(f"/games/{gid}/seats/0/back", headers=bearer(token))
    assert r.status_code == 201, r.get_json()
    assert r.get_json()["away"] == [] and r.get_json()["bot_decisions"] == [K + 3, 0]
    assert seat0_actors(rt, gid)[-1] == ("seat:0", "back")
    seat = clock_of(api, gid, 0)
    assert not seat["away"] and seat["timeouts"] == 0 and seat["timeouts_total"] == K
    r = api.post(f"/games/{gid}/seats/0/back", headers=bearer(token))
    assert r.status_code == 409 and r.get_json()["type"] == "/problems/back-unavailable"

    # the player plays on: the seat's decisions are timed again, and not the bot's
    state, _v, clocks = rt.games.load_clocks(gid)
    while 0 not in {p.seat for p in plans(gid, state, clocks, "random")}:
        work_one(rt, gid)  # (the bot seat's turn)
        state, _v, clocks = rt.games.load_clocks(gid)
    assert [p.kind for p in plans(gid, state, clocks, "random") if p.seat == 0] == ["timeout"]
    assert clock_of(api, gid, 0)["deadline"] is not None
    sv = api.get(f"/games/{gid}/seats/0/view", headers=bearer(token)).get_json()
    r = api.post(
        f"/games/{gid}/seats/0/commands",
        json={
            "command_id": "mine",
            "expected_version": sv["version"],
            "command": minimal_command(sv["view"]["decision"]),
        },
        headers=bearer(token),
    )
    assert r.status_code == 201, r.get_json()
    assert seat0_actors(rt, gid)[-1][0] == "seat:0"
    assert game(api, gid)["bot_decisions"] == [K + 3, 0]

    # the log says who decided each time, and it still verifies
    verdict = verify_text("\n".join(rt.games.export(gid, "server")))
    assert verdict.consistent, verdict.reason


def test_a_table_that_hands_the_seat_over_keeps_the_bot_on_it(
    api: ValidatingClient, rt: Runtime
) -> None:
    gid, token = start(api, hand_over=True)
    walk_away(api, rt, gid)
    g = game(api, gid)
    assert g["abandoned"] == [0] and g["away"] == [] and g["bot_decisions"] == [K, 0]
    assert api.get(f"/games/{gid}/view").get_json()["view"]["clock"]["hand_over"] is True
    r = api.post(f"/games/{gid}/seats/0/back", headers=bearer(token))
    assert r.status_code == 409 and r.get_json()["code"] == "handed_over", r.get_json()
    assert "hand_over" in r.get_json()["detail"]
    for _ in range(3):
        assert work_one(rt, gid) == "bot"
    assert game(api, gid)["abandoned"] == [0]


def test_hand_over_must_be_a_boolean(api: ValidatingClient) -> None:
    body = {**TABLE, "hand_over": "yes", "seats": [{"kind": "human"}, {"kind": "human"}]}
    r = api.post("/games", json=body, validate=False)
    assert r.status_code == 422 and "hand_over" in str(r.get_json())
