"""The signature of a finished game's log states the log's result, however the game ended: by
scoring, by resignation, abandoned by its host, aborted in its first round, or played on by a bot after a seat timed out too
often. ``GET .../log`` signs ``GameEnded``'s scores and winners and ``POST /replays/verify``
vouches for each log; it refuses a log whose signed result differs from ``GameEnded`` and one with
a key given twice in any line (the forgeries of ``tests/events/verify/forgeries.py``)."""

from __future__ import annotations

import json
import uuid
from collections.abc import Iterator
from typing import Any

import pytest
from flask import Flask

import events.store
from tests.events.verify import forgeries
from tests.service.conftest import ADMIN, ValidatingClient, bearer, make_app, new_game, play_http
from tests.workers.conftest import FakeClock, burst
from workers import Runtime, Sweeper, WorkerSettings, install


@pytest.fixture
def url() -> str:
    return f"memory://{uuid.uuid4().hex}"


@pytest.fixture
def app(url: str) -> Flask:
    """The app of ``tests.service.conftest``'s ``api``, signing with the forgeries' key."""
    return make_app(url, **forgeries.app_config())


def _verified_result(api: ValidatingClient, gid: str) -> dict[str, Any]:
    """GameEnded's payload, once the signature states its scores and winners and
    POST /replays/verify vouches for the log."""
    text = api.get(f"/games/{gid}/log").get_data(as_text=True)
    *_, ended, signature = (json.loads(line) for line in text.splitlines())
    assert ended["type"] == "GameEnded"
    payload: dict[str, Any] = ended["payload"]
    result = {"scores": payload["scores"], "winners": payload["winners"]}
    assert signature["signature"]["result"] == result
    verdict = _verify(api, text)
    assert verdict["ok"] and verdict["origin"] == "this-server", verdict
    return payload


def _verify(api: ValidatingClient, text: str) -> dict[str, Any]:
    r = api.post("/replays/verify", data=text, content_type="application/x-ndjson")
    assert r.status_code == 200, r.get_json()
    verdict: dict[str, Any] = r.get_json()
    return verdict


def test_a_game_ended_by_scoring(api: ValidatingClient) -> None:
    api.sample = 20  # a whole game's requests: each shape checked, then every 20th
    gid, tokens = new_game(api, 2, seed="scored")
    play_http(api, gid, tokens, seed=5)
    ended = _verified_result(api, gid)
    assert ended["reason"] not in ("resigned", "abandoned") and ended["winners"]


def test_a_game_ended_by_resignation(api: ValidatingClient) -> None:
    gid, tokens = new_game(api, 2, seed="r1")  # seat 0 scores more than seat 1
    r = api.post(f"/games/{gid}/seats/0/resign", headers=bearer(tokens[0]))
    assert r.status_code == 201, r.get_json()
    ended = _verified_result(api, gid)
    assert ended["reason"] == "resigned" and ended["winners"] == [1]
    assert ended["winners"] != forgeries.by_score(ended)


def test_a_challenge_game_aborted_in_its_first_round(api: ValidatingClient) -> None:
    text = forgeries.aborted_log(api)
    gid = json.loads(text.splitlines()[0])["game_id"]
    ended = _verified_result(api, gid)
    assert ended["reason"] == "aborted" and ended["winners"] == []
    verdict = _verify(api, text)
    assert verdict["summary"]["end_reason"] == "aborted" and verdict["complete"], verdict


def test_a_game_abandoned_by_its_host(api: ValidatingClient) -> None:
    gid, tokens = new_game(api, 2, seed="dropped")
    r = api.post(f"/games/{gid}/abandon", headers=bearer(tokens[0]))
    assert r.status_code == 201, r.get_json()
    ended = _verified_result(api, gid)
    assert ended["reason"] == "abandoned" and ended["winners"] == []


@pytest.fixture
def workers(url: str, app: Flask) -> Iterator[tuple[Runtime, FakeClock]]:
    """RQ workers' runtime on the app's store, with a clock the test moves forward."""
    clock = FakeClock()
    settings = WorkerSettings(prefix=app.config["STORE_PREFIX"], queue=uuid.uuid4().hex)
    rt = Runtime(events.store.connect(url), settings, clock=clock)
    install(rt)
    yield rt, clock
    install(None)


def test_a_game_a_bot_finished_for_a_seat_that_timed_out(
    api: ValidatingClient, workers: tuple[Runtime, FakeClock]
) -> None:
    rt, clock = workers
    table = {
        "seats": [{"kind": "human"}, {"kind": "bot", "bot": "random"}],
        "time_control": {"per_decision": 60},
        "timeout_policy": "minimal",
        "abandon_after": 2,
    }
    r = api.post("/games", json={**table, "seed": "absent"}, headers=bearer(ADMIN))
    assert r.status_code == 201, r.get_json()
    gid = r.get_json()["game_id"]
    sweeper = Sweeper(rt)
    for _ in range(30):
        assert sweeper.tick(force=True) is not None
        burst(rt)  # the bot seat plays; seat 0's timeouts wait for their deadline
        if api.get(f"/games/{gid}").get_json()["status"] == "finished":
            break
        clock.advance(60 + rt.settings.stale_after + 1)  # the sweep enqueues the late timeout
    ended = _verified_result(api, gid)
    game = api.get(f"/games/{gid}").get_json()
    assert game["timeouts"][0] == 2, game
    assert ended["reason"] not in ("resigned", "abandoned") and ended["winners"]


@pytest.mark.parametrize("label", sorted(forgeries.KINDS))
def test_the_verify_route_refuses_each_forgery(api: ValidatingClient, label: str) -> None:
    text, kind = forgeries.forgeries(forgeries.resigned_log(api))[label]
    verdict = _verify(api, text)
    assert not verdict["ok"], verdict
    if kind == forgeries.DUPLICATE:
        assert verdict["verdict"] == "malformed" and "twice" in verdict["reason"], verdict
    else:
        assert verdict["verdict"] == "not-authentic" and "GameEnded" in verdict["reason"], verdict
        assert verdict["origin"] == "other"
