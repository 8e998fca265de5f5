"""Aborting a challenge game (``POST /games/{id}/seats/{n}/abort``, ``engine.leaving``): any seat
of a game made from a challenge, with its seat token or its account's bot token, calls the game
off until the first round ends; it ends ``aborted`` with no winner, its log verifies. Anything
else is refused with a problem saying why and what to do instead: after the first round, in a
game not made from a challenge, once the game is over (409); with no token, another game's token,
another seat's token or another account's bot token (401/403); with a body (422). Real Redis."""

from __future__ import annotations

import json
import uuid
from typing import Any

import pytest
from flask import Flask
from openapi_core import OpenAPI

from bots import get_bot
from engine.rng import Rng
from events.verify.replay import verify_text
from tests.conftest import REDIS_URL, purge_prefix
from workers.policy import bot_command

from .conftest import ValidatingClient, _client, bearer, make_app, new_game


@pytest.fixture
def app(real_redis: Any) -> Any:
    prefix = f"t{uuid.uuid4().hex[:12]}"
    app = make_app(REDIS_URL, STORE_PREFIX=prefix)
    yield app
    purge_prefix(real_redis, prefix)


@pytest.fixture
def api(app: Flask, openapi: OpenAPI) -> ValidatingClient:
    return _client(app, openapi)


def _register(api: ValidatingClient, name: str) -> dict[str, Any]:
    r = api.post("/bots/accounts", json={"name": name, "description": "t", "contact": "a@b.c"})
    assert r.status_code == 201, r.get_json()
    out: dict[str, Any] = r.get_json()
    return out


def _me(account: dict[str, Any]) -> dict[str, str]:
    return {"kind": "external", "account": account["account_id"]}


def _between(api: ValidatingClient) -> tuple[str, dict[str, Any], dict[str, Any]]:
    """A game from A's challenge that B accepted: A in seat 0, B in seat 1."""
    a, b = _register(api, "a"), _register(api, "b")
    r = api.post("/challenges", json={"seats": [_me(a), _me(b)]}, headers=bearer(a["token"]))
    assert r.status_code == 201, r.get_json()
    cid = r.get_json()["challenge_id"]
    r = api.post(f"/challenges/{cid}/accept", headers=bearer(b["token"]))
    assert r.status_code == 200, r.get_json()
    gid: str = r.get_json()["game_id"]
    assert api.get(f"/games/{gid}").get_json()["challenge"] == cid
    return gid, a, b


def _aborted(api: ValidatingClient, gid: str, seat: int, token: str) -> dict[str, Any]:
    """Abort as ``seat``; check the answer, the game and its log (verified in full)."""
    r = api.post(f"/games/{gid}/seats/{seat}/abort", headers=bearer(token))
    assert r.status_code == 201, r.get_json()
    game: dict[str, Any] = r.get_json()
    assert (game["status"], game["end_reason"], game["winners"]) == ("finished", "aborted", [])
    text = api.get(f"/games/{gid}/log").get_data(as_text=True)
    verdict = verify_text(text)
    assert verdict.consistent and verdict.complete, verdict.reason
    assert verdict.summary is not None and verdict.summary["end_reason"] == "aborted"
    r = api.post("/replays/verify", data=text, content_type="application/x-ndjson")
    assert r.status_code == 200 and r.get_json()["ok"], r.get_json()
    lines = [line for line in text.splitlines() if '"signature"' not in line[:14]]
    aborted, ended = (json.loads(x) for x in lines[-2:])
    assert aborted["type"] == "GameAborted" and aborted["actor"] == f"seat:{seat}"
    assert aborted["payload"]["seat"] == seat and aborted["payload"]["round"] <= 1
    assert ended["payload"]["reason"] == "aborted" and ended["payload"]["winners"] == []
    return game


