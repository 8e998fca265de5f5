"""Seat tokens: a token reads and acts only for its own seat, on every seat-scoped endpoint
(401 without a token or with a foreign one, 403 with another seat's); claiming is once per human
seat; choosing a seed needs the admin token."""

from __future__ import annotations

from typing import Any

import pytest
from flask import Flask

from .conftest import ADMIN, ValidatingClient, bearer, new_game

START = {"kind": "start_tiles", "development": 1}

#: every seat-scoped endpoint: (method, path suffix after /games/<id>/seats/<n>, request kwargs)
SEAT_ENDPOINTS: list[tuple[str, str, dict[str, Any]]] = [
    ("GET", "/view", {}),
    ("POST", "/commands", {"json": {"command_id": "x1", "command": START}}),
    ("GET", "/events", {}),
    ("GET", "/events/stream", {}),
    ("GET", "/log", {}),
    ("GET", "/samples", {}),
    ("POST", "/resign", {}),
    ("POST", "/abort", {}),
    ("POST", "/move", {}),
    ("POST", "/back", {}),
]


def test_the_table_covers_every_seat_scoped_route(app: Flask) -> None:
    routes = {
        (m, r.rule.split("<int:seat>")[1])
        for r in app.url_map.iter_rules()
        # claiming and rotating (the admin may rotate too) have their own tests (test_tokens.py),
        # inviting (the host or the admin) too (test_friends.py)
        if "<int:seat>" in r.rule and not r.rule.endswith(("/claim", "/token", "/invite"))
        for m in (r.methods or set()) - {"HEAD", "OPTIONS"}
    }
    assert routes == {(m, p) for m, p, _ in SEAT_ENDPOINTS}


@pytest.mark.parametrize(("method", "suffix", "kwargs"), SEAT_ENDPOINTS)
def test_a_seat_token_works_only_for_its_seat(
    api: ValidatingClient, method: str, suffix: str, kwargs: dict[str, Any]
) -> None:
    gid, tokens = new_game(api, players=3)
    other_gid, other_tokens = new_game(api, players=2)
    before = api.get(f"/games/{gid}/view").get_json()["version"]
    url = f"/games/{gid}/seats/1{suffix}"

    r = api.open(url, method=method, **kwargs)
    assert r.status_code == 401 and r.mimetype == "application/problem+json"
    assert r.headers["WWW-Authenticate"].startswith("Bearer")
    assert "claim" in r.get_json()["detail"]

    for token in (tokens[0], tokens[2]):
        r = api.open(url, method=method, headers=bearer(token), **kwargs)
        assert r.status_code == 403, r.get_json()
        assert r.get_json()["type"] == "/problems/forbidden"

    # a token of another game, garbage, and the admin token are not seat tokens
    for token in (other_tokens[1], "not-a-token", ADMIN):
        r = api.open(url, method=method, headers=bearer(token), **kwargs)
        assert r.status_code == 401, r.get_json()
    r = api.open(url, method=method, headers={"Authorization": "Basic abc"}, **kwargs)
    assert r.status_code == 401

    assert api.get(f"/games/{gid}/view").get_json()["version"] == before, "nothing was stored"
    r = api.open(url, method=method, headers=bearer(tokens[1]), **kwargs)
    # 422: the start tile may be illegal; 409: abort, in a game not made from a challenge
    assert r.status_code in (200, 201, 409, 422), r.get_json()

    # unknown seat and unknown game: 404 whatever the token
    r = api.open(
        f"/games/{gid}/seats/7{suffix}", method=method, headers=bearer(tokens[1]), **kwargs
    )
    assert r.status_code == 404
    r = api.open(
        f"/games/nope{suffix.replace('/', '-')}/seats/1{suffix}",
        method=method,
        headers=bearer(tokens[1]),
        **kwargs,
    )
    assert r.status_code == 404


def test_a_seat_is_claimed_once_and_bot_seats_not_at_all(api: ValidatingClient) -> None:
    r = api.post("/games", json={"seats": [{"kind": "human"}, {"kind": "bot", "bot": "random"}]})
    gid = r.get_json()["game_id"]
    first = api.post(f"/games/{gid}/seats/0/claim")
    assert first.status_code == 201 and first.headers["Cache-Control"] == "no-store"
    token = first.get_json()["token"]
    assert len(token) >= 43 and first.get_json()["token_type"] == "Bearer"
    again = api.post(f"/games/{gid}/seats/0/claim", json={})
    assert again.status_code == 409 and again.get_json()["type"] == "/problems/seat-unavailable"
    bot = api.post(f"/games/{gid}/seats/1/claim")
    assert bot.status_code == 409 and "bot" in bot.get_json()["detail"]
    assert api.post(f"/games/{gid}/seats/2/claim").status_code == 404
    seats = api.get(f"/games/{gid}").get_json()["seats"]
    assert [s["claimed"] for s in seats] == [True, True]


def test_tokens_are_stored_only_as_hashes(app: Flask, api: ValidatingClient) -> None:
    gid, tokens = new_game(api, players=2)
    b = app.extensions["rfg"]
    stored = b.client.hgetall(b.tokens.records.key(gid))
    assert b.tokens.records.key(gid).startswith(f"rfg:{{g:{gid}}}:")
    values = {v.decode() for k, v in stored.items() if k.startswith(b"seat:")}
    assert len(values) == 2 and all(len(v) == 64 for v in values)
    assert stored[b"host"] == b"0"  # (the seat claimed first: service.tokens)
    assert not values & set(tokens.values())


def test_racing_claims_issue_one_token(app: Flask) -> None:
    import threading

    client = app.test_client()
    gid = client.post("/games", json={"seats": [{"kind": "human"}] * 2}).get_json()["game_id"]
    codes: list[int] = []

    def claim() -> None:
        codes.append(app.test_client().post(f"/games/{gid}/seats/0/claim").status_code)

    threads = [threading.Thread(target=claim) for _ in range(8)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert sorted(codes) == [201] + [409] * 7


def test_a_seed_needs_the_admin_token(api: ValidatingClient) -> None:
    body = {"seats": [{"kind": "human"}] * 2, "seed": "chosen"}
    assert api.post("/games", json=body).status_code == 401
    r = api.post("/games", json=body, headers=bearer("wrong"))
    assert r.status_code == 403 and "admin" in r.get_json()["detail"]
    r = api.post("/games", json=body, headers=bearer(ADMIN))
    assert r.status_code == 201
    gid = r.get_json()["game_id"]
    assert "seed" not in api.get(f"/games/{gid}/view").get_json()["view"]
    # the admin reads the full log (with the seed) while the game is live; the public does not
    full = api.get(f"/games/{gid}/log", headers=bearer(ADMIN))
    assert full.headers["Log-Kind"] == "full" and '"seed":"chosen"' in full.get_data(as_text=True)
    public = api.get(f"/games/{gid}/log")
    assert public.headers["Log-Kind"] == "redacted" and "chosen" not in public.get_data(
        as_text=True
    )
