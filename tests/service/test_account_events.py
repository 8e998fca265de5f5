"""The bot account's events stream (``GET /bots/me/events``) on the real Redis: every event type
arrives as it happens on a real challenge, accept, decline, cancel and game end, each as
openapi.yaml says; a client resuming with ``Last-Event-ID`` loses nothing and gets nothing
twice; without one (or with one no longer kept) the state comes first; another account's token
never sees any of it; a revoked token ends the stream within a keep-alive (over a real HTTP
server)."""

from __future__ import annotations

import json
import re
import time
import uuid
from collections.abc import Iterator
from typing import Any

import pytest
import yaml
from openapi_core import OpenAPI
from rfg_client import parse_sse

from tests.conftest import REDIS_URL, purge_prefix

from .conftest import SPEC_PATH, ValidatingClient, _client, bearer, make_app, stream_events
from .test_revocation import REVOKED, Follower, _register, _serve, _wait_keepalive

pytestmark = pytest.mark.redis

ID = re.compile(r"^[0-9]+-[0-9]+$")
Event = tuple[str, dict[str, Any], str | None]


@pytest.fixture
def real_api_for(real_redis: Any, openapi: OpenAPI) -> Iterator[Any]:
    prefixes: list[str] = []

    def make(**config: Any) -> ValidatingClient:
        prefix = f"t{uuid.uuid4().hex[:12]}"
        prefixes.append(prefix)
        return _client(make_app(REDIS_URL, STORE_PREFIX=prefix, **config), openapi)

    yield make
    for prefix in prefixes:
        purge_prefix(real_redis, prefix)


def register(api: ValidatingClient, name: str) -> dict[str, Any]:
    r = api.post("/bots/accounts", json={"name": name, "description": "t", "contact": "a@b.c"})
    assert r.status_code == 201, r.get_json()
    out: dict[str, Any] = r.get_json()
    return out


def me(account: dict[str, Any]) -> dict[str, str]:
    return {"kind": "external", "account": account["account_id"]}


CHECK = stream_events(yaml.safe_load(SPEC_PATH.read_text(encoding="utf-8")))


class Reader:
    """An open events stream, read as it comes: ``state`` is what it sent before its first
    keep-alive, so what happens after ``__init__`` comes live."""

    def __init__(self, api: ValidatingClient, token: str, last: str | None = None) -> None:
        headers = bearer(token)
        if last is not None:
            headers["Last-Event-ID"] = last
        self.resp = api.get("/bots/me/events", headers=headers, buffered=False, validate=False)
        assert self.resp.status_code == 200, self.resp.get_data()
        self.lines = iter(self.resp.response)
        self.raw = b""
        self.taken = 0
        self.state = self.quiet()  # what was sent before the first keep-alive: the state

    def events(self) -> list[Event]:
        return [
            (kind, json.loads(data), ident)
            for kind, data, ident in parse_sse(self.raw.splitlines(keepends=True))
        ]

    def next(self, kind: str) -> Event:
        """The next event not taken yet; it must be of ``kind``."""
        for chunk in self.lines:
            self.raw += chunk if isinstance(chunk, bytes) else chunk.encode()
            got = self.events()
            if len(got) > self.taken:
                event = got[self.taken]
                self.taken += 1
                assert event[0] == kind, (event, got)
                assert event[1]["type"] == kind
                return event
        raise AssertionError(f"the stream ended before a {kind} event: {self.events()}")

    def quiet(self) -> list[Event]:
        """Read until the next keep-alive; the events not taken yet."""
        for chunk in self.lines:
            text = chunk if isinstance(chunk, bytes) else chunk.encode()
            self.raw += text
            if text.startswith(b": keep-alive"):
                break
        rest = self.events()[self.taken :]
        self.taken += len(rest)
        return rest

    def close(self) -> None:
        self.resp.close()
        if self.events():
            CHECK(self.raw)  # every event as openapi.yaml says


