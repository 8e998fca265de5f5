"""``POST /games`` with an ``Idempotency-Key``: the same key and body answer the same game, made
once, even when the first answer was lost after the game was stored; another body is 422; keys are
per client; and a game's creation is one write (no listed game without its events, no game without
its retention)."""

from __future__ import annotations

from typing import Any

import pytest
import redis
from flask import Flask

from service.idempotency import REMEMBER_SECONDS

from .conftest import ADMIN, ValidatingClient, bearer

BODY = {"seats": [{"kind": "human"}, {"kind": "human"}]}


def create(api: ValidatingClient, key: str | None, body: Any = None, **kw: Any) -> Any:
    headers = dict(kw.pop("headers", {}))
    if key is not None:
        headers["Idempotency-Key"] = key
    return api.post("/games", json=BODY if body is None else body, headers=headers, **kw)


def listed(api: ValidatingClient) -> list[str]:
    return [g["game_id"] for g in api.get("/games?limit=100").get_json()["items"]]


def test_the_same_key_and_body_answer_the_same_game_once(api: ValidatingClient) -> None:
    first = create(api, "8e03978e-40d5-43e8-bc93-6894a57f9324")
    assert first.status_code == 201 and "Idempotent-Replayed" not in first.headers
    again = create(api, "8e03978e-40d5-43e8-bc93-6894a57f9324")
    assert again.status_code == 201
    assert again.headers["Idempotent-Replayed"] == "true"
    assert again.headers["Location"] == first.headers["Location"]
    assert again.get_json()["game_id"] == first.get_json()["game_id"]
    # the draft's structured-field form (quoted) is the same key; key order does not matter
    quoted = create(
        api, '"8e03978e-40d5-43e8-bc93-6894a57f9324"', body=dict(reversed(BODY.items()))
    )
    assert quoted.get_json()["game_id"] == first.get_json()["game_id"]
    assert listed(api) == [first.get_json()["game_id"]]
    other = create(api, "another-key")
    assert other.status_code == 201 and other.get_json()["game_id"] != first.get_json()["game_id"]
    without = create(api, None)
    assert without.status_code == 201 and len(set(listed(api))) == 3


def test_the_same_key_with_another_body_is_422(api: ValidatingClient) -> None:
    first = create(api, "k-1")
    gid = first.get_json()["game_id"]
    r = create(api, "k-1", body={"seats": [{"kind": "human"}] * 3})
    assert r.status_code == 422
    problem = r.get_json()
    assert problem["type"] == "/problems/idempotency-key-mismatch"
    assert "another request body" in problem["detail"] and gid in problem["detail"]
    assert listed(api) == [gid]


@pytest.mark.parametrize("key", ["", "has space", "x" * 129, "ümlaut", '"unterminated', "a,b"])
def test_a_malformed_key_is_400(api: ValidatingClient, key: str) -> None:
    r = create(api, key, validate=False)
    assert r.status_code == 400, r.get_json()
    assert r.get_json()["type"] == "/problems/malformed-request"
    assert "Idempotency-Key" in r.get_json()["detail"]
    assert listed(api) == []


def test_keys_are_per_client(api: ValidatingClient) -> None:
    """The same key from another address, or with a token, is another client's key: its own game
    (nobody reaches another client's game by guessing its key). (``validate=False``: the
    validating client cannot carry another peer address.)"""

    def at(addr: str, **kw: Any) -> Any:
        return create(api, "shared", environ_base={"REMOTE_ADDR": addr}, validate=False, **kw)

    a, b = at("198.51.100.1"), at("198.51.100.2")
    c = at("198.51.100.1", headers=bearer(ADMIN))
    ids = {r.get_json()["game_id"] for r in (a, b, c)}
    assert len(ids) == 3
    again = at("198.51.100.2")
    assert again.get_json()["game_id"] == b.get_json()["game_id"]
    assert again.headers["Idempotent-Replayed"] == "true"


