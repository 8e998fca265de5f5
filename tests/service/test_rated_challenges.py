"""Rated challenges over the API on the real Redis: two entrants of a ladder challenge each other
on it (``"ladder"``), the game is recorded and rated on the ladder like a scheduled one; a
challenge naming a non-entrant, a table the ladder does not play or a ladder that cannot start it
is refused, saying which. Every request and answer is checked against openapi.yaml."""

from __future__ import annotations

import json
from typing import Any

from flask import Flask

from ladder.service import tables_equal
from service.api.ladders import ladders as ladders_of
from tests.service.conftest import ValidatingClient, bearer

from .test_bot_accounts import register
from .test_open_ladders import ADMIN_H, make_ladder, play


def _join(api: ValidatingClient, ladder: str, *accounts: dict[str, Any]) -> None:
    for a in accounts:
        r = api.post("/bots/me/ladders", json={"ladder": ladder}, headers=bearer(a["token"]))
        assert r.status_code == 201, r.get_json()


def _seats(*accounts: dict[str, Any]) -> list[dict[str, str]]:
    return [{"kind": "external", "account": a["account_id"]} for a in accounts]


def test_a_rated_challenge_between_two_entrants_is_recorded_on_the_ladder(
    real_api: ValidatingClient, real_app: Flask
) -> None:
    api = real_api
    make_ladder(api, open=True, time_control={"per_decision": 60})
    a, b = register(api, "a"), register(api, "b")
    _join(api, "main", a, b)
    r = api.post(
        "/challenges", json={"ladder": "main", "seats": _seats(a, b)}, headers=bearer(a["token"])
    )
    assert r.status_code == 201, r.get_json()
    c = r.get_json()
    assert c["ladder"] == "main" and c["status"] == "open"
    assert c["entrants"] == [f"acct.{a['account_id']}", f"acct.{b['account_id']}"]
    assert c["time_control"] == {"per_decision": 60}  # the ladder's
    r = api.post(f"/challenges/{c['challenge_id']}/accept", headers=bearer(b["token"]))
    assert r.status_code == 200, r.get_json()
    gid = r.get_json()["game_id"]
    table = api.get(f"/games/{gid}").get_json()
    assert table["game_id"] == gid
    games = api.get("/ladders/main/games?status=active").get_json()["games"]
    assert [g["game_id"] for g in games] == [gid]
    with real_app.app_context():
        lad = ladders_of()
        state, _, _ = lad.games.load(gid)
        assert state.table["ladder"] == "main"
        assert [s["entrant"] for s in state.table["seats"]] == c["entrants"]
        # a rated challenge's game does not take one of the ladder's scheduled places
        assert len(lad.schedule("main", rng_seed="x")) == 1
        play(api, real_app, gid, {a["account_id"]: a["token"], b["account_id"]: b["token"]})
        assert lad.record_finished("main") == 1
        assert lad.record_finished("main") == 0  # once
        (result,) = [res for res in lad.results("main") if res.game_id == gid]
        assert list(result.entrants) == c["entrants"]
        assert tables_equal(lad.rebuild_ratings("main"), lad.live_table("main"))
    board = {r["entrant"]: r for r in api.get("/ladders/main/leaderboard").get_json()["rows"]}
    for acct, entrant in zip((a, b), c["entrants"], strict=True):
        assert board[entrant]["games"] == 1
        mine = api.get("/bots/me/ladders", headers=bearer(acct["token"])).get_json()["ladders"]
        assert mine[0]["rating"] == board[entrant]["rating"]
    finished = api.get("/ladders/main/games?status=finished").get_json()["games"]
    assert gid in [g["game_id"] for g in finished]
    # its log (the table names the ladder, the challenge and each seat's entrant) is as the
    # spec says a log is, line by line
    log = api.get(f"/games/{gid}/log")
    assert log.status_code == 200
    table = json.loads(log.get_data(as_text=True).splitlines()[0])["payload"]["table"]
    assert table["ladder"] == "main" and table["challenge"] == c["challenge_id"]


