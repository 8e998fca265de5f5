"""Challenges (``POST /challenges``): a bot account gets a game against the built-in bots or
another bot account with its bot token only, no admin. What a bot author relies on: the game
starts with the accounts seated, both learn of it on their decisions streams, nobody else can
answer a challenge, and the limits and bad bodies are refused with a problem saying what to do."""

from __future__ import annotations

import hashlib
import json
import uuid
from typing import Any

import pytest
import yaml
from flask import Flask
from openapi_core import OpenAPI
from rfg_client import parse_sse

from bots import get_bot
from engine.rng import Rng
from tests.conftest import REDIS_URL, purge_prefix
from workers.policy import bot_command

from .conftest import SPEC_PATH, ValidatingClient, _client, bearer, make_app, stream_events


def _register(api: ValidatingClient, name: str) -> dict[str, Any]:
    r = api.post("/bots/accounts", json={"name": name, "description": "t", "contact": "a@b.c"})
    assert r.status_code == 201, r.get_json()
    out: dict[str, Any] = r.get_json()
    return out


def _me(account: dict[str, Any]) -> dict[str, str]:
    return {"kind": "external", "account": account["account_id"]}


def _events(api: ValidatingClient, token: str) -> list[tuple[str, dict[str, Any], str | None]]:
    """The decisions stream read until the server closes it (the test app: after 1 s)."""
    r = api.get("/bots/me/decisions/stream", headers=bearer(token))
    assert r.status_code == 200
    lines = r.get_data().splitlines(keepends=True)
    return [(kind, json.loads(data), ident) for kind, data, ident in parse_sse(lines)]


def _play_to_end(
    app: Flask, api: ValidatingClient, gid: str, tokens: dict[int, str], seed: int = 1
) -> dict[str, Any]:
    """The accounts' seats play through the API with their bot tokens (random choices, each
    decision answered by its ``decision_id``); the built-in bots' seats are played in this process
    as a worker would (the test runs no worker)."""
    games = app.extensions["rfg"].games
    rng = Rng(seed)
    random_bot = get_bot("random")
    for n in range(5000):
        pub = api.get(f"/games/{gid}/view").get_json()["view"]
        if pub["step"] == "over":
            return pub
        seat = min(int(s) for s in pub["pending"])
        if seat in tokens:
            sv = api.get(f"/games/{gid}/seats/{seat}/view", headers=bearer(tokens[seat]))
            assert sv.status_code == 200, sv.get_json()
            decision = sv.get_json()["view"]["decision"]
            command = random_bot.act(decision, None, rng)
            r = api.post(
                f"/games/{gid}/seats/{seat}/commands",
                json={
                    "command_id": f"c{n}",
                    "decision_id": decision["decision_id"],
                    "command": command,
                },
                headers=bearer(tokens[seat]),
            )
            assert r.status_code == 201, (r.get_json(), command)
        else:
            state, version, _ = games.load(gid)
            command = bot_command(state, seat, "heuristic", rng)
            games.submit(gid, seat, command, f"w{version}-{seat}", actor="bot:heuristic")
    raise AssertionError("the game did not end")


@pytest.fixture
def real_api_for(real_redis: Any, openapi: OpenAPI) -> Any:
    """A validating client on the real Redis, the app made with the given settings."""
    prefixes: list[str] = []

    def make(**config: Any) -> ValidatingClient:
        prefix = f"t{uuid.uuid4().hex[:12]}"
        prefixes.append(prefix)
        return _client(make_app(REDIS_URL, STORE_PREFIX=prefix, **config), openapi)

    yield make
    for prefix in prefixes:
        purge_prefix(real_redis, prefix)