def whole(api: ValidatingClient, token: str, last: str | None = None) -> list[Event]:
    """A stream read until the server closes it (its bound), checked against the spec."""
    headers = bearer(token)
    if last is not None:
        headers["Last-Event-ID"] = last
    r = api.get("/bots/me/events", headers=headers, validate=False)  # (checked below)
    assert r.status_code == 200
    assert r.headers["Content-Type"].startswith("text/event-stream")
    lines = r.get_data().splitlines(keepends=True)
    out = [(kind, json.loads(data), ident) for kind, data, ident in parse_sse(lines)]
    if out:
        CHECK(r.get_data())  # every event as openapi.yaml says
    return out


def test_every_event_arrives_as_it_happens(real_api_for: Any) -> None:
    api = real_api_for(SSE_MAX_SECONDS=30.0, SSE_KEEPALIVE_SECONDS=0.3)
    a, b = register(api, "alpha"), register(api, "beta")
    table = {"seats": [me(a), me(b)]}
    sa, sb = Reader(api, a["token"]), Reader(api, b["token"])

    def challenge() -> str:
        r = api.post("/challenges", json=table, headers=bearer(a["token"]))
        assert r.status_code == 201, r.get_json()
        cid: str = r.get_json()["challenge_id"]
        return cid

    # an open challenge reaches the challenged account, its seats named
    cid = challenge()
    _, c, ident = sb.next("challenge")
    assert c["challenge_id"] == cid and c["status"] == "open" and ident and ID.match(ident)
    assert [(s["name"], s["rating"]) for s in c["seats"]] == [("alpha", None), ("beta", None)]
    assert c["links"]["accept"] == f"/challenges/{cid}/accept"
    # canceled: the challenged account hears it
    assert api.post(f"/challenges/{cid}/cancel", headers=bearer(a["token"])).status_code == 200
    _, c, _ = sb.next("challenge-canceled")
    assert (c["challenge_id"], c["status"]) == (cid, "canceled")
    # declined: the challenger hears it, with the reason
    cid = challenge()
    assert sb.next("challenge")[1]["challenge_id"] == cid
    r = api.post(f"/challenges/{cid}/decline", json={"reason": "later"}, headers=bearer(b["token"]))
    assert r.status_code == 200
    _, c, _ = sa.next("challenge-declined")
    assert (c["challenge_id"], c["status"], c["reason"]) == (cid, "declined", "later")
    # accepted: the challenger hears it with the game, and both hear the game start
    cid = challenge()
    assert sb.next("challenge")[1]["challenge_id"] == cid
    r = api.post(f"/challenges/{cid}/accept", headers=bearer(b["token"]))
    assert r.status_code == 200
    gid = r.get_json()["game_id"]
    started_a = sa.next("game-started")[1]  # written with the game's creation, before the accept
    _, c, _ = sa.next("challenge-accepted")
    assert (c["challenge_id"], c["status"], c["game_id"]) == (cid, "accepted", gid)
    started_b = sb.next("game-started")[1]
    for started, seat in ((started_a, 0), (started_b, 1)):
        assert (started["game_id"], started["seat"]) == (gid, seat)
        assert (started["rated"], started["ladder"]) == (False, None)
        assert started["players"] == [
            {
                "seat": 0,
                "kind": "external",
                "name": "alpha",
                "account": a["account_id"],
                "rating": None,
            },
            {
                "seat": 1,
                "kind": "external",
                "name": "beta",
                "account": b["account_id"],
                "rating": None,
            },
        ]
        assert started["links"] == {
            "game": f"/games/{gid}",
            "view": f"/games/{gid}/seats/{seat}/view",
            "commands": f"/games/{gid}/seats/{seat}/commands",
            "stream": f"/games/{gid}/seats/{seat}/events/stream",
        }
    # the game ends: both hear its result
    r = api.post(f"/games/{gid}/seats/1/resign", headers=bearer(b["token"]))
    assert r.status_code in (200, 201), r.get_json()
    for reader, seat in ((sa, 0), (sb, 1)):
        _, done, _ = reader.next("game-finished")
        assert (done["game_id"], done["seat"]) == (gid, seat)
        assert done["result"]["reason"] == "resigned" and done["result"]["winners"] == [0]
        assert [s["seat"] for s in done["result"]["scores"]] == [0, 1]
        assert done["links"]["view"] == f"/games/{gid}/seats/{seat}/view"
    assert sa.quiet() == [] and sb.quiet() == []  # nothing else: no decisions here
    sa.close()
    sb.close()


