"""Bot accounts over REST: registration (token stored only as sha256), token-scoped account reads,
revocation, seat scoping of bot tokens on every seat endpoint, the decisions stream, and the ladder
endpoints. Every request and response is checked against openapi.yaml (``api``)."""

from __future__ import annotations

import hashlib
import json
from typing import Any

from flask import Flask
from rfg_client import parse_sse

from ladder.service import Ladders

from .conftest import ADMIN, ValidatingClient, _client, bearer, make_app


def register(api: ValidatingClient, name: str = "bot") -> dict[str, Any]:
    r = api.post("/bots/accounts", json={"name": name, "description": "test", "contact": "a@b.c"})
    assert r.status_code == 201, r.get_json()
    out: dict[str, Any] = r.get_json()
    return out


def ladders_of(app: Flask) -> Ladders:
    b = app.extensions["rfg"]
    return Ladders(b.client, b.games, prefix=b.store.prefix)


def external_game(app: Flask, a: str, b: str) -> str:
    """A game with seat 0 for account a, seat 1 for account b, seat 2 a built-in bot."""
    games = app.extensions["rfg"].games
    table = {
        "seats": [
            {"kind": "external", "account": a, "entrant": "a"},
            {"kind": "external", "account": b, "entrant": "b"},
            {"kind": "bot", "bot": "random", "entrant": "r"},
        ]
    }
    gid, _ = games.create(3, {}, seed="ext", table=table)
    return str(gid)


def test_registration_shows_the_token_once_and_keeps_only_its_digest(
    api: ValidatingClient, app: Flask
) -> None:
    acct = register(api)
    token = acct["token"]
    assert token.startswith("rfgb_") and len(token) >= 5 + 43  # 256 bits, base64url
    assert acct["active"] and acct["revoked_at"] is None
    client = app.extensions["rfg"].client
    stored = b"".join(
        k + b"".join(v for v in client.hgetall(k).values()) if client.type(k) == b"hash" else k
        for k in client.scan_iter(match="*botacct*")
    )
    assert token.encode() not in stored
    assert hashlib.sha256(token.encode()).hexdigest().encode() in stored
    me = api.get("/bots/me", headers=bearer(token))
    assert me.status_code == 200 and me.get_json()["account_id"] == acct["account_id"]
    assert "token" not in me.get_json()


def test_a_server_can_keep_registration_to_its_operator(openapi: Any) -> None:
    """RFG_BOT_REGISTRATION=admin: a public ladder host decides who may enter bots."""
    import uuid

    import pytest

    api = _client(make_app(f"memory://{uuid.uuid4().hex}", BOT_REGISTRATION="admin"), openapi)
    body = {"name": "b", "description": "test", "contact": "a@b.c"}
    r = api.post("/bots/accounts", json=body)
    assert r.status_code == 401 and "admin token" in r.get_json()["detail"]
    r = api.post("/bots/accounts", json=body, headers=bearer("not-the-admin-token"))
    assert r.status_code == 403
    r = api.post("/bots/accounts", json=body, headers=bearer(ADMIN))
    assert r.status_code == 201 and r.get_json()["token"]
    with pytest.raises(ValueError, match="'open'.*'admin'"):
        make_app("memory://x", BOT_REGISTRATION="closed")
    with pytest.raises(ValueError, match="RFG_ADMIN_TOKEN"):
        make_app("memory://x", BOT_REGISTRATION="admin", ADMIN_TOKEN=None)


def test_a_bot_token_reads_only_its_own_account_and_can_be_revoked(api: ValidatingClient) -> None:
    a, b = register(api, "a"), register(api, "b")
    path = f"/bots/accounts/{a['account_id']}"
    assert api.get(path, headers=bearer(a["token"])).status_code == 200
    assert api.get(path, headers=bearer(b["token"])).get_json()["type"] == "/problems/forbidden"
    assert api.get(path).status_code == 401
    assert api.get(path, headers=bearer("rfgb_not-a-token")).status_code == 401
    assert api.delete(f"{path}/token", headers=bearer(b["token"])).status_code == 403
    assert api.delete(f"{path}/token", headers=bearer(a["token"])).status_code == 204
    assert api.get(path, headers=bearer(a["token"])).status_code == 401
    assert api.get("/bots/me", headers=bearer(a["token"])).status_code == 401
    # the admin may revoke any account's token
    assert (
        api.delete(f"/bots/accounts/{b['account_id']}/token", headers=bearer(ADMIN)).status_code
        == 204
    )
    assert api.get("/bots/me", headers=bearer(b["token"])).status_code == 401


