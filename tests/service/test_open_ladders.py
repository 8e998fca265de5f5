"""Open ladders over the API on the real Redis: a bot account joins and leaves a ladder its host
opened, with its own token (a closed ladder refuses it), the scheduler pairs it like any entrant
and its games are rated, one that left is paired no more and keeps its rating. Every request and
answer is checked against openapi.yaml."""

from __future__ import annotations

from typing import Any

import pytest
from flask import Flask

import engine
from bots import get_bot
from engine.rng import Rng
from ladder.service import LadderError
from service.api.ladders import ladders as ladders_of
from tests.service.conftest import ADMIN, ValidatingClient, bearer

from .test_bot_accounts import register

ADMIN_H = bearer(ADMIN)


def make_ladder(api: ValidatingClient, name: str = "main", **body: Any) -> None:
    body = {"name": name, "players": [2], "concurrency": 1, **body}
    assert api.post("/ladders", json=body, headers=ADMIN_H).status_code == 201


def play(api: ValidatingClient, app: Flask, gid: str, tokens: dict[str, str]) -> None:
    """Play a game to its end: built-in seats as the workers do, external seats through HTTP
    with their account's bot token (``tokens``: account -> token)."""
    games = app.extensions["rfg"].games
    rng = Rng(3)
    for n in range(5000):
        state, version, _ = games.load(gid)
        if state.over:
            return
        seat = min(engine.pending(state))
        spec = state.table["seats"][seat]
        if spec["kind"] == "bot":
            bot = get_bot(spec["bot"])
            view = engine.observe(state, seat) if bot.needs_view else None
            games.submit(gid, seat, bot.act(engine.legal(state, seat), view, rng), f"t{n}", version)
            continue
        h = bearer(tokens[spec["account"]])
        sv = api.get(f"/games/{gid}/seats/{seat}/view", headers=h, validate=False).get_json()
        command = get_bot("random").act(sv["view"]["decision"], None, rng)
        body = {"command_id": f"c{n}", "expected_version": sv["version"], "command": command}
        r = api.post(f"/games/{gid}/seats/{seat}/commands", json=body, headers=h, validate=False)
        assert r.status_code == 201, r.get_json()
    raise AssertionError("the game did not end")


def test_joining_leaving_and_rejoining_an_open_ladder(real_api: ValidatingClient) -> None:
    api = real_api
    make_ladder(api)
    acct = register(api, "joiner")
    me, h = acct["account_id"], bearer(acct["token"])
    # closed (the default): 403 saying what to do; the ladder says it is closed
    assert api.get("/ladders/main").get_json()["open"] is False
    r = api.post("/bots/me/ladders", json={"ladder": "main"}, headers=h)
    assert r.status_code == 403 and "open" in r.get_json()["detail"]
    # the host opens it
    r = api.patch("/ladders/main", json={"open": True}, headers=ADMIN_H)
    assert r.status_code == 200 and r.get_json()["open"] is True
    r = api.post("/bots/me/ladders", json={"ladder": "main"}, headers=h)
    assert r.status_code == 201, r.get_json()
    entrant = r.get_json()
    assert entrant["entrant"] == f"acct.{me}" and entrant["account"] == me
    assert "left_at" not in entrant and entrant["joined_at"]
    # joining again changes nothing: its entrant, 200
    r = api.post("/bots/me/ladders", json={"ladder": "main"}, headers=h)
    assert r.status_code == 200 and r.get_json()["entrant"] == entrant["entrant"]
    assert [e["entrant"] for e in api.get("/ladders/main").get_json()["entrants"]] == [f"acct.{me}"]
    mine = api.get("/bots/me/ladders", headers=h).get_json()["ladders"]
    assert [(m["ladder"], m["entrant"], m["left_at"]) for m in mine] == [
        ("main", f"acct.{me}", None)
    ]
    board = api.get("/ladders/main/leaderboard").get_json()["rows"]
    assert mine[0]["rating"] == board[0]["rating"] and mine[0]["standing"] == board[0]
    # leaving: 204, marked left on the ladder, listed as left; leaving again is 404
    assert api.delete("/bots/me/ladders/main", headers=h).status_code == 204
    (spec,) = api.get("/ladders/main").get_json()["entrants"]
    assert spec["left_at"]
    assert api.get("/bots/me/ladders", headers=h).get_json()["ladders"][0]["left_at"]
    assert api.delete("/bots/me/ladders/main", headers=h).status_code == 404
    # the host closes the ladder: no rejoin; opened again: the same entrant is back
    api.patch("/ladders/main", json={"open": False}, headers=ADMIN_H)
    assert api.post("/bots/me/ladders", json={"ladder": "main"}, headers=h).status_code == 403
    api.patch("/ladders/main", json={"open": True}, headers=ADMIN_H)
    r = api.post("/bots/me/ladders", json={"ladder": "main"}, headers=h)
    assert r.status_code == 201 and r.get_json()["entrant"] == f"acct.{me}"
    assert "left_at" not in api.get("/ladders/main").get_json()["entrants"][0]