def test_resuming_loses_nothing_and_repeats_nothing(real_api_for: Any) -> None:
    api = real_api_for(SSE_MAX_SECONDS=1.0, SSE_KEEPALIVE_SECONDS=0.2)
    a, b = register(api, "alpha"), register(api, "beta")
    table = {"seats": [me(a), me(b)]}
    cids = []
    for _ in range(3):
        r = api.post("/challenges", json=table, headers=bearer(a["token"]))
        cids.append(r.get_json()["challenge_id"])
    # the first connection: the state (the three open challenges), only the last with an id
    state = whole(api, b["token"])
    assert [(k, d["challenge_id"]) for k, d, _ in state] == [("challenge", c) for c in cids]
    assert [i is None for _, _, i in state] == [True, True, False]
    resume = state[-1][2]
    assert resume is not None and ID.match(resume)
    # resuming after the state: nothing (nothing happened since), not the state again
    assert whole(api, b["token"], resume) == []
    # things happen while the client is away
    api.post(f"/challenges/{cids[0]}/cancel", headers=bearer(a["token"]))
    r = api.post("/challenges", json=table, headers=bearer(a["token"]))
    cids.append(r.get_json()["challenge_id"])
    api.post(f"/challenges/{cids[1]}/cancel", headers=bearer(a["token"]))
    got = whole(api, b["token"], resume)
    assert [(k, d["challenge_id"]) for k, d, _ in got] == [
        ("challenge-canceled", cids[0]),
        ("challenge", cids[3]),
        ("challenge-canceled", cids[1]),
    ]
    ids = [i for _, _, i in got]
    assert all(i and ID.match(i) for i in ids) and len(set(ids)) == 3
    # resuming from the middle: exactly what came after it, once
    again = whole(api, b["token"], ids[0])
    assert [(k, d["challenge_id"], i) for k, d, i in again] == [
        (k, d["challenge_id"], i) for k, d, i in got[1:]
    ]
    assert whole(api, b["token"], ids[-1]) == []
    # an id that is no longer kept (or never was): the state again, then the live events
    state = whole(api, b["token"], "1-0")
    assert sorted(d["challenge_id"] for _, d, _ in state) == sorted([cids[2], cids[3]])
    assert all(k == "challenge" for k, _, _ in state)
    # a malformed id: 400 saying what to send
    for bad in (
        "abc",
        "1-0-0",
        "x" * 201,
        "challenge:0123",
        "1-18446744073709551616",
        "9" * 20 + "-0",
    ):
        r = api.get(
            "/bots/me/events", headers={**bearer(b["token"]), "Last-Event-ID": bad}, validate=False
        )
        assert r.status_code == 400, bad
        assert "Last-Event-ID" in r.get_json()["detail"]


def test_the_state_names_every_active_game_and_leaves_the_finished(real_api_for: Any) -> None:
    api = real_api_for(SSE_MAX_SECONDS=1.0, SSE_KEEPALIVE_SECONDS=0.2)
    a = register(api, "alpha")
    gids = []
    for _ in range(3):  # against the built-in bots: each game starts at once
        r = api.post(
            "/challenges",
            json={"seats": [me(a), {"kind": "bot", "bot": "random"}]},
            headers=bearer(a["token"]),
        )
        assert r.status_code == 201, r.get_json()
        gids.append(r.get_json()["game_id"])
    api.post(f"/games/{gids[1]}/seats/0/resign", headers=bearer(a["token"]))
    state = whole(api, a["token"], "1-0")
    started = [d for k, d, _ in state if k == "game-started"]
    assert sorted(d["game_id"] for d in started) == sorted([gids[0], gids[2]])
    for d in started:
        assert d["players"][1] == {"seat": 1, "kind": "bot", "name": "random", "rating": None}


