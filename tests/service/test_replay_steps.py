"""Replay steps (``?at=N``): a finished game's public view and each seat's view at any event of
its log, through the HTTP stack (every answer checked against openapi.yaml).

The view at a step is what a reader got at that moment: the test records the live public view and
seat 0's view as the game is played, and the replay must give back exactly those. A game under
way gives nothing this way, whoever asks; bad steps are refused in words."""

from __future__ import annotations

import json
import random
import uuid
from typing import Any

import pytest

from bots import get_bot
from engine.rng import Rng
from service.backend import backend
from tests.service.conftest import ValidatingClient, _client, bearer, make_app, new_game

#: what the answer to a refused step must not hold: anything of the game's state
_STATE_WORDS = ("players", "credits", "cup", "citizenry", "construction", "decision", "faces")


def _play_recording(
    api: Any, gid: str, tokens: dict[int, str]
) -> tuple[dict[int, Any], dict[int, Any]]:
    """Play the game to its end with the random bot on every seat, through HTTP, recording the
    live public view and seat 0's view at every version they were read. The client checks a call
    of a new shape and every 10th against openapi.yaml (the views read back at steps are each
    checked)."""
    bot, rng = get_bot("random"), Rng(3)
    public: dict[int, Any] = {}
    seat0: dict[int, Any] = {}
    api.sample = 10
    for n in range(3000):
        pub = api.get(f"/games/{gid}/view").get_json()
        public[pub["version"]] = pub["view"]
        mine = api.get(f"/games/{gid}/seats/0/view", headers=bearer(tokens[0])).get_json()
        seat0[mine["version"]] = mine["view"]
        if pub["view"]["step"] == "over":
            api.sample = 1
            return public, seat0
        seat = min(int(s) for s in pub["view"]["pending"])
        sv = api.get(f"/games/{gid}/seats/{seat}/view", headers=bearer(tokens[seat])).get_json()
        command = bot.act(sv["view"]["decision"], None, rng)
        r = api.post(
            f"/games/{gid}/seats/{seat}/commands",
            json={"command_id": f"c{n}", "expected_version": sv["version"], "command": command},
            headers=bearer(tokens[seat]),
        )
        assert r.status_code == 201, r.get_json()
    raise AssertionError("the game did not end")


Finished = tuple[ValidatingClient, str, dict[int, Any], dict[int, Any]]


@pytest.fixture(scope="module")
def finished(openapi: Any) -> Finished:
    """One game played to its end on an app of its own, shared by the tests that only read it:
    the client, the game id and the public and seat 0 views recorded live."""
    api = _client(make_app(f"memory://{uuid.uuid4().hex}"), openapi)
    gid, tokens = new_game(api, 2, seed="replay-steps")
    public, seat0 = _play_recording(api, gid, tokens)
    return api, gid, public, seat0


