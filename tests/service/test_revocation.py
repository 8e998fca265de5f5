"""Revoking and rotating tokens, over a real HTTP server on the real Redis: a revoked bot token's
open streams (its seat's event stream and its decisions stream) end, saying why, long before their
bound (60 s: the token is checked at every keep-alive); a seat token rotated by its holder or the
admin stops working at once - in every server process, and its open stream ends too; a rotated
bot token likewise, its account (id, ladder entries, ratings) kept."""

from __future__ import annotations

import http.client
import json
import threading
import time
import uuid
from collections.abc import Iterator
from dataclasses import dataclass, field
from typing import Any

import pytest
from flask import Flask
from werkzeug.serving import BaseWSGIServer, make_server

from ladder.service import LadderConfig
from tests.conftest import REDIS_URL

from .conftest import ADMIN, make_app
from .test_bot_accounts import external_game, ladders_of

KEEPALIVE = 0.5


@dataclass
class Server:
    host: str
    port: int
    app: Flask

    def call(
        self, method: str, path: str, token: str | None = None, body: Any = None
    ) -> tuple[int, Any, dict[str, str]]:
        conn = http.client.HTTPConnection(self.host, self.port, timeout=10)
        headers = {"Authorization": f"Bearer {token}"} if token else {}
        data = None
        if body is not None:
            data = json.dumps(body).encode()
            headers["Content-Type"] = "application/json"
        try:
            conn.request(method, path, body=data, headers=headers)
            resp = conn.getresponse()
            raw = resp.read()
            return resp.status, json.loads(raw) if raw else None, dict(resp.getheaders())
        finally:
            conn.close()


@dataclass
class Follower:
    """Reads an SSE stream in a thread, noting when each line came and when the stream ended."""

    lines: list[tuple[float, str]] = field(default_factory=list)
    ended: float | None = None
    status: int | None = None

    def start(self, srv: Server, path: str, token: str) -> threading.Thread:
        def run() -> None:
            conn = http.client.HTTPConnection(srv.host, srv.port, timeout=60)
            conn.request("GET", path, headers={"Authorization": f"Bearer {token}"})
            resp = conn.getresponse()
            self.status = resp.status
            while True:
                line = resp.readline()
                if not line:
                    break
                self.lines.append((time.monotonic(), line.decode().rstrip("\n")))
            self.ended = time.monotonic()
            conn.close()

        thread = threading.Thread(target=run, daemon=True)
        thread.start()
        return thread

    def last(self) -> str | None:
        """The stream's last line with something on it."""
        return next((line for _, line in reversed(self.lines) if line), None)

    def after(self, t: float) -> list[str]:
        return [line for at, line in self.lines if at > t and line]


def _serve(app: Flask) -> Iterator[Server]:
    srv: BaseWSGIServer = make_server("127.0.0.1", 0, app, threaded=True)
    thread = threading.Thread(target=srv.serve_forever, daemon=True)
    thread.start()
    yield Server("127.0.0.1", srv.server_port, app)
    srv.shutdown()
    thread.join(5)


@pytest.fixture
def prefix(real_redis: Any) -> Iterator[str]:
    p = f"t{uuid.uuid4().hex[:12]}"
    yield p
    keys = list(real_redis.scan_iter(match=f"{p}:*", count=1000))
    if keys:
        real_redis.delete(*keys)


def _app(prefix: str) -> Flask:
    return make_app(
        REDIS_URL, STORE_PREFIX=prefix, SSE_MAX_SECONDS=60.0, SSE_KEEPALIVE_SECONDS=KEEPALIVE
    )


@pytest.fixture
def server(prefix: str) -> Iterator[Server]:
    yield from _serve(_app(prefix))


@pytest.fixture
def second(prefix: str) -> Iterator[Server]:
    """Another server process on the same store."""
    yield from _serve(_app(prefix))


def _register(srv: Server, name: str) -> dict[str, Any]:
    status, body, _ = srv.call(
        "POST", "/bots/accounts", body={"name": name, "description": "d", "contact": "c"}
    )
    assert status == 201
    out: dict[str, Any] = body
    return out


REVOKED = ": the token of this stream was revoked"


def _wait_keepalive(*followers: Follower) -> None:
    deadline = time.monotonic() + 10
    while not all(any(line == ": keep-alive" for _, line in f.lines) for f in followers):
        assert time.monotonic() < deadline, "no keep-alive on the streams"
        time.sleep(0.05)