def test_another_accounts_token_never_sees_these_events(real_api_for: Any) -> None:
    """Eve follows her own stream through a whole challenge between two other accounts, and
    replays it with their event ids: she gets nothing of theirs."""
    api = real_api_for(SSE_MAX_SECONDS=30.0, SSE_KEEPALIVE_SECONDS=0.2)
    a, b, eve = register(api, "alpha"), register(api, "beta"), register(api, "eve")
    watch = Reader(api, eve["token"])
    sb = Reader(api, b["token"])
    table = {"seats": [me(a), me(b)]}
    cid = api.post("/challenges", json=table, headers=bearer(a["token"])).get_json()["challenge_id"]
    seen = [sb.next("challenge")[2]]
    api.post(f"/challenges/{cid}/decline", json={"reason": "later"}, headers=bearer(b["token"]))
    cid = api.post("/challenges", json=table, headers=bearer(a["token"])).get_json()["challenge_id"]
    seen.append(sb.next("challenge")[2])
    gid = api.post(f"/challenges/{cid}/accept", headers=bearer(b["token"])).get_json()["game_id"]
    seen.append(sb.next("game-started")[2])
    api.post(f"/games/{gid}/seats/1/resign", headers=bearer(b["token"]))
    seen.append(sb.next("game-finished")[2])
    sb.close()
    assert watch.quiet() == []
    watch.close()
    assert b"alpha" not in watch.raw and gid.encode() not in watch.raw
    for ident in [*seen, "0-0", "1-0"]:  # their ids on her stream: her own (empty) state
        assert whole(api, eve["token"], ident) == []
    r = api.get("/bots/me/games", headers=bearer(eve["token"]))
    assert r.get_json() == {"games": [], "next_cursor": None}
    # without a bot token, or with a seat's or the admin's, there is no account stream
    for headers in ({}, bearer("rfgb_" + "x" * 43), bearer("not-a-token")):
        r = api.get("/bots/me/events", headers=headers, validate=False)
        assert r.status_code == 401


def test_a_revoked_token_ends_the_events_stream_within_a_keepalive(real_redis: Any) -> None:
    prefix = f"t{uuid.uuid4().hex[:12]}"
    app = make_app(REDIS_URL, STORE_PREFIX=prefix, SSE_MAX_SECONDS=60.0, SSE_KEEPALIVE_SECONDS=0.5)
    try:
        for server in _serve(app):
            a = _register(server, "a")
            events = Follower()
            thread = events.start(server, "/bots/me/events", a["token"])
            _wait_keepalive(events)
            assert events.status == 200 and events.ended is None
            status, _, _ = server.call(
                "DELETE", f"/bots/accounts/{a['account_id']}/token", a["token"]
            )
            revoked = time.monotonic()
            assert status == 204
            thread.join(10)
            assert events.ended is not None, "the stream outlived its token"
            assert events.last() == REVOKED
            # within one keep-alive (0.5 s) and the check after it; far below the 60 s bound
            assert events.ended - revoked < 5
    finally:
        purge_prefix(real_redis, prefix)


def _games(api: ValidatingClient, token: str, **query: Any) -> dict[str, Any]:
    r = api.get("/bots/me/games", query_string=query, headers=bearer(token))
    assert r.status_code == 200, r.get_json()
    assert r.headers["Cache-Control"] == "no-store"
    out: dict[str, Any] = r.get_json()
    return out


def _all(api: ValidatingClient, token: str, **query: Any) -> list[dict[str, Any]]:
    """Every page, following next_cursor."""
    out: list[dict[str, Any]] = []
    cursor = None
    for _ in range(50):
        page = _games(api, token, **query, **({"cursor": cursor} if cursor else {}))
        out += page["games"]
        cursor = page["next_cursor"]
        if cursor is None:
            return out
    raise AssertionError("the pages never end")