def test_a_bot_account_challenges_the_heuristic_bot_and_plays_the_game_to_its_end(
    api: ValidatingClient, app: Flask
) -> None:
    api.sample = 10
    me = _register(api, "mine")
    token = me["token"]
    r = api.post(
        "/challenges",
        json={"seats": [_me(me), {"kind": "bot", "bot": "heuristic"}]},
        headers=bearer(token),
    )
    assert r.status_code == 201, r.get_json()
    challenge = r.get_json()
    # only built-in bots asked: it starts at once
    assert challenge["status"] == "accepted"
    assert challenge["challenged"] is None
    gid = challenge["game_id"]
    assert challenge["links"]["game"] == f"/games/{gid}"
    game = api.get(f"/games/{gid}").get_json()
    assert [(s["kind"], s.get("account"), s.get("bot")) for s in game["seats"]] == [
        ("external", me["account_id"], None),
        ("bot", None, "heuristic"),
    ]
    # the game's first decision is on the account's decisions stream
    events = _events(api, token)
    assert any(k == "decision" and d["game_id"] == gid and d["seat"] == 0 for k, d, _ in events)
    final = _play_to_end(app, api, gid, {0: token})
    assert final["step"] == "over"
    assert api.get(f"/games/{gid}").get_json()["status"] == "finished"


def test_account_a_challenges_b_who_declines_then_accepts_and_both_are_seated(
    real_api_for: Any,
) -> None:
    api: ValidatingClient = real_api_for()
    a, b, c = _register(api, "a"), _register(api, "b"), _register(api, "c")
    table = {"seats": [_me(a), _me(b)], "time_control": {"per_decision": 60}}

    # B declines the first one
    r = api.post("/challenges", json=table, headers=bearer(a["token"]))
    assert r.status_code == 201, r.get_json()
    first = r.get_json()
    assert (first["status"], first["challenged"], first["game_id"]) == (
        "open",
        b["account_id"],
        None,
    )
    got = api.get("/bots/me/challenges", headers=bearer(b["token"])).get_json()
    assert [x["challenge_id"] for x in got["in"]] == [first["challenge_id"]]
    assert got["out"] == []
    # B learns of it on its decisions stream
    events = _events(api, b["token"])
    assert [(k, d["challenge_id"], i) for k, d, i in events if k == "challenge"] == [
        ("challenge", first["challenge_id"], f"challenge:{first['challenge_id']}")
    ]
    r = api.post(
        f"/challenges/{first['challenge_id']}/decline",
        json={"reason": "not-now"},
        headers=bearer(b["token"]),
    )
    assert r.status_code == 200, r.get_json()
    assert (r.get_json()["status"], r.get_json()["reason"]) == ("declined", "not-now")
    seen = api.get(f"/challenges/{first['challenge_id']}", headers=bearer(a["token"])).get_json()
    assert seen["status"] == "declined"
    r = api.post(f"/challenges/{first['challenge_id']}/accept", headers=bearer(b["token"]))
    assert r.status_code == 404
    assert "declined" in r.get_json()["detail"]
    assert api.get("/bots/me/challenges", headers=bearer(b["token"])).get_json()["in"] == []

    # the second one: a third account and the challenger cannot accept it; B does
    r = api.post("/challenges", json=table, headers=bearer(a["token"]))
    cid = r.get_json()["challenge_id"]
    r = api.post(f"/challenges/{cid}/accept", headers=bearer(c["token"]))
    assert r.status_code == 403
    assert api.get(f"/challenges/{cid}", headers=bearer(c["token"])).status_code == 403
    r = api.post(f"/challenges/{cid}/accept", headers=bearer(a["token"]))
    assert r.status_code == 403
    assert "cancel" in r.get_json()["detail"]
    r = api.post(f"/challenges/{cid}/cancel", headers=bearer(b["token"]))
    assert r.status_code == 403
    assert "decline" in r.get_json()["detail"]
    r = api.post(f"/challenges/{cid}/accept", headers=bearer(b["token"]))
    assert r.status_code == 200, r.get_json()
    accepted = r.get_json()
    assert accepted["status"] == "accepted"
    gid = accepted["game_id"]
    # accepted once: again is a 404 saying so
    again = api.post(f"/challenges/{cid}/accept", headers=bearer(b["token"]))
    assert again.status_code == 404
    assert "accepted" in again.get_json()["detail"]

    game = api.get(f"/games/{gid}").get_json()
    assert [(s["kind"], s.get("account")) for s in game["seats"]] == [
        ("external", a["account_id"]),
        ("external", b["account_id"]),
    ]
    assert game["status"] == "active"
    # both get their decisions: the first decision of each seat is pending
    for seat, who in ((0, a), (1, b)):
        events = _events(api, who["token"])
        assert any(
            k == "decision" and d["game_id"] == gid and d["seat"] == seat for k, d, _ in events
        ), events
        r = api.get(f"/games/{gid}/seats/{seat}/view", headers=bearer(who["token"]))
        assert r.status_code == 200
        assert r.get_json()["view"]["decision"] is not None
        # and only their own seat
        other = api.get(f"/games/{gid}/seats/{1 - seat}/view", headers=bearer(who["token"]))
        assert other.status_code == 403
    assert api.get(f"/games/{gid}/seats/0/view", headers=bearer(c["token"])).status_code == 403


