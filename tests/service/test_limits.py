"""Limits against abuse and game retention, with the limits on and kept in the real Redis (the
other API tests turn them off): per-address and per-token rates answered with 429 problem+json,
``Retry-After`` and ``RateLimit``/``RateLimit-Policy`` headers; refused tokens throttle their
address's refused tokens, never its valid ones; concurrent streams and unfinished games per address are capped; games nobody claimed
expire with every key they hold and leave every index, finished games are kept (or expire after
``FINISHED_GAME_SECONDS``)."""

from __future__ import annotations

import re
import time
import uuid
from collections.abc import Callable, Iterator
from typing import Any

import pytest
from flask import Flask
from openapi_core import OpenAPI

import engine
from engine.rng import Rng
from service.config import resolve
from tests.conftest import REDIS_URL
from workers.policy import bot_command

from .conftest import ADMIN, ValidatingClient, _client, bearer, make_app, new_game, play_http

SEATS = {"seats": [{"kind": "human"}, {"kind": "human"}]}


@pytest.fixture
def limited(real_redis: Any, openapi: OpenAPI) -> Iterator[Callable[..., ValidatingClient]]:
    """A factory of API clients on the real Redis, limits on, each with its own key prefix."""
    prefixes: list[str] = []

    def make(**config: Any) -> ValidatingClient:
        prefix = f"t{uuid.uuid4().hex[:12]}"
        prefixes.append(prefix)
        app: Flask = make_app(REDIS_URL, STORE_PREFIX=prefix, RATE_LIMITS=True, **config)
        client = _client(app, openapi)
        client.prefix = prefix  # type: ignore[attr-defined]
        return client

    yield make
    for prefix in prefixes:
        keys = list(real_redis.scan_iter(match=f"{prefix}:*", count=1000))
        if keys:
            real_redis.delete(*keys)


def _too_many(r: Any, limit: str) -> dict[str, Any]:
    assert r.status_code == 429, (r.status_code, r.get_data()[:300])
    assert r.mimetype == "application/problem+json"
    p: dict[str, Any] = r.get_json()
    assert p["limit"] == limit, p
    wait = int(r.headers["Retry-After"])
    assert 1 <= wait <= 3600 and p["retry_after"] == wait
    assert "retry" in p["detail"] or "close one" in p["detail"] or "finish" in p["detail"]
    return p


def _policy(r: Any) -> tuple[str, int, int]:
    m = re.fullmatch(r'"([a-z-]+)";q=(\d+);w=(\d+)', r.headers["RateLimit-Policy"])
    assert m, r.headers.get("RateLimit-Policy")
    assert re.fullmatch(r'"[a-z-]+";r=\d+;t=\d+', r.headers["RateLimit"])
    return m.group(1), int(m.group(2)), int(m.group(3))


def test_game_creation_is_limited_per_address_with_headers(
    limited: Callable[..., ValidatingClient], real_redis: Any
) -> None:
    api = limited(LIMIT_CREATE_GAME="3 per minute")
    for i in range(3):
        r = api.post("/games", json=SEATS)
        assert r.status_code == 201
        assert _policy(r) == ("create-game", 3, 60)
        assert (
            r.headers["RateLimit"]
            == f'"create-game";r={2 - i};t={r.headers["RateLimit"].rsplit("=", 1)[1]}'
        )
    r = api.post("/games", json=SEATS)
    p = _too_many(r, "create-game")
    assert "3 per 1 minute" in p["detail"] and _policy(r)[0] == "create-game"
    assert len(api.get("/games").get_json()["items"]) == 3, "the refused request created nothing"
    # another address has its own count; the admin is not limited
    # (validate=False: the validating client does not pass environ_base on)
    other = api.post(
        "/games", json=SEATS, environ_base={"REMOTE_ADDR": "192.0.2.9"}, validate=False
    )
    assert other.status_code == 201
    assert api.post("/games", json=SEATS, headers=bearer(ADMIN)).status_code == 201
    # the counters are on the store, under the app's prefix
    assert list(real_redis.scan_iter(match=f"{api.prefix}:limits:*"))  # type: ignore[attr-defined]


def test_every_request_of_an_address_counts_but_health_checks(
    limited: Callable[..., ValidatingClient],
) -> None:
    api = limited(LIMIT_PER_ADDRESS="5 per minute")
    for _ in range(5):
        r = api.get("/catalogue")
        assert r.status_code == 200 and _policy(r) == ("per-address", 5, 60)
    _too_many(api.get("/games"), "per-address")
    _too_many(api.get("/bots"), "per-address")
    assert api.get("/healthz").status_code == 200 and api.get("/readyz").status_code == 200


