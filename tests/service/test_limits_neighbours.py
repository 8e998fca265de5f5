"""A neighbour cannot turn the limits against a valid token: over a real HTTP server on the real
Redis, limits on, one address sends 1,000 requests with unknown tokens while, from the same
address, a seat token and a bot token play their games. The unknown tokens get 401 up to the
bad-token limit, then 429; the valid tokens never meet a 429, though the flood spends the
address's general limit too (its requests without a token are refused by then)."""

from __future__ import annotations

import http.client
import json
import secrets
import threading
import uuid
from collections import Counter
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from typing import Any

import pytest
import redis
from flask import Flask
from werkzeug.serving import BaseWSGIServer, make_server

from bots import get_bot
from engine.rng import Rng
from tests.conftest import REDIS_URL

from .conftest import ValidatingClient, bearer, make_app, new_game
from .test_limits import limited as _limited

pytestmark = pytest.mark.redis
limited = _limited  # the fixture: API clients on the real Redis, limits on

GUESSES = 1000
BAD_TOKENS = 20
PER_ADDRESS = 300


@dataclass
class Answer:
    status_code: int
    body: Any

    def get_json(self) -> Any:
        return self.body


class Http:
    """A client of the server on one keep-alive connection, noting every status it gets."""

    def __init__(self, port: int) -> None:
        self.conn = http.client.HTTPConnection("127.0.0.1", port, timeout=30)
        self.statuses: Counter[int] = Counter()

    def call(self, method: str, path: str, token: str | None = None, body: Any = None) -> Answer:
        headers = {"Authorization": f"Bearer {token}"} if token else {}
        data = None
        if body is not None:
            data = json.dumps(body).encode()
            headers["Content-Type"] = "application/json"
        self.conn.request(method, path, body=data, headers=headers)
        resp = self.conn.getresponse()
        raw = resp.read()
        self.statuses[resp.status] += 1
        return Answer(resp.status, json.loads(raw) if raw else None)

    def close(self) -> None:
        self.conn.close()


@pytest.fixture
def server(real_redis: Any) -> Iterator[tuple[Flask, int]]:
    prefix = f"t{uuid.uuid4().hex[:12]}"
    app = make_app(
        REDIS_URL,
        STORE_PREFIX=prefix,
        RATE_LIMITS=True,
        LIMIT_PER_ADDRESS=f"{PER_ADDRESS} per minute",
        LIMIT_BAD_TOKENS=f"{BAD_TOKENS} per minute",
    )
    srv: BaseWSGIServer = make_server("127.0.0.1", 0, app, threaded=True)
    thread = threading.Thread(target=srv.serve_forever, daemon=True)
    thread.start()
    yield app, srv.server_port
    srv.shutdown()
    thread.join(5)
    keys = list(real_redis.scan_iter(match=f"{prefix}:*", count=1000))
    if keys:
        real_redis.delete(*keys)


def _play(client: Http, gid: str, tokens: dict[int, str], commands: int, seed: int) -> int:
    """Play ``commands`` commands of a game (or to its end), every request with a seat's token:
    the public view for who is pending, the seat's view, the command."""
    rng, bot = Rng(seed), get_bot("random")
    any_token = tokens[min(tokens)]
    for n in range(commands):
        pub = client.call("GET", f"/games/{gid}/view", any_token)
        assert pub.status_code == 200, pub.body
        if pub.body["view"]["step"] == "over":
            return n
        seat = min(int(s) for s in pub.body["view"]["pending"])
        sv = client.call("GET", f"/games/{gid}/seats/{seat}/view", tokens[seat])
        assert sv.status_code == 200, sv.body
        view = sv.body["view"]
        command = bot.act(view["decision"], view if bot.needs_view else None, rng)
        body = {
            "command_id": uuid.uuid4().hex,
            "expected_version": sv.body["version"],
            "command": command,
        }
        r = client.call("POST", f"/games/{gid}/seats/{seat}/commands", tokens[seat], body)
        assert r.status_code == 201, r.body
    return commands


def _flood(port: int, gid: str, out: dict[str, Counter[int]], errors: list[BaseException]) -> None:
    """``GUESSES`` requests, each with a new unknown token, at the routes a valid token uses:
    those that check it (``out["checked"]``), and a public read (``out["public"]``)."""
    client = Http(port)
    paths = [
        ("checked", "GET", f"/games/{gid}/seats/0/view", None),
        ("checked", "POST", f"/games/{gid}/seats/1/commands", {"command_id": "x"}),
        ("checked", "GET", "/bots/me", None),
        ("public", "GET", f"/games/{gid}/view", None),
    ]
    try:
        for i in range(GUESSES):
            kind, method, path, body = paths[i % len(paths)]
            r = client.call(method, path, secrets.token_urlsafe(32), body)
            out[kind][r.status_code] += 1
    except BaseException as exc:  # noqa: BLE001 - reported by the test
        errors.append(exc)
    finally:
        client.close()