def test_a_retry_after_a_lost_answer_makes_one_game(
    app: Flask, api: ValidatingClient, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The game was stored, then the answer failed (503): the retry answers that game."""
    import service.api.games as games_api

    real = games_api.read_summary
    calls = {"n": 0}

    def flaky(game_id: str) -> Any:
        calls["n"] += 1
        if calls["n"] == 1:
            raise redis.exceptions.ConnectionError("connection reset")
        return real(game_id)

    monkeypatch.setattr(games_api, "read_summary", flaky)
    r = create(api, "lost-answer")
    assert r.status_code == 503 and r.headers["Retry-After"]
    stored = listed(api)
    assert len(stored) == 1  # stored, whole, although the client heard 503
    again = create(api, "lost-answer")
    assert again.status_code == 201 and again.get_json()["game_id"] == stored[0]
    assert listed(api) == stored


def test_a_retry_after_a_failed_creation_creates_it_once(
    app: Flask, api: ValidatingClient, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The creation itself failed (the store refused it): the retry creates the game, under the
    id the key reserved, and a third request answers it."""
    b = app.extensions["rfg"]
    real = b.store.create_game
    calls = {"n": 0}

    def refusing(*a: Any, **k: Any) -> Any:
        calls["n"] += 1
        if calls["n"] == 1:
            raise redis.exceptions.OutOfMemoryError("command not allowed when used memory > ...")
        return real(*a, **k)

    monkeypatch.setattr(b.store, "create_game", refusing)
    r = create(api, "refused-first")
    assert r.status_code == 503 and r.get_json()["type"] == "/problems/store-unavailable"
    assert listed(api) == []
    second = create(api, "refused-first")
    assert second.status_code == 201 and "Idempotent-Replayed" not in second.headers
    third = create(api, "refused-first")
    assert third.headers["Idempotent-Replayed"] == "true"
    assert listed(api) == [second.get_json()["game_id"]] == [third.get_json()["game_id"]]


def test_two_attempts_at_once_store_one_game(app: Flask) -> None:
    """Two requests with one key, both past the reservation before either stored the game: the
    store's creation is keyed by the game id, so the second is a duplicate of the first."""
    from events.games.service import GameService

    b = app.extensions["rfg"]
    g1, _ = b.games.create(2, game_id="samegame0001", retention=(3600, 0))
    other = GameService(b.store)  # another process, another seed
    g2, v2 = other.create(2, game_id="samegame0001", retention=(3600, 0))
    assert g1 == g2 and v2 == b.store.version(g1)
    assert [e.game_id for e in b.store.list_games()] == [g1]


def test_a_key_whose_game_expired_is_404(app: Flask, api: ValidatingClient) -> None:
    first = create(api, "short-lived")
    gid = first.get_json()["game_id"]
    b = app.extensions["rfg"]
    b.client.delete(*b.store.game_keys(gid))  # what Redis does when the game's keys expire
    r = create(api, "short-lived")
    assert r.status_code == 404 and "expired" in r.get_json()["detail"]


def test_keys_are_remembered_a_day(app: Flask, api: ValidatingClient) -> None:
    create(api, "remembered")
    b = app.extensions["rfg"]
    (record,) = list(b.client.scan_iter(match=f"{b.store.prefix}:idem:*"))
    assert REMEMBER_SECONDS - 5 <= b.client.ttl(record) <= REMEMBER_SECONDS == 86400


def test_a_created_game_carries_its_retention_from_the_start(
    app: Flask, api: ValidatingClient
) -> None:
    """Events, views, status, lobby entry and expiry in one write: nothing to set afterwards."""
    gid = create(api, None).get_json()["game_id"]
    b = app.extensions["rfg"]
    stream, meta, cmds, views, _tokens = b.store.game_keys(gid)
    for key in (stream, meta, cmds, views):
        assert 0 < b.client.ttl(key) <= int(app.config["ABANDONED_GAME_SECONDS"])
    assert b.client.hget(meta, "expire_idle") is not None
    assert b.client.zscore(f"{b.store.prefix}:lobby", gid) is not None