def test_bot_registration_claims_and_replay_uploads_are_limited(
    limited: Callable[..., ValidatingClient],
) -> None:
    api = limited(
        LIMIT_REGISTER_BOT="2 per minute",
        LIMIT_CLAIM="3 per minute",
        LIMIT_REPLAY_UPLOADS="1 per minute",
    )
    body = {"name": "b", "description": "d", "contact": "c"}
    assert [api.post("/bots/accounts", json=body).status_code for _ in range(2)] == [201, 201]
    _too_many(api.post("/bots/accounts", json=body), "register-bot")
    gid, _ = new_game(api, players=4, claim=False)
    assert [api.post(f"/games/{gid}/seats/{s}/claim").status_code for s in range(3)] == [201] * 3
    _too_many(api.post(f"/games/{gid}/seats/3/claim"), "claims")
    assert api.post("/replays/verify", data=b"{}\n", content_type="text/plain").status_code == 200
    _too_many(
        api.post("/replays/verify", data=b"{}\n", content_type="text/plain"), "replay-uploads"
    )


def test_commands_are_limited_per_token(limited: Callable[..., ValidatingClient]) -> None:
    api = limited(LIMIT_COMMANDS="2 per minute")
    gid, tokens = new_game(api, players=2)
    for i in range(2):
        r = api.post(
            f"/games/{gid}/seats/0/commands",
            headers=bearer(tokens[0]),
            json={"command_id": f"c{i}", "command": {"kind": "start_tiles", "development": 1}},
        )
        assert r.status_code in (201, 422) and _policy(r)[0] == "commands"
    r = api.post(
        f"/games/{gid}/seats/0/commands",
        headers=bearer(tokens[0]),
        json={"command_id": "c9", "command": {"kind": "start_tiles", "development": 1}},
    )
    assert "this token" in _too_many(r, "commands")["detail"]
    # the other seat's token (same address) has its own budget
    r = api.post(
        f"/games/{gid}/seats/1/commands",
        headers=bearer(tokens[1]),
        json={"command_id": "d0", "command": {"kind": "start_tiles", "development": 1}},
    )
    assert r.status_code in (201, 422)


def test_a_bot_token_has_a_seat_tokens_quota_in_each_game(
    limited: Callable[..., ValidatingClient],
) -> None:
    """A bot playing game after game (its challenges) is limited per game, as seat tokens are."""
    api = limited(LIMIT_COMMANDS="2 per minute")
    r = api.post("/bots/accounts", json={"name": "b", "description": "t", "contact": "a@b.c"})
    bot = r.get_json()
    table = {
        "seats": [
            {"kind": "external", "account": bot["account_id"]},
            {"kind": "bot", "bot": "random"},
        ]
    }
    games = [
        api.post("/challenges", json=table, headers=bearer(bot["token"])).get_json()["game_id"]
        for _ in range(2)
    ]
    cmd = {"kind": "start_tiles", "development": 1}
    for i in range(2):
        r = api.post(
            f"/games/{games[0]}/seats/0/commands",
            headers=bearer(bot["token"]),
            json={"command_id": f"c{i}", "command": cmd},
        )
        assert r.status_code in (201, 409, 422) and _policy(r)[0] == "commands"
    r = api.post(
        f"/games/{games[0]}/seats/0/commands",
        headers=bearer(bot["token"]),
        json={"command_id": "c9", "command": cmd},
    )
    assert f"in game {games[0]}" in _too_many(r, "commands")["detail"]
    r = api.post(
        f"/games/{games[1]}/seats/0/commands",
        headers=bearer(bot["token"]),
        json={"command_id": "d0", "command": cmd},
    )
    assert r.status_code in (201, 409, 422), r.get_json()


def test_the_tightest_limit_is_the_one_reported(limited: Callable[..., ValidatingClient]) -> None:
    """The headers name the limit with the least left - here the per-token one under a
    roomier route limit - so a client that waits once ``r`` is 0 needs no 429 to slow down."""
    api = limited(LIMIT_PER_TOKEN="3 per minute", LIMIT_COMMANDS="100 per minute")
    gid, tokens = new_game(api, players=2)
    seen = []
    for i in range(5):
        r = api.post(
            f"/games/{gid}/seats/0/commands",
            headers=bearer(tokens[0]),
            json={"command_id": f"c{i}", "command": {"kind": "start_tiles", "development": 1}},
            environ_base={"REMOTE_ADDR": "192.0.2.50"},  # an address of its own
            validate=False,
        )
        seen.append((r.status_code, r.headers["RateLimit"]))
        if r.status_code == 429:
            break
    # the answer before the first refusal said the per-token limit had nothing left
    assert seen[-1][0] == 429 and seen[-2][1].startswith('"per-token";r=0;'), seen
    assert seen[0][1].startswith('"per-token";'), seen