def _play_to_round(app: Flask, api: ValidatingClient, gid: str, tokens: dict[int, str]) -> None:
    """Play (random choices through the API for the seats with tokens, the built-in bots as a
    worker would) until round 2 has begun."""
    games = app.extensions["rfg"].games
    rng = Rng(3)
    for n in range(500):
        game = api.get(f"/games/{gid}").get_json()
        if game["round"] >= 2:
            return
        pub = api.get(f"/games/{gid}/view").get_json()["view"]
        seat = min(int(s) for s in pub["pending"])
        if seat in tokens:
            view = api.get(f"/games/{gid}/seats/{seat}/view", headers=bearer(tokens[seat]))
            decision = view.get_json()["view"]["decision"]
            command = get_bot("random").act(decision, None, rng)
            r = api.post(
                f"/games/{gid}/seats/{seat}/commands",
                json={"command_id": f"c{n}", "command": command},
                headers=bearer(tokens[seat]),
            )
            assert r.status_code == 201, r.get_json()
        else:
            state, version, _ = games.load(gid)
            command = bot_command(state, seat, "heuristic", rng)
            games.submit(gid, seat, command, f"w{version}-{seat}", actor="bot:heuristic")
    raise AssertionError("round 2 never began")


def test_either_account_aborts_in_the_first_round_with_its_bot_token(
    api: ValidatingClient,
) -> None:
    for seat in (0, 1):
        gid, a, b = _between(api)
        who = (a, b)[seat]
        _aborted(api, gid, seat, who["token"])
        # again, by either seat: the game is over already, 409 saying so
        for other, token in ((seat, who["token"]), (1 - seat, (a, b)[1 - seat]["token"])):
            r = api.post(f"/games/{gid}/seats/{other}/abort", headers=bearer(token))
            assert r.status_code == 409, r.get_json()
            problem = r.get_json()
            assert problem["type"] == "/problems/abort-unavailable"
            assert problem["code"] == "game_over" and "aborted" in problem["detail"]


def test_a_player_aborts_with_the_seat_token_of_their_challenge(api: ValidatingClient) -> None:
    """A player's challenge (no bot token): the challenge secret is the seat token."""
    seats = [{"kind": "bot", "bot": "random"}, {"kind": "human"}, {"kind": "bot", "bot": "random"}]
    made = api.post("/challenges", json={"seats": seats}).get_json()
    assert made["status"] == "accepted"
    _aborted(api, made["game_id"], 1, made["challenge_secret"])


def test_an_abort_after_the_first_round_is_409_naming_why(
    app: Flask, api: ValidatingClient
) -> None:
    me = _register(api, "late")
    seats = [_me(me), {"kind": "bot", "bot": "random"}]
    gid = api.post("/challenges", json={"seats": seats}, headers=bearer(me["token"])).get_json()[
        "game_id"
    ]
    _play_to_round(app, api, gid, {0: me["token"]})
    before = api.get(f"/games/{gid}").get_json()
    r = api.post(f"/games/{gid}/seats/0/abort", headers=bearer(me["token"]))
    assert r.status_code == 409, r.get_json()
    problem = r.get_json()
    assert problem["type"] == "/problems/abort-unavailable" and problem["code"] == "too_late"
    assert "first round" in problem["detail"] and f"round {before['round']}" in problem["detail"]
    assert f"/games/{gid}/seats/0/resign" in problem["detail"]
    after = api.get(f"/games/{gid}").get_json()
    assert (after["status"], after["version"]) == ("active", before["version"])  # nothing stored
    # what it says to do works
    r = api.post(f"/games/{gid}/seats/0/resign", headers=bearer(me["token"]))
    assert r.status_code == 201 and r.get_json()["end_reason"] == "resigned"


def test_a_game_not_made_from_a_challenge_is_not_aborted(api: ValidatingClient) -> None:
    gid, tokens = new_game(api, 2)
    assert api.get(f"/games/{gid}").get_json()["challenge"] is None
    r = api.post(f"/games/{gid}/seats/0/abort", headers=bearer(tokens[0]))
    assert r.status_code == 409, r.get_json()
    problem = r.get_json()
    assert problem["code"] == "not_from_challenge" and "challenge" in problem["detail"]
    assert f"/games/{gid}/seats/0/resign" in problem["detail"]
    assert api.get(f"/games/{gid}").get_json()["status"] == "active"
    # once it is over, that is what it says
    api.post(f"/games/{gid}/seats/1/resign", headers=bearer(tokens[1]))
    r = api.post(f"/games/{gid}/seats/0/abort", headers=bearer(tokens[0]))
    assert r.status_code == 409 and r.get_json()["code"] == "game_over"