def test_a_challenge_expires_and_a_challenger_cancels(api: ValidatingClient, app: Flask) -> None:
    a, b = _register(api, "a"), _register(api, "b")
    table = {"seats": [_me(a), _me(b)]}
    r = api.post("/challenges", json=table, headers=bearer(a["token"]))
    cid = r.get_json()["challenge_id"]
    r = api.post(f"/challenges/{cid}/cancel", headers=bearer(a["token"]))
    assert r.status_code == 200
    assert r.get_json()["status"] == "canceled"
    assert api.post(f"/challenges/{cid}/accept", headers=bearer(b["token"])).status_code == 404

    app.config["CHALLENGE_SECONDS"] = 0  # expired as soon as made
    r = api.post("/challenges", json=table, headers=bearer(a["token"]))
    cid = r.get_json()["challenge_id"]
    assert r.get_json()["status"] == "expired"
    r = api.post(f"/challenges/{cid}/accept", headers=bearer(b["token"]))
    assert r.status_code == 404
    assert "expired" in r.get_json()["detail"]
    assert api.get("/bots/me/challenges", headers=bearer(b["token"])).get_json()["in"] == []

    # a challenger whose token is revoked cannot be seated: accepting starts nothing
    app.config["CHALLENGE_SECONDS"] = 120
    cid = api.post("/challenges", json=table, headers=bearer(a["token"])).get_json()["challenge_id"]
    r = api.delete(f"/bots/accounts/{a['account_id']}/token", headers=bearer(a["token"]))
    assert r.status_code == 204
    r = api.post(f"/challenges/{cid}/accept", headers=bearer(b["token"]))
    assert r.status_code == 404
    assert "revoked" in r.get_json()["detail"]
    assert api.get(f"/challenges/{cid}", headers=bearer(b["token"])).get_json()["status"] == (
        "canceled"
    )


def test_limits_refuse_with_429(real_api_for: Any) -> None:
    api: ValidatingClient = real_api_for(MAX_OPEN_CHALLENGES=2, CHALLENGES_PER_MINUTE=4)
    a, b = _register(api, "a"), _register(api, "b")
    table = {"seats": [_me(a), _me(b)]}
    for _ in range(2):
        assert api.post("/challenges", json=table, headers=bearer(a["token"])).status_code == 201
    r = api.post("/challenges", json=table, headers=bearer(a["token"]))
    assert r.status_code == 429
    assert r.get_json()["limit"] == "open-challenges"
    assert "cancel" in r.get_json()["detail"]
    # another account is not held back by a's challenges
    r = api.post("/challenges", json={"seats": [_me(b), _me(a)]}, headers=bearer(b["token"]))
    assert r.status_code == 201
    # challenges to other accounts count a minute (each canceled: never too many open)
    c = {"seats": [_me(b), _me(a)]}
    for _ in range(3):
        cid = api.post("/challenges", json=c, headers=bearer(b["token"])).get_json()["challenge_id"]
        assert api.post(f"/challenges/{cid}/cancel", headers=bearer(b["token"])).status_code == 200
    r = api.post("/challenges", json=c, headers=bearer(b["token"]))
    assert r.status_code == 429
    assert r.get_json()["limit"] == "challenges"
    assert int(r.headers["Retry-After"]) >= 1
    # games against the built-in bots: no rate, but at most 2 unfinished at once
    bots = {"seats": [_me(a), {"kind": "bot", "bot": "random"}]}
    games = []
    for _ in range(2):
        r = api.post("/challenges", json=bots, headers=bearer(a["token"]))
        assert r.status_code == 201
        games.append(r.get_json()["game_id"])
    r = api.post("/challenges", json=bots, headers=bearer(a["token"]))
    assert r.status_code == 429
    assert r.get_json()["limit"] == "open-challenges"
    assert "resign" in r.get_json()["detail"]
    # a finished game leaves the count: resigned, another starts (past the minute's 4)
    for gid in games:
        seat = next(
            s["seat"] for s in api.get(f"/games/{gid}").get_json()["seats"] if s.get("account")
        )
        r = api.post(f"/games/{gid}/seats/{seat}/resign", headers=bearer(a["token"]))
        assert r.status_code == 201, r.get_json()
    for _ in range(2):
        assert api.post("/challenges", json=bots, headers=bearer(a["token"])).status_code == 201