def test_repeated_bad_tokens_throttle_the_address(limited: Callable[..., ValidatingClient]) -> None:
    api = limited(LIMIT_BAD_TOKENS="5 per minute", ADMIN_TOKEN=ADMIN)
    gid, tokens = new_game(api, players=2)
    url = f"/games/{gid}/seats/0/view"
    statuses = [api.get(url, headers=bearer(f"guess-{i}")).status_code for i in range(8)]
    assert statuses[:5] == [401] * 5 and statuses[5:] == [429] * 3, statuses
    p = _too_many(api.get(url, headers=bearer("guess-x")), "bad-tokens")
    assert "this token was refused" in p["detail"] and "address 127.0.0.1" in p["detail"], p
    # the address's refused tokens are held back, its valid ones are not: the seat's token, on
    # its seat (another seat's token on it is refused 403, not counted, not held back) ...
    assert api.get(url, headers=bearer(tokens[0])).status_code == 200
    assert api.get(url, headers=bearer(tokens[1])).status_code == 403
    # ... a token offered as the admin token that is not it is refused (403), so held back ...
    _too_many(
        api.post("/ladders", json={}, headers=bearer("guess-admin"), validate=False), "bad-tokens"
    )
    # ... the admin token works; requests without a token, and other addresses, go on
    seeded = api.post("/games", json={**SEATS, "seed": "s"}, headers=bearer(ADMIN))
    assert seeded.status_code == 201
    assert api.get(f"/games/{gid}").status_code == 200
    r = api.get(
        url, headers=bearer("guess-y"), environ_base={"REMOTE_ADDR": "192.0.2.77"}, validate=False
    )
    assert r.status_code == 401


def test_open_streams_are_capped_per_token_and_per_address(
    limited: Callable[..., ValidatingClient],
) -> None:
    api = limited(MAX_STREAMS_PER_TOKEN=2, MAX_STREAMS_PER_ADDRESS=3, SSE_MAX_SECONDS=30.0)
    gid, tokens = new_game(api, players=2)
    seat = f"/games/{gid}/seats/0/events/stream"
    open_ = [
        api.get(seat, headers=bearer(tokens[0]), buffered=False, validate=False) for _ in range(2)
    ]
    assert [r.status_code for r in open_] == [200, 200]
    p = _too_many(api.get(seat, headers=bearer(tokens[0]), validate=False), "open-streams")
    assert "this token has 2 streams open" in p["detail"]
    # the address's cap counts every stream of it: one more (no token) fits, the next does not
    public = api.get(f"/games/{gid}/events/stream", buffered=False, validate=False)
    assert public.status_code == 200
    _too_many(api.get(f"/games/{gid}/events/stream", validate=False), "open-streams")
    # closing a stream gives its place back
    open_[0].close()
    again = api.get(seat, headers=bearer(tokens[0]), buffered=False, validate=False)
    assert again.status_code == 200
    for r in (open_[1], public, again):
        r.close()


def test_a_quota_of_unfinished_games_per_address_and_abandoned_games_expire(
    limited: Callable[..., ValidatingClient], real_redis: Any
) -> None:
    api = limited(MAX_OPEN_GAMES_PER_ADDRESS=2, ABANDONED_GAME_SECONDS=1)
    prefix = api.prefix  # type: ignore[attr-defined]
    abandoned = api.post("/games", json=SEATS).get_json()["game_id"]
    claimed, _ = new_game(api, players=2, claim=False)
    assert api.post(f"/games/{claimed}/seats/0/claim").status_code == 201
    p = _too_many(api.post("/games", json=SEATS), "open-games")
    assert p["type"] == "/problems/too-many-open-games" and "finish" in p["detail"]
    assert real_redis.pttl(f"{prefix}:{{g:{abandoned}}}:s") > 0
    # the unclaimed game is gone with every key it held (Redis expires it); the claimed one stays
    deadline = time.monotonic() + 10
    while real_redis.exists(f"{prefix}:{{g:{abandoned}}}:s") and time.monotonic() < deadline:
        time.sleep(0.1)
    assert list(real_redis.scan_iter(match=f"{prefix}:{{g:{abandoned}}}*")) == []
    assert api.get(f"/games/{abandoned}").status_code == 404
    kept = sorted(k.decode() for k in real_redis.scan_iter(match=f"{prefix}:{{g:{claimed}}}*"))
    assert [k.rsplit(":", 1)[1] for k in kept] == ["c", "m", "s", "tokens", "v"]
    assert all(real_redis.ttl(k) == -1 for k in kept)
    ids = [g["game_id"] for g in api.get("/games").get_json()["items"]]
    assert ids == [claimed] and real_redis.zscore(f"{prefix}:lobby", abandoned) is None
    # and its place in the quota is free again
    assert api.post("/games", json=SEATS).status_code == 201