def test_a_game_cannot_be_made_from_a_challenge_through_post_games(api: ValidatingClient) -> None:
    """``challenge`` is the table's record of where the game came from, not an option."""
    body = {"seats": [{"kind": "human"}] * 2, "challenge": "0123456789abcdef"}
    r = api.post("/games", json=body, validate=False)
    assert r.status_code == 422 and "challenge" in r.get_json()["errors"], r.get_json()


def test_nobody_else_aborts_the_game(api: ValidatingClient) -> None:
    gid, a, b = _between(api)
    mallory = _register(api, "mallory")
    other_gid, other_tokens = new_game(api, 2)
    for seat, headers, status in [
        (0, {}, 401),
        (0, bearer("x" * 43), 401),
        (0, bearer("rfgb_" + "x" * 40), 401),
        (0, bearer(other_tokens[0]), 401),  # a seat token of another game
        (0, bearer(b["token"]), 403),  # the other seat's account
        (1, bearer(a["token"]), 403),
        (0, bearer(mallory["token"]), 403),  # an account not at the table
        (1, bearer(mallory["token"]), 403),
        (5, bearer(a["token"]), 404),  # no such seat
    ]:
        r = api.post(f"/games/{gid}/seats/{seat}/abort", headers=headers)
        assert r.status_code == status, (seat, headers, r.get_json())
    r = api.post(f"/games/{other_gid}/seats/0/abort", headers=bearer(a["token"]))
    assert r.status_code == 403  # A's bot token in a game A has no seat in
    r = api.post("/games/000000000000/seats/0/abort", headers=bearer(a["token"]))
    assert r.status_code == 404
    assert api.get(f"/games/{gid}").get_json()["status"] == "active"


@pytest.mark.parametrize("body", [{"reason": "x"}, {"kind": "abort"}, [], "abort", 1], ids=str)
def test_an_abort_takes_no_body(api: ValidatingClient, body: Any) -> None:
    gid, a, _b = _between(api)
    r = api.post(
        f"/games/{gid}/seats/0/abort", json=body, headers=bearer(a["token"]), validate=False
    )
    assert r.status_code == 422, r.get_json()
    assert api.get(f"/games/{gid}").get_json()["status"] == "active"
    r = api.post(f"/games/{gid}/seats/0/abort", json={}, headers=bearer(a["token"]))
    assert r.status_code == 201, r.get_json()


def test_a_round_ending_meanwhile_is_the_same_409(
    app: Flask, api: ValidatingClient, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The service reads the game, then the round ends before the abort is stored: the engine
    refuses it (nothing stored) and the answer is the 409 of a late abort, not a 422."""
    from service.api import seats

    me = _register(api, "racer")
    seats_ = [_me(me), {"kind": "bot", "bot": "random"}]
    made = api.post("/challenges", json={"seats": seats_}, headers=bearer(me["token"])).get_json()
    gid = made["game_id"]
    _play_to_round(app, api, gid, {0: me["token"]})
    real = seats.read_summary
    calls = []

    def stale(game_id: str) -> tuple[int, dict[str, Any]]:
        pos, summary = real(game_id)
        calls.append(pos)
        return (pos, dict(summary, round=1)) if len(calls) == 1 else (pos, summary)

    monkeypatch.setattr(seats, "read_summary", stale)
    version = api.get(f"/games/{gid}").get_json()["version"]
    r = api.post(f"/games/{gid}/seats/0/abort", headers=bearer(me["token"]))
    assert r.status_code == 409 and r.get_json()["code"] == "too_late", r.get_json()
    assert len(calls) == 2 and api.get(f"/games/{gid}").get_json()["version"] == version