def test_my_games_pages_newest_first_by_status(real_api_for: Any) -> None:
    api = real_api_for(MAX_OPEN_CHALLENGES=20)
    a, b = register(api, "alpha"), register(api, "beta")
    gids = []
    for _ in range(5):  # against the built-in bots: each game starts at once
        r = api.post(
            "/challenges",
            json={"seats": [{"kind": "bot", "bot": "heuristic"}, me(a)]},
            headers=bearer(a["token"]),
        )
        assert r.status_code == 201, r.get_json()
        gids.append(r.get_json()["game_id"])
        time.sleep(0.01)  # (distinct seating times; ties are ordered by id anyway)
    for gid in gids[1], gids[3]:
        assert api.post(f"/games/{gid}/seats/1/resign", headers=bearer(a["token"])).status_code
    newest = gids[::-1]
    listed = _all(api, a["token"], limit=2)
    assert [g["game_id"] for g in listed] == newest
    assert [g["game_id"] for g in _all(api, a["token"], limit=1)] == newest
    assert [g["game_id"] for g in _games(api, a["token"], limit=100)["games"]] == newest
    active = _all(api, a["token"], status="active", limit=2)
    assert [g["game_id"] for g in active] == [gids[4], gids[2], gids[0]]
    finished = _all(api, a["token"], status="finished", limit=1)
    assert [g["game_id"] for g in finished] == [gids[3], gids[1]]
    for g in listed:
        gid = g["game_id"]
        assert g["seat"] == 1 and g["rated"] is False and g["ladder"] is None
        assert g["players"] == [
            {"seat": 0, "kind": "bot", "name": "heuristic", "rating": None},
            {
                "seat": 1,
                "kind": "external",
                "name": "alpha",
                "account": a["account_id"],
                "rating": None,
            },
        ]
        assert g["links"]["commands"] == f"/games/{gid}/seats/1/commands"
        if gid in (gids[1], gids[3]):
            assert g["status"] == "finished"
            assert g["result"]["reason"] == "resigned" and g["result"]["winners"] == [0]
        else:
            assert g["status"] == "active" and g["result"] is None
    # another account sees none of them
    assert _games(api, b["token"]) == {"games": [], "next_cursor": None}


def test_my_games_refuses_hostile_queries_naming_the_parameter(real_api_for: Any) -> None:
    api = real_api_for()
    a = register(api, "alpha")
    for query, name in [
        ({"limit": "0"}, "limit"),
        ({"limit": "101"}, "limit"),
        ({"limit": "-1"}, "limit"),
        ({"limit": "1e9"}, "limit"),
        ({"limit": "x"}, "limit"),
        ({"status": "over"}, "status"),
        ({"status": ""}, "status"),
        ({"cursor": "garbage"}, "cursor"),
        ({"cursor": ""}, "cursor"),
        ({"cursor": "1.5_../../x"}, "cursor"),
        ({"cursor": "9" * 301}, "cursor"),
        ({"cursor": "1e308_abc"}, "cursor"),
        ({"bogus": "1"}, "bogus"),
    ]:
        r = api.get(
            "/bots/me/games", query_string=query, headers=bearer(a["token"]), validate=False
        )
        assert r.status_code == 400, (query, r.get_json())
        problem = r.get_json()
        assert problem["type"].endswith("invalid-parameters"), problem
        assert name in problem["errors"], (query, problem)
    r = api.get("/bots/me/games?limit=1&limit=2", headers=bearer(a["token"]), validate=False)
    assert r.status_code == 400 and "limit" in r.get_json()["errors"]
    # a well-formed cursor this account never had: an empty page, no error
    assert _games(api, a["token"], cursor="1.0_abcdef012345") == {"games": [], "next_cursor": None}
    assert api.get("/bots/me/games", validate=False).status_code == 401


def test_games_seated_before_the_ordered_index_are_listed(real_api_for: Any) -> None:
    """Data written before ``:started`` existed: a game only in the account's ``:games`` set."""
    api = real_api_for()
    a = register(api, "alpha")
    app = api.application
    b = app.extensions["rfg"]
    table = {
        "seats": [
            {"kind": "external", "account": a["account_id"]},
            {"kind": "bot", "bot": "random"},
        ]
    }
    old, _ = b.games.create(2, {}, table=table)
    from events.store.accounts import account_games_key

    b.client.sadd(account_games_key(b.store.prefix, a["account_id"]), old)
    b.client.sadd(account_games_key(b.store.prefix, a["account_id"]), "gone0000000")
    r = api.post(
        "/challenges",
        json={"seats": [me(a), {"kind": "bot", "bot": "random"}]},
        headers=bearer(a["token"]),
    )
    new = r.get_json()["game_id"]
    assert [g["game_id"] for g in _all(api, a["token"], limit=1)] == [new, old]
    # the game that is gone left the account's sets
    assert not b.client.sismember(account_games_key(b.store.prefix, a["account_id"]), "gone0000000")