#: (body, the field its 422 names, whether the spec allows the body: the server refuses it)
BAD = [
    ({"seats": [{"kind": "human"}, {"kind": "bot", "bot": "random"}]}, "seats", False),
    ({"seats": ["ME", {"kind": "bot", "bot": "nobody"}]}, "seats", False),
    ({"seats": ["ME", {"kind": "bot", "bot": "random"}], "seed": "x"}, "seed", False),
    ({"seats": ["ME", {"kind": "bot", "bot": "random"}], "colour": "red"}, "colour", False),
    ({"seats": ["ME"]}, "seats", False),
    ({"seats": ["ME", {"kind": "external"}]}, "seats", False),
    (
        {"seats": ["ME", {"kind": "bot", "bot": "random"}], "abandon_after": -1},
        "abandon_after",
        False,
    ),
    ({"seats": [{"kind": "bot", "bot": "random"}] * 2}, "seats", True),
    ({"seats": ["ME", "ME"]}, "seats", True),
    ({"seats": ["ME", {"kind": "external", "account": "0000000000000000"}]}, "seats", True),
    ({"seats": ["ME", "B", "C"]}, "seats", True),
    (
        {"seats": ["ME", {"kind": "bot", "bot": "random"}], "time_control": {"per_decision": 0}},
        "time_control",
        False,
    ),
]


@pytest.mark.parametrize(("body", "field", "spec_allows"), BAD)
def test_bad_challenges_are_422_naming_the_field(
    api: ValidatingClient, body: dict[str, Any], field: str, spec_allows: bool
) -> None:
    who = {"ME": _register(api, "a"), "B": _register(api, "b"), "C": _register(api, "c")}
    seats = [_me(who[s]) if isinstance(s, str) else s for s in body["seats"]]
    r = api.post(
        "/challenges",
        json=dict(body, seats=seats),
        headers=bearer(who["ME"]["token"]),
        validate=spec_allows,
    )
    assert r.status_code == 422, r.get_json()
    problem = r.get_json()
    assert r.mimetype == "application/problem+json"
    assert any(k.split("[")[0].split(".")[0] == field for k in problem["errors"]), problem
    assert problem["detail"]


def test_challenging_without_a_token_takes_a_human_seat(api: ValidatingClient) -> None:
    body = {"seats": [{"kind": "bot", "bot": "random"}] * 2}
    r = api.post("/challenges", json=body)
    assert r.status_code == 422
    assert '{"kind": "human"}' in r.get_json()["detail"]
    r = api.post("/challenges", json=body, headers=bearer("rfgb_not-a-token"))
    assert r.status_code == 401
    assert "POST /bots/accounts" in r.get_json()["detail"]
    assert api.get("/bots/me/challenges").status_code == 401


def test_a_bot_account_resigns_its_challenge_game_with_its_bot_token(api: ValidatingClient) -> None:
    me = _register(api, "mine")
    body = {"seats": [{"kind": "bot", "bot": "random"}, _me(me), {"kind": "bot", "bot": "random"}]}
    gid = api.post("/challenges", json=body, headers=bearer(me["token"])).get_json()["game_id"]
    r = api.post(f"/games/{gid}/seats/1/resign", headers=bearer(me["token"]))
    assert r.status_code == 201, r.get_json()
    # three seats: the account's seat leaves and the two bots play on
    assert (r.get_json()["status"], r.get_json()["resigned"]) == ("active", [1])