def test_a_bot_token_reads_and_acts_only_in_its_own_seats(
    api: ValidatingClient, app: Flask
) -> None:
    a, b = register(api, "a"), register(api, "b")
    gid = external_game(app, a["account_id"], b["account_id"])
    game = api.get(f"/games/{gid}").get_json()
    assert [s["kind"] for s in game["seats"]] == ["external", "external", "bot"]
    assert game["seats"][0]["account"] == a["account_id"] and all(
        s["claimed"] for s in game["seats"]
    )
    # nobody can claim an external seat
    assert api.post(f"/games/{gid}/seats/0/claim").status_code == 409

    view = api.get(f"/games/{gid}/seats/0/view", headers=bearer(a["token"]))
    assert view.status_code == 200 and view.get_json()["view"]["decision"]["kind"] == "start_tiles"
    decision = view.get_json()["view"]["decision"]
    command = {"kind": "start_tiles", "development": decision["options"][0]["development"]}
    for seat, token in ((1, a["token"]), (0, b["token"]), (2, a["token"])):
        h = bearer(token)
        for path in ("view", "events", "log"):
            r = api.get(f"/games/{gid}/seats/{seat}/{path}", headers=h)
            assert r.status_code == 403, (seat, path, r.get_json())
        r = api.get(f"/games/{gid}/seats/{seat}/events/stream", headers=h, validate=False)
        assert r.status_code == 403
        r = api.post(
            f"/games/{gid}/seats/{seat}/commands",
            headers=h,
            json={"command_id": "x", "command": command},
        )
        assert r.status_code == 403 and r.get_json()["type"] == "/problems/forbidden"
    assert api.get(f"/games/{gid}/seats/0/view").status_code == 401
    assert api.get(f"/games/{gid}/seats/9/view", headers=bearer(a["token"])).status_code == 404
    r = api.post(
        f"/games/{gid}/seats/0/commands",
        headers=bearer(a["token"]),
        json={
            "command_id": "c1",
            "expected_version": view.get_json()["version"],
            "command": command,
        },
    )
    assert r.status_code == 201, r.get_json()
    assert api.get(f"/games/{gid}/seats/0/events", headers=bearer(a["token"])).status_code == 200
    # a revoked token loses its seats too
    api.delete(f"/bots/accounts/{a['account_id']}/token", headers=bearer(a["token"]))
    assert api.get(f"/games/{gid}/seats/0/view", headers=bearer(a["token"])).status_code == 401


def _events(raw: bytes) -> list[tuple[str, dict[str, Any], str | None]]:
    return [(k, json.loads(d), i) for k, d, i in parse_sse(raw.splitlines(keepends=True))]


def test_the_decisions_stream_lists_pending_decisions_and_resumes(
    api: ValidatingClient, app: Flask
) -> None:
    a = register(api, "a")
    h = bearer(ADMIN)
    assert (
        api.post(
            "/ladders", json={"name": "l1", "players": [2], "concurrency": 2}, headers=h
        ).status_code
        == 201
    )
    assert (
        api.post(
            "/ladders/l1/entrants", json={"entrant": "ext", "account": a["account_id"]}, headers=h
        ).status_code
        == 201
    )
    assert (
        api.post(
            "/ladders/l1/entrants", json={"entrant": "rnd", "bot": "random"}, headers=h
        ).status_code
        == 201
    )
    created = ladders_of(app).schedule("l1", rng_seed="x")
    assert len(created) == 2
    r = api.get("/bots/me/decisions/stream", headers=bearer(a["token"]))
    assert r.status_code == 200 and r.mimetype == "text/event-stream"
    assert b": keep-alive" in r.get_data()
    events = _events(r.get_data())
    assert sorted(d["game_id"] for _, d, _ in events) == sorted(created)
    assert all(k == "decision" and d["kind"] == "start_tiles" for k, d, _ in events)
    assert all(i == f"{d['game_id']}:{d['seat']}:{d['decision_version']}" for _, d, i in events)
    # resuming after the first: the other (still pending) is sent again, the first is not
    first = events[0][2]
    assert first is not None
    again = _events(
        api.get(
            "/bots/me/decisions/stream", headers={**bearer(a["token"]), "Last-Event-ID": first}
        ).get_data()
    )
    assert [i for _, _, i in again] == [i for _, _, i in events[1:]]
    # answering one: it is no longer sent
    d = events[0][1]
    view = api.get(d["links"]["view"], headers=bearer(a["token"])).get_json()
    cmd = {
        "kind": "start_tiles",
        "development": view["view"]["decision"]["options"][0]["development"],
    }
    assert (
        api.post(
            d["links"]["commands"],
            json={"command_id": "c", "command": cmd},
            headers=bearer(a["token"]),
        ).status_code
        == 201
    )
    later = _events(api.get("/bots/me/decisions/stream", headers=bearer(a["token"])).get_data())
    assert d["game_id"] not in {x["game_id"] for _, x, _ in later}
    assert api.get("/bots/me/decisions/stream").status_code == 401