def test_rated_challenges_that_do_not_fit_the_ladder_are_refused_saying_which(
    real_api: ValidatingClient,
) -> None:
    api = real_api
    make_ladder(api, open=True)
    api.post(
        "/ladders/main/entrants", json={"entrant": "heur", "bot": "heuristic"}, headers=ADMIN_H
    )
    a, b, outsider = register(api, "a"), register(api, "b"), register(api, "c")
    _join(api, "main", a, b)
    ha = bearer(a["token"])

    def refused(
        body: dict[str, Any], status: int, field: str | None, words: str, h: Any = ha
    ) -> None:
        r = api.post("/challenges", json=body, headers=h, validate=False)
        assert r.status_code == status, (body, r.get_json())
        problem = r.get_json()
        assert words in problem["detail"], problem
        if field is not None:
            assert field in problem["errors"], problem

    # a non-entrant named as the opponent: 422 naming seats; a non-entrant challenging: 403
    refused({"ladder": "main", "seats": _seats(a, outsider)}, 422, "seats", "not an entrant")
    refused(
        {"ladder": "main", "seats": _seats(outsider, a)},
        403,
        None,
        "join it first",
        bearer(outsider["token"]),
    )
    # unknown ladder, bad name, no other account, a player count the ladder does not play
    refused({"ladder": "nope", "seats": _seats(a, b)}, 422, "ladder", "GET /ladders")
    refused({"ladder": "../main", "seats": _seats(a, b)}, 422, "ladder", "")
    refused(
        {"ladder": "main", "seats": [*_seats(a), {"kind": "bot", "bot": "heuristic"}]},
        422,
        "seats",
        "seats the account you challenge",
    )
    refused(
        {"ladder": "main", "seats": [*_seats(a, b), {"kind": "bot", "bot": "heuristic"}]},
        422,
        "seats",
        "plays [2] players",
    )
    # the ladder's table only
    refused(
        {"ladder": "main", "seats": _seats(a, b), "time_control": {"per_decision": 5}},
        422,
        "time_control",
        "time control",
    )
    for key, value in (
        ("options", {"first_game": True}),
        ("timeout_policy", "minimal"),
        ("abandon_after", 0),
    ):
        refused({"ladder": "main", "seats": _seats(a, b), key: value}, 422, key, "leave out")
    # a player without a bot token cannot ask for a rated game
    r = api.post(
        "/challenges",
        json={"ladder": "main", "seats": [{"kind": "human"}, *_seats(a)]},
        validate=False,
    )
    assert r.status_code == 422 and "ladder" in r.get_json()["errors"]
    # a paused ladder starts none: 409
    api.patch("/ladders/main", json={"paused": True}, headers=ADMIN_H)
    refused({"ladder": "main", "seats": _seats(a, b)}, 409, None, "paused")


def test_a_rated_challenge_is_canceled_when_an_account_left_before_the_accept(
    real_api: ValidatingClient,
) -> None:
    api = real_api
    make_ladder(api, open=True)
    a, b = register(api, "a"), register(api, "b")
    _join(api, "main", a, b)
    r = api.post(
        "/challenges", json={"ladder": "main", "seats": _seats(a, b)}, headers=bearer(a["token"])
    )
    cid = r.get_json()["challenge_id"]
    assert api.delete("/bots/me/ladders/main", headers=bearer(a["token"])).status_code == 204
    r = api.post(f"/challenges/{cid}/accept", headers=bearer(b["token"]))
    assert r.status_code == 409 and "no longer an entrant" in r.get_json()["detail"]
    c = api.get(f"/challenges/{cid}", headers=bearer(b["token"])).get_json()
    assert c["status"] == "canceled" and c["game_id"] is None
    assert api.get("/ladders/main/games").get_json()["games"] == []


def test_bot_seats_of_a_rated_challenge_are_entrants_of_the_ladder(
    real_api: ValidatingClient,
) -> None:
    api = real_api
    make_ladder(api, players=[3, 4, 5], open=True)
    for entrant, bot in (("h1", "heuristic"), ("h2", "heuristic")):
        api.post("/ladders/main/entrants", json={"entrant": entrant, "bot": bot}, headers=ADMIN_H)
    a, b = register(api, "a"), register(api, "b")
    _join(api, "main", a, b)
    heur = {"kind": "bot", "bot": "heuristic"}
    r = api.post(
        "/challenges",
        json={"ladder": "main", "seats": [heur, *_seats(a, b), heur]},
        headers=bearer(a["token"]),
    )
    assert r.status_code == 201, r.get_json()
    assert r.get_json()["entrants"] == [
        "h1",
        f"acct.{a['account_id']}",
        f"acct.{b['account_id']}",
        "h2",
    ]
    # a built-in bot that is no entrant, or more bot seats than such entrants: 422
    for seats in (
        [*_seats(a, b), {"kind": "bot", "bot": "random"}],
        [heur, heur, *_seats(a, b), heur][:5],
    ):
        r = api.post(
            "/challenges",
            json={"ladder": "main", "seats": seats},
            headers=bearer(a["token"]),
            validate=False,
        )
        assert r.status_code == 422 and "entrant" in r.get_json()["detail"], r.get_json()


def test_an_aborted_rated_challenge_game_is_not_rated(
    real_api: ValidatingClient, real_app: Flask
) -> None:
    api = real_api
    make_ladder(api, open=True)
    a, b = register(api, "a"), register(api, "b")
    _join(api, "main", a, b)
    r = api.post(
        "/challenges", json={"ladder": "main", "seats": _seats(a, b)}, headers=bearer(a["token"])
    )
    cid = r.get_json()["challenge_id"]
    gid = api.post(f"/challenges/{cid}/accept", headers=bearer(b["token"])).get_json()["game_id"]
    r = api.post(f"/games/{gid}/seats/1/abort", headers=bearer(b["token"]))
    assert r.status_code == 201, r.get_json()
    with real_app.app_context():
        lad = ladders_of()
        assert lad.record_finished("main") == 0 and lad.results("main") == []
        assert lad.running("main") == []
    board = api.get("/ladders/main/leaderboard").get_json()["rows"]
    assert [row["games"] for row in board] == [0, 0]