def test_the_other_account_hears_of_the_outcome_on_its_stream(real_api_for: Any) -> None:
    """The challenger learns of a decline and of an accept (with the game), the challenged
    account of a cancel, as they happen, on their decisions streams."""
    api: ValidatingClient = real_api_for(SSE_MAX_SECONDS=30.0, SSE_KEEPALIVE_SECONDS=0.2)
    check = stream_events(yaml.safe_load(SPEC_PATH.read_text(encoding="utf-8")))
    a, b = _register(api, "a"), _register(api, "b")
    table = {"seats": [_me(a), _me(b)]}

    def hears(who: dict[str, Any], act: Any, status: str) -> dict[str, Any]:
        resp = api.get(  # read as it comes; checked against the spec below
            "/bots/me/decisions/stream",
            headers=bearer(who["token"]),
            buffered=False,
            validate=False,
        )
        lines = iter(resp.response)
        raw = [next(lines)]  # "retry:": connected, notices from now on are read
        cid = act()
        for chunk in lines:
            raw.append(chunk if isinstance(chunk, bytes) else chunk.encode())
            events = parse_sse(b"".join(raw).splitlines(keepends=True))
            for kind, data, ident in events:
                if kind == "challenge" and ident == f"challenge:{cid}:{status}":
                    resp.close()
                    check(b"".join(raw))  # every event of it as the spec says
                    out: dict[str, Any] = json.loads(data)
                    return out
        raise AssertionError(f"no {status} event")

    def challenge() -> str:
        r = api.post("/challenges", json=table, headers=bearer(a["token"]))
        cid: str = r.get_json()["challenge_id"]
        return cid

    def declined() -> str:
        cid = challenge()
        body = {"reason": "too-fast", "text": "60 s a decision, please"}
        api.post(f"/challenges/{cid}/decline", json=body, headers=bearer(b["token"]))
        return cid

    def canceled() -> str:
        cid = challenge()
        api.post(f"/challenges/{cid}/cancel", headers=bearer(a["token"]))
        return cid

    def accepted() -> str:
        cid = challenge()
        api.post(f"/challenges/{cid}/accept", headers=bearer(b["token"]))
        return cid

    got = hears(a, declined, "declined")
    assert (got["status"], got["reason"], got["game_id"]) == ("declined", "too-fast", None)
    assert got["text"] == "60 s a decision, please"
    assert hears(b, canceled, "canceled")["status"] == "canceled"
    got = hears(a, accepted, "accepted")
    assert got["game_id"] and got["links"]["game"] == f"/games/{got['game_id']}"


# --- a player's challenges (no bot account, no token) --------------------------------------------


def _player_challenge(api: ValidatingClient, *others: dict[str, Any], **table: Any) -> Any:
    return api.post("/challenges", json={"seats": [{"kind": "human"}, *others], **table})


def test_a_player_challenges_a_bot_account_and_plays_with_the_secret(real_api_for: Any) -> None:
    api: ValidatingClient = real_api_for()
    b = _register(api, "b")
    r = _player_challenge(api, _me(b), time_control={"per_decision": 60})
    assert r.status_code == 201, r.get_json()
    made = r.get_json()
    secret, cid = made["challenge_secret"], made["challenge_id"]
    assert made["status"] == "open" and made["challenger"] is None
    assert made["challenged"] == b["account_id"] and made["time_control"] == {"per_decision": 60}
    assert set(made["links"]) == {"self", "cancel", "accept", "decline"}
    # the secret reads it (shown no more); the challenged account sees it, without the secret
    r = api.get(f"/challenges/{cid}", headers=bearer(secret))
    assert r.status_code == 200 and r.get_json()["status"] == "open"
    assert "challenge_secret" not in r.get_json()
    incoming = api.get("/bots/me/challenges", headers=bearer(b["token"])).get_json()["in"]
    assert [c["challenge_id"] for c in incoming] == [cid]
    events = _events(api, b["token"])
    assert [(k, i) for k, _d, i in events if k == "challenge"] == [
        ("challenge", f"challenge:{cid}")
    ]
    # it accepts: the game starts, the player's seat held by the secret
    r = api.post(f"/challenges/{cid}/accept", headers=bearer(b["token"]))
    assert r.status_code == 200, r.get_json()
    gid = r.get_json()["game_id"]
    got = api.get(f"/challenges/{cid}", headers=bearer(secret)).get_json()
    assert got["status"] == "accepted" and got["game_id"] == gid
    assert got["links"]["seat"] == f"/games/{gid}/seats/0"
    game = api.get(f"/games/{gid}").get_json()
    assert game["seats"][0]["kind"] == "human" and game["seats"][0]["claimed"]
    view = api.get(f"/games/{gid}/seats/0/view", headers=bearer(secret))
    assert view.status_code == 200 and view.get_json()["view"]["decision"] is not None
    r = api.post(f"/games/{gid}/seats/0/resign", headers=bearer(secret))
    assert r.status_code == 201 and r.get_json()["status"] == "finished"