def test_names_and_ratings_reach_challenges_games_and_the_turn_signal(real_api_for: Any) -> None:
    """On a ladder where a and b already played once: the rated challenge's seats, both game-started
    events (live and in the state), the listing and b's turn signal name every seat and give
    each account the rating the ladder's leaderboard shows."""
    from service.api.ladders import ladders as ladders_of

    from .test_open_ladders import make_ladder

    api = real_api_for(SSE_MAX_SECONDS=30.0, SSE_KEEPALIVE_SECONDS=0.3)
    app = api.application
    make_ladder(api, open=True)
    a, b = register(api, "alpha"), register(api, "beta")
    for acct in (a, b):
        r = api.post("/bots/me/ladders", json={"ladder": "main"}, headers=bearer(acct["token"]))
        assert r.status_code == 201, r.get_json()
    rated = {"ladder": "main", "seats": [me(a), me(b)]}

    def accepted() -> str:
        r = api.post("/challenges", json=rated, headers=bearer(a["token"]))
        assert r.status_code == 201, r.get_json()
        r = api.post(
            f"/challenges/{r.get_json()['challenge_id']}/accept", headers=bearer(b["token"])
        )
        assert r.status_code == 200, r.get_json()
        gid: str = r.get_json()["game_id"]
        return gid

    first = accepted()
    assert api.post(f"/games/{first}/seats/1/resign", headers=bearer(b["token"])).status_code
    with app.app_context():
        assert ladders_of().record_finished("main") == 1
    board = {
        r["entrant"]: r["rating"] for r in api.get("/ladders/main/leaderboard").get_json()["rows"]
    }
    ra, rb = board[f"acct.{a['account_id']}"], board[f"acct.{b['account_id']}"]
    assert 0 not in (ra, rb)  # rated: no longer the starting figure (mu - 3 sigma = 0)

    sa, sb = Reader(api, a["token"]), Reader(api, b["token"])
    r = api.post("/challenges", json=rated, headers=bearer(a["token"]))
    seats = r.get_json()["seats"]
    assert [(s["name"], s["rating"]) for s in seats] == [("alpha", ra), ("beta", rb)]
    _, c, _ = sb.next("challenge")
    assert c["seats"] == seats and c["ladder"] == "main"
    r = api.post(f"/challenges/{c['challenge_id']}/accept", headers=bearer(b["token"]))
    gid = r.get_json()["game_id"]
    players = [
        {"seat": 0, "kind": "external", "name": "alpha", "account": a["account_id"], "rating": ra},
        {"seat": 1, "kind": "external", "name": "beta", "account": b["account_id"], "rating": rb},
    ]
    for reader in (sa, sb):
        _, started, _ = reader.next("game-started")
        assert (started["game_id"], started["rated"], started["ladder"]) == (gid, True, "main")
        assert started["players"] == players
    sa.close()
    sb.close()
    state = [d for k, d, _ in whole(api, b["token"], "1-0") if k == "game-started"]
    assert [(d["game_id"], d["players"]) for d in state] == [(gid, players)]
    (listed,) = _games(api, b["token"], status="active")["games"]
    assert (listed["rated"], listed["ladder"], listed["players"]) == (True, "main", players)
    (done,) = _games(api, a["token"], status="finished")["games"]
    assert done["game_id"] == first and done["result"]["reason"] == "resigned"
    # b's seat stream: the turn signal names the table too
    r = api.get(
        f"/games/{gid}/seats/1/events/stream",
        headers=bearer(b["token"]),
        buffered=False,
        validate=False,
    )
    raw = b""
    for chunk in r.response:
        raw += chunk if isinstance(chunk, bytes) else chunk.encode()
        signals = [d for k, d, _ in parse_sse(raw.splitlines(keepends=True)) if k == "decision"]
        if signals:
            break
    r.close()
    CHECK(raw)
    assert json.loads(signals[0])["players"] == players