def test_hostile_joins_and_leaves_are_refused_in_words(real_api: ValidatingClient) -> None:
    api = real_api
    make_ladder(api, open=True)
    make_ladder(api, "dup", duplicate=True)
    # a ladder of duplicate sets takes no external bot: it is never open
    r = api.post(
        "/ladders", json={"name": "dup2", "duplicate": True, "open": True}, headers=ADMIN_H
    )
    assert r.status_code == 409 and "duplicate" in r.get_json()["detail"]
    r = api.patch("/ladders/dup", json={"open": True}, headers=ADMIN_H)
    assert r.status_code == 409 and "duplicate" in r.get_json()["detail"]
    assert api.get("/ladders/dup").get_json()["open"] is False
    h = bearer(register(api)["token"])
    # no bot token, the admin token, a made-up bot token
    for headers in ({}, ADMIN_H, bearer("rfgb_" + "x" * 43)):
        assert (
            api.post("/bots/me/ladders", json={"ladder": "main"}, headers=headers).status_code
            == 401
        )
        assert api.delete("/bots/me/ladders/main", headers=headers).status_code == 401
        assert api.get("/bots/me/ladders", headers=headers).status_code == 401
    # unknown ladder: 404; duplicate sets: 409; a bad name or body: 422 naming the field
    r = api.post("/bots/me/ladders", json={"ladder": "nope"}, headers=h)
    assert r.status_code == 404 and "GET /ladders" in r.get_json()["detail"]
    assert api.delete("/bots/me/ladders/nope", headers=h).status_code == 404
    r = api.post("/bots/me/ladders", json={"ladder": "dup"}, headers=h)
    assert r.status_code == 403 and "not open" in r.get_json()["detail"]
    for body in (
        {"ladder": "../main"},
        {"ladder": "x" * 65},
        {"ladder": 3},
        {},
        {"ladder": "main", "entrant": "me"},
    ):
        r = api.post("/bots/me/ladders", json=body, headers=h, validate=False)
        assert r.status_code == 422, body
        assert r.get_json()["errors"], body
    assert (
        api.post(
            "/bots/me/ladders", data="[", content_type="application/json", headers=h, validate=False
        ).status_code
        == 400
    )
    # leaving a ladder one never joined
    assert api.delete("/bots/me/ladders/main", headers=h).status_code == 404
    # the admin cannot take a name of the accounts' own (acct.<id>)
    r = api.post(
        "/ladders/main/entrants",
        json={"entrant": "acct.0123456789abcdef", "bot": "random"},
        headers=ADMIN_H,
    )
    assert r.status_code == 409 and "acct." in r.get_json()["detail"]
    # non-admins cannot open a ladder
    assert api.patch("/ladders/main", json={"open": True}, headers=h).status_code == 403


def test_the_scheduler_pairs_a_joined_account_rates_its_games_and_skips_it_once_left(
    real_api: ValidatingClient, real_app: Flask
) -> None:
    api = real_api
    make_ladder(api, open=True)
    h = ADMIN_H
    for entrant, bot in (("rand", "random"), ("heur", "heuristic")):
        assert (
            api.post(
                "/ladders/main/entrants", json={"entrant": entrant, "bot": bot}, headers=h
            ).status_code
            == 201
        )
    acct = register(api, "joiner")
    me, token = acct["account_id"], acct["token"]
    assert (
        api.post("/bots/me/ladders", json={"ladder": "main"}, headers=bearer(token)).status_code
        == 201
    )
    tokens = {me: token}
    with real_app.app_context():
        lad = ladders_of()
        seated = []
        for i in range(6):  # the account is paired like any entrant
            (gid,) = lad.schedule("main", rng_seed=f"s{i}")
            entrants = lad.ladder_games("main")[gid]["seats"]
            if f"acct.{me}" in entrants:  # its decisions stream watches the game
                seated.append(gid)
                assert gid in real_app.extensions["rfg"].accounts.active_games(me)
            play(api, real_app, gid, tokens)
            lad.record_finished("main")
        assert seated, "the joined account was never paired"
    mine = api.get("/bots/me/ladders", headers=bearer(token)).get_json()["ladders"][0]
    assert mine["standing"]["games"] == len(seated)
    board = {r["entrant"]: r for r in api.get("/ladders/main/leaderboard").get_json()["rows"]}
    assert mine["rating"] == board[f"acct.{me}"]["rating"]
    # it leaves: never paired again, its rating kept
    assert api.delete("/bots/me/ladders/main", headers=bearer(token)).status_code == 204
    with real_app.app_context():
        lad = ladders_of()
        for i in range(6):
            (gid,) = lad.schedule("main", rng_seed=f"after{i}")
            assert f"acct.{me}" not in lad.ladder_games("main")[gid]["seats"]
            play(api, real_app, gid, tokens)
            lad.record_finished("main")
    after = api.get("/bots/me/ladders", headers=bearer(token)).get_json()["ladders"][0]
    assert after["left_at"] and after["standing"]["games"] == len(seated)
    assert after["rating"] == mine["rating"]


def test_a_game_running_when_its_account_leaves_plays_on_and_is_rated(
    real_api: ValidatingClient, real_app: Flask
) -> None:
    api = real_api
    make_ladder(api, open=True)
    api.post("/ladders/main/entrants", json={"entrant": "rand", "bot": "random"}, headers=ADMIN_H)
    acct = register(api, "joiner")
    me, h = acct["account_id"], bearer(acct["token"])
    assert api.post("/bots/me/ladders", json={"ladder": "main"}, headers=h).status_code == 201
    with real_app.app_context():
        lad = ladders_of()
        (gid,) = lad.schedule("main", rng_seed="x")
        assert api.delete("/bots/me/ladders/main", headers=h).status_code == 204
        play(api, real_app, gid, {me: acct["token"]})
        assert lad.record_finished("main") == 1
        with pytest.raises(LadderError, match="needs at least 2 entrants"):
            lad.schedule("main")  # one entrant left: nothing to pair
    mine = api.get("/bots/me/ladders", headers=h).get_json()["ladders"][0]
    assert mine["left_at"] and mine["standing"]["games"] == 1