def _wait_started(*followers: Follower) -> None:
    deadline = time.monotonic() + 10
    while not all(f.lines for f in followers):
        assert time.monotonic() < deadline, "the streams did not start"
        time.sleep(0.05)


def test_revoking_a_bot_token_ends_its_open_streams(server: Server) -> None:
    a, b = _register(server, "a"), _register(server, "b")
    gid = external_game(server.app, a["account_id"], b["account_id"])
    seat_stream, decisions = Follower(), Follower()
    threads = [
        seat_stream.start(server, f"/games/{gid}/seats/0/events/stream", a["token"]),
        decisions.start(server, "/bots/me/decisions/stream", a["token"]),
    ]
    _wait_started(seat_stream, decisions)
    _wait_keepalive(seat_stream, decisions)  # both are open and idle, sending keep-alives
    assert seat_stream.ended is None and decisions.ended is None
    assert seat_stream.status == 200 and decisions.status == 200

    status, _, _ = server.call("DELETE", f"/bots/accounts/{a['account_id']}/token", a["token"])
    revoked = time.monotonic()
    assert status == 204
    for t in threads:
        t.join(10)
    for f in (seat_stream, decisions):
        assert f.ended is not None, "the stream outlived its token"
        assert f.last() == REVOKED, "the stream ends saying why"
        assert not [x for x in f.after(revoked) if not x.startswith(":")], (
            "no frames after revocation"
        )
    assert server.call("GET", f"/games/{gid}/seats/0/view", a["token"])[0] == 401
    # the other account's token is untouched
    assert server.call("GET", f"/games/{gid}/seats/1/view", b["token"])[0] == 200


def test_a_seat_token_rotated_by_its_holder_stops_working_at_once_everywhere(
    server: Server, second: Server
) -> None:
    status, game, _ = server.call("POST", "/games", body={"seats": [{"kind": "human"}] * 3})
    gid = game["game_id"]
    tokens = {s: server.call("POST", f"/games/{gid}/seats/{s}/claim")[1]["token"] for s in (0, 1)}
    view = f"/games/{gid}/seats/0/view"
    # both processes have served the old token
    assert (
        server.call("GET", view, tokens[0])[0] == 200
        and second.call("GET", view, tokens[0])[0] == 200
    )
    stream = Follower()
    thread = stream.start(server, f"/games/{gid}/seats/0/events/stream", tokens[0])
    _wait_started(stream)

    status, body, headers = server.call("POST", f"/games/{gid}/seats/0/token", tokens[0])
    assert status == 201 and headers["Cache-Control"] == "no-store"
    new = body["token"]
    assert new != tokens[0] and body["seat"] == 0 and body["token_type"] == "Bearer"
    assert headers["Location"] == view
    # the old token: refused at once, by this process and by the other one
    for srv in (server, second):
        status, problem, _ = srv.call("GET", view, tokens[0])
        assert status == 401 and problem["type"] == "/problems/unauthorized"
        assert (
            srv.call(
                "POST",
                f"/games/{gid}/seats/0/commands",
                tokens[0],
                {"command_id": "x", "command": {"kind": "start_tiles", "development": 1}},
            )[0]
            == 401
        )
        assert srv.call("GET", view, new)[0] == 200
    # the stream it had open ends (its bound is 60 s), saying why
    thread.join(10)
    assert stream.ended is not None and stream.last() == REVOKED
    # the old token cannot rotate again; another seat's token cannot rotate this seat; none is 401
    assert server.call("POST", f"/games/{gid}/seats/0/token", tokens[0])[0] == 401
    assert server.call("POST", f"/games/{gid}/seats/0/token", tokens[1])[0] == 403
    status, problem, _ = server.call("POST", f"/games/{gid}/seats/0/token")
    assert status == 401 and "claim" in problem["detail"]
    assert server.call("GET", f"/games/{gid}/seats/1/view", tokens[1])[0] == 200