def test_each_step_of_a_finished_game_is_the_view_its_readers_had(finished: Finished) -> None:
    api, gid, public, seat0 = finished
    events = max(public)
    assert api.get(f"/games/{gid}").get_json()["version"] == events
    middle = sorted(public)[len(public) // 2]
    assert 1 < middle < events
    for at in (1, middle, events):
        r = api.get(f"/games/{gid}/view?at={at}")
        assert r.status_code == 200, r.get_json()
        body = r.get_json()
        assert (body["at"], body["events"], body["version"]) == (at, events, at)
        if at in public:
            assert body["view"] == public[at]  # exactly what spectators read then
        assert "public" in r.headers["Cache-Control"] and r.headers["ETag"] == f'"{at}"'
    mid = api.get(f"/games/{gid}/view?at={middle}").get_json()["view"]
    assert mid["step"] != "over" and mid["round"] >= 1 and mid.get("result") is None
    end = api.get(f"/games/{gid}/view?at={events}").get_json()["view"]
    assert end["step"] == "over" and end["result"]["winners"] and end["seed"]
    # steps asked in any order (the server folds on from the states it keeps every few dozen
    # events) are each exactly the view read live at that version, for spectators and the seat
    versions = sorted(public)
    sample = versions[:: max(1, len(versions) // 40)] + [versions[-2]]
    for at in random.Random(5).sample(sample, len(sample)) + sample[:3]:
        assert api.get(f"/games/{gid}/view?at={at}").get_json()["view"] == public[at], at
        if at in seat0:
            mine = api.get(f"/games/{gid}/seats/0/view?at={at}").get_json()["view"]
            assert mine == seat0[at], at
    # a cached step is not sent again
    again = api.get(f"/games/{gid}/view?at={middle}", headers={"If-None-Match": f'"{middle}"'})
    assert again.status_code == 304


def test_each_seat_s_view_at_a_step_is_given_to_anyone_once_the_game_is_over(
    finished: Finished,
) -> None:
    api, gid, public, seat0 = finished
    events = max(public)
    steps = sorted(v for v in seat0 if v < events)
    middle = steps[len(steps) // 2]
    r = api.get(f"/games/{gid}/seats/0/view?at={middle}")  # no token: the log is public now
    assert r.status_code == 200, r.get_json()
    body = r.get_json()
    assert (body["seat"], body["at"], body["events"]) == (0, middle, events)
    assert body["view"] == seat0[middle]  # exactly what seat 0 read then, its decision too
    # a seat's view shows what the public one hides: its own whole construction stacks
    own = body["view"]["players"][0]["construction"]["development"]
    pub = api.get(f"/games/{gid}/view?at={middle}").get_json()["view"]
    assert body["view"]["players"][1] == pub["players"][1]  # the other seat as spectators see it
    if own["count"] > 1:
        assert len(own["tiles"]) == own["count"]
        assert "tiles" not in pub["players"][0]["construction"]["development"]
    seat1 = api.get(f"/games/{gid}/seats/1/view?at={events}").get_json()
    assert seat1["view"]["seat"] == 1 and seat1["view"]["step"] == "over"
    assert seat1["view"]["decision"] is None


def test_a_game_under_way_gives_no_step_to_anyone_and_leaks_nothing(api: Any) -> None:
    gid, tokens = new_game(api, 2, seed="live-steps")
    version = api.get(f"/games/{gid}").get_json()["version"]
    asks = [
        (f"/games/{gid}/view?at=1", {}),
        (f"/games/{gid}/view?at={version}", {}),
        (f"/games/{gid}/seats/0/view?at=1", {}),
        (f"/games/{gid}/seats/0/view?at=1", bearer(tokens[0])),  # not even the seat itself
        (f"/games/{gid}/seats/1/view?at={version}", bearer(tokens[0])),
        (f"/games/{gid}/seats/1/view?at=999999", {}),  # out of range: still nothing
    ]
    for path, headers in asks:
        r = api.get(path, headers=headers)
        assert r.status_code == 409, (path, r.get_json())
        problem = r.get_json()
        assert problem["type"] == "/problems/replay-unavailable"
        assert "watch it live" in problem["detail"]
        text = r.get_data(as_text=True)
        assert not any(f'"{w}"' in text for w in _STATE_WORDS), text
        assert set(problem) <= {"type", "title", "status", "detail", "instance"}


def test_bad_steps_are_refused_in_words(finished: Finished) -> None:
    api, gid, public, _ = finished
    events = max(public)
    for raw, words in [
        ("0", "greater than or equal to 1"),
        ("-3", "greater than or equal to 1"),
        ("abc", "integer"),
        ("1.5", "integer"),
        ("9" * 30, "less than or equal to"),
        (str(events + 1), f"between 1 and {events}"),
    ]:
        r = api.get(f"/games/{gid}/view?at={raw}", validate=False)
        assert r.status_code == 400, (raw, r.get_json())
        assert r.get_json()["type"] == "/problems/invalid-parameters"
        assert words in json.dumps(r.get_json()["errors"]["at"]), (raw, r.get_json())
    r = api.get(f"/games/{gid}/view?at=1&at=2", validate=False)
    assert r.status_code == 400
    r = api.get(f"/games/{gid}/seats/7/view?at=1", validate=False)
    assert r.status_code == 404 and "seats 0 to 1" in r.get_json()["detail"]
    r = api.get("/games/nosuchgame00/view?at=1")
    assert r.status_code == 404


def test_a_seat_s_steps_wait_for_the_whole_duplicate_set(api: Any, app: Any) -> None:
    """A finished game of a duplicate set whose sibling still runs: the public steps are given
    (the seed held back at the last one), the seats' steps are not."""
    seats = [{"kind": "human"}, {"kind": "human"}]
    with app.app_context():
        games = backend().games
        games.holds.hold(["dupsetgame01", "dupsetgame02"])
        for gid in ("dupsetgame01", "dupsetgame02"):
            games.create(2, seed="one-seed", table={"seats": seats}, game_id=gid)
    tokens = {}
    for seat in (0, 1):
        r = api.post(f"/games/dupsetgame01/seats/{seat}/claim")
        tokens[seat] = r.get_json()["token"]
    _play_recording(api, "dupsetgame01", tokens)
    events = api.get("/games/dupsetgame01").get_json()["version"]
    end = api.get(f"/games/dupsetgame01/view?at={events}")
    assert end.status_code == 200
    assert "seed" not in end.get_json()["view"] and end.get_json()["view"]["seed_withheld"]
    assert end.headers["Cache-Control"] == "no-store" and "ETag" not in end.headers
    r = api.get("/games/dupsetgame01/seats/0/view?at=5")
    assert r.status_code == 409 and "same seed" in r.get_json()["detail"]
    assert '"players"' not in r.get_data(as_text=True)