def test_a_players_challenge_carries_their_name_to_the_table(real_api_for: Any) -> None:
    """The human seat may name the player (a claim's rules); the game's seat shows it, and only
    the human seat takes one."""
    api: ValidatingClient = real_api_for()
    b = _register(api, "b")
    r = api.post(
        "/challenges",
        json={"seats": [{"kind": "human", "name": "  Ada  "}, _me(b)]},
    )
    assert r.status_code == 201, r.get_json()
    cid, secret = r.get_json()["challenge_id"], r.get_json()["challenge_secret"]
    gid = api.post(f"/challenges/{cid}/accept", headers=bearer(b["token"])).get_json()["game_id"]
    seats = api.get(f"/games/{gid}").get_json()["seats"]
    assert seats[0]["name"] == "Ada" and seats[0]["claimed"]
    assert "name" not in seats[1]
    view = api.get(f"/games/{gid}/seats/0/view", headers=bearer(secret))
    assert view.status_code == 200
    # built-in bots only: the game starts at once, under the name too
    r = api.post(
        "/challenges",
        json={"seats": [{"kind": "human", "name": "Grace"}, {"kind": "bot", "bot": "random"}]},
    )
    assert r.status_code == 201 and r.get_json()["status"] == "accepted", r.get_json()
    assert api.get(f"/games/{r.get_json()['game_id']}").get_json()["seats"][0]["name"] == "Grace"
    for seats, spec_allows in [
        ([{"kind": "human", "name": "x" * 25}, _me(b)], True),
        ([{"kind": "human", "name": "bad\u202ename"}, _me(b)], True),
        ([{"kind": "human"}, {**_me(b), "name": "Bob"}], False),
        ([{"kind": "human"}, {"kind": "bot", "bot": "random", "name": "Bob"}], False),
    ]:
        r = api.post("/challenges", json={"seats": seats}, validate=spec_allows)
        assert r.status_code == 422, (seats, r.get_json())
        assert any(k.endswith(".name") for k in r.get_json()["errors"]), r.get_json()


def test_nobody_else_reads_a_players_challenge_or_takes_the_seat(real_api_for: Any) -> None:
    """An attacker - no token, a guessed secret, another player's secret, another bot account,
    even the challenged account - neither reads the challenger's secret nor gets the seat."""
    api: ValidatingClient = real_api_for()
    b, mallory = _register(api, "b"), _register(api, "mallory")
    made = _player_challenge(api, _me(b)).get_json()
    secret, cid = made["challenge_secret"], made["challenge_id"]
    theirs = _player_challenge(api, _me(b)).get_json()["challenge_secret"]
    assert theirs != secret
    for headers, status in [
        ({}, 401),
        (bearer("x" * 43), 401),
        (bearer(theirs), 401),
        (bearer(mallory["token"]), 403),
    ]:
        r = api.get(f"/challenges/{cid}", headers=headers)
        assert r.status_code == status, (headers, r.get_json())
        r = api.post(f"/challenges/{cid}/cancel", headers=headers)
        assert r.status_code == status, (headers, r.get_json())
    # the challenged account reads it, but never the secret, its digest or the player's address
    seen = [
        api.get(f"/challenges/{cid}", headers=bearer(b["token"])).get_data(as_text=True),
        api.get("/bots/me/challenges", headers=bearer(b["token"])).get_data(as_text=True),
        json.dumps(_events(api, b["token"])),
    ]
    digest = hashlib.sha256(secret.encode()).hexdigest()
    for text in seen:
        assert secret not in text and digest not in text and "addr:" not in text
    # the secret is no bot token; the player cannot answer their own challenge
    assert api.post(f"/challenges/{cid}/accept", headers=bearer(secret)).status_code == 403
    gid = api.post(f"/challenges/{cid}/accept", headers=bearer(b["token"])).get_json()["game_id"]
    # the seat was claimed as the game was made: nobody claims it, nobody else acts in it
    r = api.post(f"/games/{gid}/seats/0/claim", json={})
    assert r.status_code == 409, r.get_json()
    for token in (theirs, b["token"], mallory["token"]):
        assert api.get(f"/games/{gid}/seats/0/view", headers=bearer(token)).status_code in (
            401,
            403,
        )
    assert api.get(f"/games/{gid}/seats/0/view", headers=bearer(secret)).status_code == 200