def test_the_admin_rotates_any_claimed_seat(server: Server) -> None:
    _, game, _ = server.call("POST", "/games", body={"seats": [{"kind": "human"}] * 3})
    gid = game["game_id"]
    lost = server.call("POST", f"/games/{gid}/seats/1/claim")[1]["token"]
    status, body, _ = server.call("POST", f"/games/{gid}/seats/1/token", ADMIN)
    assert status == 201
    assert server.call("GET", f"/games/{gid}/seats/1/view", lost)[0] == 401
    assert server.call("GET", f"/games/{gid}/seats/1/view", body["token"])[0] == 200
    # a seat nobody claimed has no token to rotate; no such seat, no such game
    status, problem, _ = server.call("POST", f"/games/{gid}/seats/2/token", ADMIN)
    assert status == 409 and "claim" in problem["detail"]
    assert server.call("POST", f"/games/{gid}/seats/7/token", ADMIN)[0] == 404
    assert server.call("POST", "/games/nope/seats/0/token", ADMIN)[0] == 404


def test_a_bot_token_is_not_rotated_as_a_seat_token(server: Server) -> None:
    a, b = _register(server, "a"), _register(server, "b")
    gid = external_game(server.app, a["account_id"], b["account_id"])
    status, problem, _ = server.call("POST", f"/games/{gid}/seats/0/token", a["token"])
    assert status == 403 and "DELETE /bots/accounts" in problem["detail"]


def test_rotating_a_bot_token_keeps_the_account_and_ends_the_old_tokens_streams(
    server: Server,
) -> None:
    a, b = _register(server, "a"), _register(server, "b")
    old, account = a["token"], a["account_id"]
    ladders = ladders_of(server.app)
    ladders.create(LadderConfig("rot", players=[2]))
    ladders.add_entrant("rot", "a-bot", account=account)
    ladders.add_entrant("rot", "b-bot", account=b["account_id"])
    ladders.record(
        "rot",
        "g1",
        ["a-bot", "b-bot"],
        [{"total": 30, "tiebreak": 2}, {"total": 20, "tiebreak": 1}],
    )
    board = ladders.leaderboard("rot")
    gid = external_game(server.app, account, b["account_id"])
    decisions, seat_stream, account_events = Follower(), Follower(), Follower()
    thread = decisions.start(server, "/bots/me/decisions/stream", old)
    seat_thread = seat_stream.start(server, f"/games/{gid}/seats/0/events/stream", old)
    events_thread = account_events.start(server, "/bots/me/events", old)
    _wait_started(decisions, seat_stream, account_events)
    _wait_keepalive(decisions, seat_stream, account_events)

    status, body, headers = server.call("POST", "/bots/me/token", old)
    rotated = time.monotonic()
    assert status == 200, body
    assert headers["Cache-Control"] == "no-store"
    new = body["token"]
    assert new.startswith("rfgb_") and new != old and len(new) >= 5 + 43
    assert body["account_id"] == account and body["token_type"] == "Bearer"
    assert body["links"]["self"] == f"/bots/accounts/{account}"
    # the old token: refused at once (its next request), the new one works, same account
    status, problem, _ = server.call("GET", "/bots/me", old)
    assert status == 401 and problem["type"] == "/problems/unauthorized"
    status, me, _ = server.call("GET", "/bots/me", new)
    assert status == 200 and me["account_id"] == account and me["active"]
    # the decisions stream opened with the old token ends within one keep-alive, saying why
    thread.join(10)
    assert decisions.ended is not None, "the stream outlived its token"
    # (the credential is checked at each keep-alive: measured here 0.45-0.49 s for 0.5 s)
    assert decisions.ended - rotated <= KEEPALIVE + 0.25, decisions.ended - rotated
    assert decisions.last() == REVOKED
    for t, f in ((seat_thread, seat_stream), (events_thread, account_events)):
        t.join(10)
        assert f.ended is not None and f.last() == REVOKED
        assert f.ended - rotated <= KEEPALIVE + 0.25, f.ended - rotated
    # the account's seat is the new token's
    assert server.call("GET", f"/games/{gid}/seats/0/view", new)[0] == 200
    assert server.call("GET", f"/games/{gid}/seats/0/view", old)[0] == 401
    # its ladder entry and rating are the account's still
    assert ladders.entrants("rot")["a-bot"]["account"] == account
    assert ladders.leaderboard("rot") == board
    # the old token cannot rotate again, nor can no token, a seat token or the admin token
    assert server.call("POST", "/bots/me/token", old)[0] == 401
    assert server.call("POST", "/bots/me/token")[0] == 401
    assert server.call("POST", "/bots/me/token", ADMIN)[0] == 401
    # another account rotates only its own token: a's new one keeps working
    status, other, _ = server.call("POST", "/bots/me/token", b["token"])
    assert status == 200 and other["account_id"] == b["account_id"]
    assert server.call("GET", "/bots/me", new)[1]["account_id"] == account
    assert server.call("GET", f"/bots/accounts/{account}", other["token"])[0] == 403
    assert server.call("DELETE", f"/bots/accounts/{account}/token", other["token"])[0] == 403
    assert server.call("GET", "/bots/me", new)[0] == 200