def test_an_aborted_game_is_a_game_finished_without_winners(real_api_for: Any) -> None:
    api = real_api_for(SSE_MAX_SECONDS=30.0, SSE_KEEPALIVE_SECONDS=0.3)
    a, b = register(api, "alpha"), register(api, "beta")
    sa = Reader(api, a["token"])
    r = api.post("/challenges", json={"seats": [me(a), me(b)]}, headers=bearer(a["token"]))
    r = api.post(f"/challenges/{r.get_json()['challenge_id']}/accept", headers=bearer(b["token"]))
    gid = r.get_json()["game_id"]
    assert sa.next("game-started")[1]["game_id"] == gid
    sa.next("challenge-accepted")
    r = api.post(f"/games/{gid}/seats/1/abort", headers=bearer(b["token"]))
    assert r.status_code in (200, 201), r.get_json()
    _, done, _ = sa.next("game-finished")
    assert (done["game_id"], done["result"]["reason"], done["result"]["winners"]) == (
        gid,
        "aborted",
        [],
    )
    sa.close()


def test_my_games_on_the_embedded_store(api: ValidatingClient) -> None:
    """The same listing on the embedded store (fakeredis), as ``rfg run --memory`` serves it."""
    a = register(api, "alpha")
    r = api.post(
        "/challenges",
        json={"seats": [me(a), {"kind": "bot", "bot": "random"}]},
        headers=bearer(a["token"]),
    )
    gid = r.get_json()["game_id"]
    page = _games(api, a["token"], status="active", limit=1)
    assert [g["game_id"] for g in page["games"]] == [gid] and page["next_cursor"] is None
    assert [g["game_id"] for g in _games(api, a["token"])["games"]] == [gid]


def test_the_state_has_a_game_created_before_its_account_was_seated(real_api_for: Any) -> None:
    """A game's creation writes its game-started notice before the challenge (or the ladder)
    adds it to the account's active games: a bot connecting in between still finds it."""
    api = real_api_for(SSE_MAX_SECONDS=1.0, SSE_KEEPALIVE_SECONDS=0.2)
    a, b = register(api, "alpha"), register(api, "beta")
    games = api.application.extensions["rfg"].games
    table = {"seats": [{"kind": "bot", "bot": "random"}, me(a)]}
    gid, _ = games.create(2, {}, table=table)  # created, its account not seated yet
    state = whole(api, a["token"])
    assert [(k, d["game_id"], d["seat"]) for k, d, _ in state] == [("game-started", gid, 1)]
    assert state[-1][2] is not None  # the state's last event: the id to resume after
    assert whole(api, a["token"], state[-1][2]) == []  # and nothing twice after it
    assert whole(api, b["token"]) == []


def test_a_ladder_game_whose_summary_predates_its_ladder_field_is_still_rated(
    real_api_for: Any,
) -> None:
    """A game stored before the lobby summary named its ladder: the ladder's own record of its
    games says which it is."""
    from service.api.ladders import ladders as ladders_of

    from .test_open_ladders import make_ladder

    api = real_api_for()
    app = api.application
    make_ladder(api, name="old", open=True)
    a, b = register(api, "alpha"), register(api, "beta")
    for acct in (a, b):
        api.post("/bots/me/ladders", json={"ladder": "old"}, headers=bearer(acct["token"]))
    with app.app_context():
        (gid,) = ladders_of().schedule("old", rng_seed="s")
    back = app.extensions["rfg"]
    key = back.store.keys(gid)[3]
    pos, _, text = back.client.hget(key, "summary").decode().partition(":")
    summary = json.loads(text)
    assert summary.pop("ladder") == "old"
    back.client.hset(key, "summary", f"{pos}:{json.dumps(summary)}")
    (g,) = _games(api, a["token"])["games"]
    assert (g["game_id"], g["rated"], g["ladder"]) == (gid, True, "old")
    assert all(p["rating"] is not None for p in g["players"])