def test_a_player_challenges_the_built_in_bots_and_the_game_starts_at_once(
    real_api_for: Any,
) -> None:
    api: ValidatingClient = real_api_for()
    r = _player_challenge(api, {"kind": "bot", "bot": "random"}, {"kind": "bot", "bot": "random"})
    assert r.status_code == 201, r.get_json()
    made = r.get_json()
    assert made["status"] == "accepted" and made["links"]["seat"].endswith("/seats/0")
    r = api.get(f"{made['links']['seat']}/view", headers=bearer(made["challenge_secret"]))
    assert r.status_code == 200


def test_a_player_hears_of_a_decline_and_may_cancel(real_api_for: Any) -> None:
    api: ValidatingClient = real_api_for()
    b = _register(api, "b")
    made = _player_challenge(api, _me(b)).get_json()
    r = api.post(
        f"/challenges/{made['challenge_id']}/decline",
        json={"reason": "not-now", "text": "busy"},
        headers=bearer(b["token"]),
    )
    assert r.status_code == 200
    got = api.get(f"/challenges/{made['challenge_id']}", headers=bearer(made["challenge_secret"]))
    assert got.get_json()["status"] == "declined" and got.get_json()["reason"] == "not-now"
    assert got.get_json()["text"] == "busy"
    made = _player_challenge(api, _me(b)).get_json()
    r = api.post(
        f"/challenges/{made['challenge_id']}/cancel", headers=bearer(made["challenge_secret"])
    )
    assert r.status_code == 200 and r.get_json()["status"] == "canceled"
    assert api.get("/bots/me/challenges", headers=bearer(b["token"])).get_json()["in"] == []


def test_a_players_limits_are_their_addresses(real_api_for: Any) -> None:
    api: ValidatingClient = real_api_for(MAX_OPEN_CHALLENGES=1, CHALLENGES_PER_MINUTE=2)
    b = _register(api, "b")
    made = _player_challenge(api, _me(b)).get_json()
    r = _player_challenge(api, _me(b))
    assert r.status_code == 429 and r.get_json()["limit"] == "open-challenges"
    assert "address" in r.get_json()["detail"]
    # another address is not held back
    r = api.post(
        "/challenges",
        json={"seats": [{"kind": "human"}, _me(b)]},
        environ_base={"REMOTE_ADDR": "10.0.0.9"},
        validate=False,
    )
    assert r.status_code == 201, r.get_json()
    api.post(f"/challenges/{made['challenge_id']}/cancel", headers=bearer(made["challenge_secret"]))
    made = _player_challenge(api, _me(b)).get_json()
    api.post(f"/challenges/{made['challenge_id']}/cancel", headers=bearer(made["challenge_secret"]))
    r = _player_challenge(api, _me(b))
    assert r.status_code == 429 and r.get_json()["limit"] == "challenges"
    # a human seat is a player's alone: a bot token's challenge has none
    r = api.post(
        "/challenges",
        json={"seats": [{"kind": "human"}, _me(b)]},
        headers=bearer(b["token"]),
    )
    assert r.status_code == 422


# --- decline reasons -------------------------------------------------------------------------------