def test_finished_games_are_kept_or_expire_after_finished_game_seconds(
    limited: Callable[..., ValidatingClient], real_redis: Any
) -> None:
    for finished, expect in ((0, -1), (3600, 3600)):
        api = limited(
            ABANDONED_GAME_SECONDS=600,
            FINISHED_GAME_SECONDS=finished,
            LIMIT_COMMANDS="100000 per minute",
            LIMIT_PER_ADDRESS="100000 per minute",
        )
        prefix = api.prefix  # type: ignore[attr-defined]
        api.sample = 50
        gid, tokens = new_game(api, players=2)
        play_http(api, gid, tokens, seed=5)
        keys = list(real_redis.scan_iter(match=f"{prefix}:{{g:{gid}}}*"))
        assert len(keys) == 5
        ttls = [real_redis.ttl(k) for k in keys]
        assert all(t == expect if expect < 0 else expect - 60 < t <= expect for t in ttls), ttls
        assert real_redis.hget(f"{prefix}:{{g:{gid}}}:m", "expire_idle") is None


def test_an_unclaimed_bot_game_that_finishes_is_kept(
    limited: Callable[..., ValidatingClient], real_redis: Any
) -> None:
    """Games nobody claims but that are played (all bot seats) get their commands from the workers;
    finishing keeps them. Here the moves are applied the way a worker applies them."""
    api = limited(ABANDONED_GAME_SECONDS=600)
    prefix = api.prefix  # type: ignore[attr-defined]
    gid = api.post("/games", json={"seats": [{"kind": "bot", "bot": "random"}] * 2}).get_json()[
        "game_id"
    ]
    assert 0 < real_redis.ttl(f"{prefix}:{{g:{gid}}}:s") <= 600
    games = api.application.extensions["rfg"].games
    rng = Rng(1)
    while True:
        state, version, _ = games.load(gid)
        if state.over:
            break
        assert real_redis.ttl(f"{prefix}:{{g:{gid}}}:m") > 590, "each move renews the idle time"
        seat = min(engine.pending(state))
        games.submit(
            gid,
            seat,
            bot_command(state, seat, "random", rng),
            f"w{version}-{seat}",
            expected_version=version,
            actor="bot:random",
        )
    assert all(
        real_redis.ttl(k) == -1 for k in real_redis.scan_iter(match=f"{prefix}:{{g:{gid}}}*")
    )


def test_limits_can_be_switched_off_and_bad_settings_are_named() -> None:
    assert resolve({}, {"RFG_RATE_LIMITS": "0"})["RATE_LIMITS"] is False
    assert resolve({}, {})["RATE_LIMITS"] is True
    got = resolve(
        {},
        {
            "RFG_LIMIT_CREATE_GAME": "5 per hour",
            "RFG_MAX_OPEN_GAMES_PER_ADDRESS": "3",
            "RFG_ABANDONED_GAME_SECONDS": "60",
            "RFG_FINISHED_GAME_SECONDS": "86400",
        },
    )
    assert (got["LIMIT_CREATE_GAME"], got["MAX_OPEN_GAMES_PER_ADDRESS"]) == ("5 per hour", 3)
    assert (got["ABANDONED_GAME_SECONDS"], got["FINISHED_GAME_SECONDS"]) == (60, 86400)
    with pytest.raises(ValueError, match="LIMIT_COMMANDS.*per minute"):
        resolve({}, {"RFG_LIMIT_COMMANDS": "lots"})
    with pytest.raises(ValueError, match="MAX_STREAMS_PER_TOKEN.*whole number"):
        resolve({}, {"RFG_MAX_STREAMS_PER_TOKEN": "-1"})
    off = make_app(
        f"memory://{uuid.uuid4().hex}", RATE_LIMITS=False, LIMIT_CREATE_GAME="1 per hour"
    ).test_client()
    assert [off.post("/games", json=SEATS).status_code for _ in range(3)] == [201] * 3