def test_unknown_tokens_from_an_address_do_not_hold_back_its_valid_tokens(
    server: tuple[Flask, int],
) -> None:
    app, port = server
    setup = Http(port)
    # a game of two human seats, claimed from this address: two seat tokens
    r = setup.call("POST", "/games", body={"seats": [{"kind": "human"}] * 2})
    assert r.status_code == 201, r.body
    human = r.body["game_id"]
    seat_tokens = {
        s: setup.call("POST", f"/games/{human}/seats/{s}/claim").body["token"] for s in (0, 1)
    }
    # a bot account, seated at both seats of a game of its own: one bot token
    r = setup.call("POST", "/bots/accounts", body={"name": "b", "description": "d", "contact": "c"})
    assert r.status_code == 201, r.body
    account, bot_token = r.body["account_id"], r.body["token"]
    games = app.extensions["rfg"].games
    table = {"seats": [{"kind": "external", "account": account, "entrant": e} for e in "ab"]}
    bot_game, _ = games.create(2, {}, seed="neighbours", table=table)
    setup.close()

    flood: dict[str, Counter[int]] = {"checked": Counter(), "public": Counter()}
    errors: list[BaseException] = []
    neighbour = threading.Thread(target=_flood, args=(port, human, flood, errors))
    seat_player, bot_player = Http(port), Http(port)
    neighbour.start()
    played = 0
    while neighbour.is_alive():
        played += _play(seat_player, human, seat_tokens, 5, seed=played)
        played += _play(bot_player, str(bot_game), {0: bot_token, 1: bot_token}, 5, seed=played)
    neighbour.join()
    # and after the flood, both still play
    played += _play(seat_player, human, seat_tokens, 10, seed=1)
    played += _play(bot_player, str(bot_game), {0: bot_token, 1: bot_token}, 10, seed=2)

    assert not errors, errors
    # the unknown tokens: 401 up to the limit, then 429; on a public read, what a request
    # without a token gets: 200 until the address's general limit is spent, then 429
    checked, public = flood["checked"], flood["public"]
    assert sum(checked.values()) == GUESSES * 3 // 4 and sum(public.values()) == GUESSES // 4
    assert checked[401] == BAD_TOKENS and checked[429] == GUESSES * 3 // 4 - BAD_TOKENS, flood
    assert set(public) == {200, 429} and public[200] < PER_ADDRESS, flood
    # the valid tokens: not one 429 (every answer a 200 or a 201)
    assert played >= 20
    for player in (seat_player, bot_player):
        assert set(player.statuses) <= {200, 201}, player.statuses
    # though the address's general limit is spent: a request without a token is refused
    anonymous = Http(port)
    r = anonymous.call("GET", f"/games/{human}")
    assert r.status_code == 429 and r.body["limit"] == "per-address", r.body
    anonymous.close()
    seat_player.close()
    bot_player.close()


class _CountingConnection(redis.Connection):
    """A connection that counts its round trips: each write of commands (a pipeline's too)."""

    trips = 0

    def send_packed_command(self, command: Any, check_health: bool = True) -> None:
        type(self).trips += 1
        super().send_packed_command(command, check_health)


def test_what_a_request_costs_past_its_addresss_limit(
    limited: Callable[..., ValidatingClient],
) -> None:
    """Past its address's general limit, a request with an unknown token costs two round trips
    (the limits, the look-up of its token) and no view; with a valid token, that look-up more
    than below the limit; without a token, one."""
    api = limited(LIMIT_PER_ADDRESS="6 per minute", LIMIT_BAD_TOKENS="100 per minute")
    pool = api.application.extensions["rfg"].client.connection_pool
    pool.connection_class = _CountingConnection  # the app's client: limits, tokens, the store
    pool.disconnect()
    gid, tokens = new_game(api, players=2)  # 3 requests without a token

    def trips(path: str, token: str | None, status: int) -> int:
        before = _CountingConnection.trips
        r = api.get(path, headers=bearer(token) if token else {}, validate=False)
        assert r.status_code == status, (path, r.status_code, r.get_json())
        return _CountingConnection.trips - before

    view, public = f"/games/{gid}/seats/0/view", f"/games/{gid}"
    below = {
        "valid": trips(view, tokens[0], 200),
        "public": trips(public, tokens[0], 200),
        "unknown": trips(view, "guess-0", 401),
    }
    assert trips(public, None, 429) == 1  # the address's limit is spent
    past = {
        "valid": trips(view, tokens[0], 200),
        "public": trips(public, tokens[0], 200),
        "unknown": trips(view, "guess-1", 429),
    }
    assert trips(public, "guess-2", 429) == 2
    assert past["unknown"] == 2, past  # the limits, the look-up: no view, no count
    assert below["unknown"] >= 3, below  # the limits, the view's look-up, the count
    assert past["valid"] == below["valid"] + 1 and past["public"] == below["public"] + 1


def test_a_neighbour_in_the_same_ipv6_64_cannot_hold_back_a_valid_token(
    limited: Callable[..., ValidatingClient],
) -> None:
    api = limited(LIMIT_PER_ADDRESS="30 per minute", LIMIT_BAD_TOKENS="5 per minute")
    gid, tokens = new_game(api, players=2)
    mine = {"REMOTE_ADDR": "2001:db8:77:1::10"}
    theirs = [{"REMOTE_ADDR": f"2001:db8:77:1:{i:x}::1"} for i in range(1, 200)]
    view = f"/games/{gid}/seats/0/view"
    got: Counter[int] = Counter()
    for i, addr in enumerate(theirs):
        got[
            api.get(
                view, headers=bearer(f"guess-{i}"), environ_base=addr, validate=False
            ).status_code
        ] += 1
        r = api.get(view, headers=bearer(tokens[0]), environ_base=mine, validate=False)
        assert r.status_code == 200, (i, r.get_json())
    assert got == {401: 5, 429: len(theirs) - 5}, got
    # the /64 is locked out and past its limit: requests without a token are refused there ...
    r = api.get(f"/games/{gid}", environ_base=mine, validate=False)
    assert r.status_code == 429 and "2001:db8:77:1::/64" in r.get_json()["detail"]
    # ... and not in the next /64
    assert (
        api.get(
            view,
            headers=bearer("guess-x"),
            environ_base={"REMOTE_ADDR": "2001:db8:77:2::1"},
            validate=False,
        ).status_code
        == 401
    )