def test_a_decline_gives_a_reason_from_the_list_and_words_the_challenger_reads(
    real_api_for: Any,
) -> None:
    from service.challenges import DECLINE_REASONS

    api: ValidatingClient = real_api_for(CHALLENGES_PER_MINUTE=50)
    a, b = _register(api, "a"), _register(api, "b")
    table = {"seats": [_me(a), _me(b)]}

    def declined(body: Any) -> dict[str, Any]:
        cid = api.post("/challenges", json=table, headers=bearer(a["token"])).get_json()[
            "challenge_id"
        ]
        r = api.post(f"/challenges/{cid}/decline", json=body, headers=bearer(b["token"]))
        assert r.status_code == 200, r.get_json()
        seen: dict[str, Any] = api.get(f"/challenges/{cid}", headers=bearer(a["token"])).get_json()
        assert seen == r.get_json()  # the challenger reads what the decline answered
        return seen

    # no body, or an empty one: generic, no words
    for body in (None, {}):
        got = declined(body)
        assert (got["status"], got["reason"]) == ("declined", "generic") and "text" not in got
    for reason in DECLINE_REASONS:
        assert declined({"reason": reason})["reason"] == reason
    words = "é" * 200  # 200 characters (400 bytes): as many as it takes
    got = declined({"reason": "time-control", "text": words})
    assert (got["reason"], got["text"]) == ("time-control", words)
    # (the challenger's decisions stream carries both as they happen: see
    # test_the_other_account_hears_of_the_outcome_on_its_stream)


@pytest.mark.parametrize(
    "body, field, spec_allows",
    [
        ({"reason": "busy"}, "reason", False),  # the free text of old: not a reason
        ({"reason": "Generic"}, "reason", False),
        ({"reason": ""}, "reason", False),
        ({"reason": None}, "reason", False),
        ({"reason": 3}, "reason", False),
        ({"reason": ["generic"]}, "reason", False),
        ({"reason": {"generic": True}}, "reason", False),
        ({"text": "x" * 201}, "text", False),
        ({"reason": "later", "text": 5}, "text", False),
        ({"text": None}, "text", False),
        ({"text": "two\nlines"}, "text", True),
        ({"text": "evil\u202etxt.exe"}, "text", True),
        ({"text": "bell\u0007"}, "text", True),
        ({"why": "later"}, "why", False),
    ],
)
def test_a_bad_decline_is_422_naming_the_field_and_leaves_the_challenge_open(
    api: ValidatingClient, body: dict[str, Any], field: str, spec_allows: bool
) -> None:
    a, b = _register(api, "a"), _register(api, "b")
    cid = api.post(
        "/challenges", json={"seats": [_me(a), _me(b)]}, headers=bearer(a["token"])
    ).get_json()["challenge_id"]
    r = api.post(
        f"/challenges/{cid}/decline", json=body, headers=bearer(b["token"]), validate=spec_allows
    )
    assert r.status_code == 422, r.get_json()
    problem = r.get_json()
    assert problem["type"] == "/problems/invalid-request"
    assert list(problem["errors"]) == [field], problem
    if field == "reason" and body["reason"] not in (None, 3) and isinstance(body["reason"], str):
        assert "not-these-bots" in problem["errors"]["reason"][0]  # it lists the reasons
    assert api.get(f"/challenges/{cid}", headers=bearer(a["token"])).get_json()["status"] == "open"
    # a wrong body is no answer: the challenge can still be declined properly
    r = api.post(f"/challenges/{cid}/decline", json={"reason": "later"}, headers=bearer(b["token"]))
    assert r.status_code == 200 and r.get_json()["reason"] == "later"


def test_a_challenge_declined_in_words_before_reasons_shows_them_as_text() -> None:
    """A decline stored with a reason in words (kept an hour) reads as generic, its words as
    text, so every challenge resource has a reason from the list."""
    from service.challenges import public

    stored = {"challenge_id": "0" * 16, "status": "declined", "reason": "busy", "secret": "s"}
    assert public(stored) == {
        "challenge_id": "0" * 16,
        "status": "declined",
        "reason": "generic",
        "text": "busy",
    }
    assert public({**stored, "reason": "later"})["reason"] == "later"