def test_ladder_endpoints(api: ValidatingClient, app: Flask) -> None:
    body = {"name": "main", "players": [2], "concurrency": 1}
    assert api.post("/ladders", json=body).status_code == 401
    assert api.post("/ladders", json=body, headers=bearer("nope")).status_code == 403
    h = bearer(ADMIN)
    r = api.post("/ladders", json=body, headers=h)
    assert r.status_code == 201 and r.get_json()["entrants"] == [] and not r.get_json()["paused"]
    assert api.post("/ladders", json=body, headers=h).status_code == 409
    bad = {"name": "x", "time_control": {"per_decision": 0}}
    assert api.post("/ladders", json=bad, headers=h, validate=False).status_code == 422
    assert api.get("/ladders").get_json() == {"ladders": ["main"]}
    assert api.get("/ladders/nope").status_code == 404
    add = "/ladders/main/entrants"
    assert api.post(add, json={"entrant": "h", "bot": "heuristic"}).status_code == 401
    assert api.post(add, json={"entrant": "h", "bot": "heuristic"}, headers=h).status_code == 201
    assert api.post(add, json={"entrant": "h", "bot": "random"}, headers=h).status_code == 409
    both = {"entrant": "r", "bot": "random", "account": "0" * 16}
    assert api.post(add, json=both, headers=h, validate=False).status_code == 422
    assert api.post(add, json={"entrant": "x", "account": "0" * 16}, headers=h).status_code == 422
    assert api.post(add, json={"entrant": "r", "bot": "random"}, headers=h).status_code == 201
    board = api.get("/ladders/main/leaderboard").get_json()
    assert board["applied"] == 0 and {r["entrant"] for r in board["rows"]} == {"h", "r"}

    lad = ladders_of(app)
    from tests.ladder.test_ladder_service import drive

    for _ in range(3):
        for gid in lad.schedule("main", rng_seed="s"):
            drive(lad.games, gid)
        lad.record_finished("main")
    board = api.get("/ladders/main/leaderboard").get_json()
    assert board["applied"] == 3 and all(r["games"] == 3 for r in board["rows"])
    hist = api.get("/ladders/main/entrants/h/history").get_json()["history"]
    assert [x["n"] for x in hist] == [1, 2, 3]
    assert api.get("/ladders/main/entrants/zz/history").status_code == 404
    svg = api.get("/ladders/main/entrants/h/history.svg")
    assert (
        svg.status_code == 200
        and svg.mimetype == "image/svg+xml"
        and svg.get_data().startswith(b"<svg")
    )
    pairs = api.get("/ladders/main/head-to-head").get_json()["pairs"]
    assert {(p["a"], p["b"]) for p in pairs} == {("h", "r"), ("r", "h")}
    assert api.patch("/ladders/main", json={"paused": True}).status_code == 401
    r = api.patch("/ladders/main", json={"paused": True}, headers=h)
    assert r.status_code == 200 and r.get_json()["paused"]
    assert lad.schedule("main") == []
    assert api.get("/ladders/main").get_json()["results"] == 3


def test_a_duplicate_ladder_refuses_external_bots(api: ValidatingClient) -> None:
    a = register(api, "dup")
    h = bearer(ADMIN)
    body = {"name": "dup", "players": [2], "concurrency": 2, "duplicate": True}
    assert api.post("/ladders", json=body, headers=h).status_code == 201
    r = api.post(
        "/ladders/dup/entrants", json={"entrant": "x", "account": a["account_id"]}, headers=h
    )
    assert r.status_code == 409
    assert "without duplicate sets" in r.get_json()["detail"]
    assert api.get("/ladders/dup").get_json()["entrants"] == []


def test_rotating_the_bot_token_answers_as_the_spec_says(api: ValidatingClient) -> None:
    acct = register(api)
    r = api.post("/bots/me/token", headers=bearer(acct["token"]))
    assert r.status_code == 200 and r.headers["Cache-Control"] == "no-store"
    body = r.get_json()
    assert body["account_id"] == acct["account_id"] and body["token"] != acct["token"]
    assert api.get("/bots/me", headers=bearer(acct["token"])).status_code == 401
    assert api.get("/bots/me", headers=bearer(body["token"])).status_code == 200
    # hostile: a body, a query, a malformed header, a seat-like token
    assert api.post("/bots/me/token?x=1", headers=bearer(body["token"])).status_code == 400
    assert api.post("/bots/me/token", headers={"Authorization": "Basic x"}).status_code == 401
    assert api.post("/bots/me/token", headers=bearer("rfgb_" + "A" * 43)).status_code == 401