def test_racing_rotations_with_one_token_leave_one_live_token(server: Server) -> None:
    a = _register(server, "a")
    answers: list[tuple[int, Any]] = []
    barrier = threading.Barrier(6)

    def rotate() -> None:
        barrier.wait()
        status, body, _ = server.call("POST", "/bots/me/token", a["token"])
        answers.append((status, body))

    threads = [threading.Thread(target=rotate) for _ in range(6)]
    for t in threads:
        t.start()
    for t in threads:
        t.join(10)
    won = [body["token"] for status, body in answers if status == 200]
    assert len(won) == 1, answers
    assert sorted(s for s, _ in answers) == [200] + [401] * 5
    assert server.call("GET", "/bots/me", won[0])[0] == 200
    assert server.call("GET", "/bots/me", a["token"])[0] == 401


def test_revoking_after_a_rotation_ends_the_new_token(server: Server) -> None:
    a = _register(server, "a")
    new = server.call("POST", "/bots/me/token", a["token"])[1]["token"]
    assert server.call("DELETE", f"/bots/accounts/{a['account_id']}/token", ADMIN)[0] == 204
    assert server.call("GET", "/bots/me", new)[0] == 401
    assert server.call("POST", "/bots/me/token", new)[0] == 401


def test_rotations_are_limited_per_address(prefix: str) -> None:
    app = make_app(REDIS_URL, STORE_PREFIX=prefix, RATE_LIMITS=True, LIMIT_CLAIM="2 per minute")
    for srv in _serve(app):
        token = _register(srv, "a")["token"]
        for _ in range(2):
            status, body, _ = srv.call("POST", "/bots/me/token", token)
            assert status == 200
            token = body["token"]
        status, problem, headers = srv.call("POST", "/bots/me/token", token)
        assert status == 429 and problem["limit"] == "claims", problem
        assert int(headers["Retry-After"]) >= 1
        assert srv.call("GET", "/bots/me", token)[0] == 200, "a refused rotation changes nothing"


@pytest.mark.parametrize("how", ["move", "reinvite"])
def test_a_moved_or_reinvited_seat_signs_the_old_device_out_everywhere(
    server: Server, second: Server, how: str
) -> None:
    _, game, _ = server.call("POST", "/games", body={"seats": [{"kind": "human"}] * 3})
    gid = game["game_id"]
    host = server.call("POST", f"/games/{gid}/seats/0/claim")[1]["token"]
    old = server.call("POST", f"/games/{gid}/seats/1/claim", body={"name": "Grace"})[1]["token"]
    view = f"/games/{gid}/seats/1/view"
    assert server.call("GET", view, old)[0] == 200 and second.call("GET", view, old)[0] == 200
    stream = Follower()
    thread = stream.start(server, f"/games/{gid}/seats/1/events/stream", old)
    _wait_started(stream)
    _wait_keepalive(stream)

    if how == "move":
        status, body, _ = server.call("POST", f"/games/{gid}/seats/1/move", old)
        assert status == 201
        assert second.call("GET", view, old)[0] == 200  # signed in until the code is used
        status, claimed, _ = second.call(
            "POST", f"/games/{gid}/seats/1/claim", body={"move": body["move"]}
        )
    else:
        status, body, _ = server.call(
            "POST", f"/games/{gid}/seats/1/invite", host, {"replace": True}
        )
        assert status == 201
        assert second.call("GET", view, old)[0] == 401  # revoked with the new invite
        status, claimed, _ = second.call(
            "POST", f"/games/{gid}/seats/1/claim", body={"invite": body["invite"]}
        )
    assert status == 201
    for srv in (server, second):
        assert srv.call("GET", view, old)[0] == 401
        assert srv.call("GET", view, claimed["token"])[0] == 200
    thread.join(10)
    assert stream.ended is not None and stream.last() == REVOKED
    assert server.call("GET", f"/games/{gid}", None)[1]["seats"][1]["name"] == "Grace"
