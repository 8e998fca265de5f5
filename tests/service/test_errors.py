"""Bad input never gets a 500: malformed JSON, wrong media types, unknown fields, wrong types,
oversize bodies, unknown paths and methods all answer problem+json with a status a client can
act on."""

from __future__ import annotations

from typing import Any

import pytest
from flask import Flask

from .conftest import ValidatingClient, make_app


def _problem(r: Any, status: int, slug: str) -> dict[str, Any]:
    assert r.status_code == status, (r.status_code, r.get_data()[:300])
    assert r.mimetype == "application/problem+json"
    p: dict[str, Any] = r.get_json()
    assert p["type"] == f"/problems/{slug}" and p["status"] == status
    assert p["title"] and p["detail"] and p["instance"]
    return p


def test_malformed_json_is_400(api: ValidatingClient) -> None:
    for raw in (b"{", b"[1,", b"\xff\xfe", b'{"seats": NaN}', b"nul"):
        r = api.post("/games", data=raw, content_type="application/json", validate=False)
        _problem(r, 400, "malformed-request")
    r = api.post("/games", data=b"", content_type="application/json", validate=False)
    _problem(r, 400, "malformed-request")


def test_other_media_types_are_415(api: ValidatingClient) -> None:
    r = api.post(
        "/games", data=b"seats=2", content_type="application/x-www-form-urlencoded", validate=False
    )
    _problem(r, 415, "unsupported-media-type")
    r = api.post("/replays/verify", data=b"{}", content_type="application/json", validate=False)
    _problem(r, 415, "unsupported-media-type")


@pytest.mark.parametrize(
    ("body", "field"),
    [
        ({"seats": [{"kind": "human"}] * 2, "colour": "red"}, "colour"),
        ({"seats": [{"kind": "human"}]}, "seats"),
        ({"seats": [{"kind": "human"}] * 6}, "seats"),
        ({"seats": "two"}, "seats"),
        ({"seats": [{"kind": "bot", "bot": "skynet"}, {"kind": "human"}]}, "seats[0].bot"),
        ({"seats": [{"kind": "bot"}, {"kind": "human"}]}, "seats[0].bot"),
        ({"seats": [{"kind": "human", "bot": "random"}, {"kind": "human"}]}, "seats[0].bot"),
        ({"seats": [{"kind": "alien"}, {"kind": "human"}]}, "seats[0].kind"),
        (
            {"seats": [{"kind": "human"}] * 2, "options": {"first_game": "yes"}},
            "options.first_game",
        ),
        ({"seats": [{"kind": "human"}] * 2, "options": {"first_game": 1}}, "options.first_game"),
        ({"seats": [{"kind": "human"}] * 2, "options": {"ambition": True}}, "options.ambition"),
        (
            {"seats": [{"kind": "human"}] * 2, "options": {"expansions": ["seafarers"]}},
            "options.expansions",
        ),
        ({"seats": [{"kind": "human"}] * 2, "seed": 7}, "seed"),
        ({}, "seats"),
    ],
)
def test_invalid_bodies_are_422_with_field_errors(
    api: ValidatingClient, body: dict[str, Any], field: str
) -> None:
    r = api.post("/games", json=body, validate=False)
    p = _problem(r, 422, "invalid-request")
    assert field in p["errors"], p["errors"]
    assert field in p["detail"] or len(p["errors"]) > 1


def test_a_json_array_is_not_an_object(api: ValidatingClient) -> None:
    _problem(api.post("/games", json=[1, 2], validate=False), 422, "invalid-request")


def test_unknown_and_invalid_query_parameters_are_400(api: ValidatingClient) -> None:
    for query in (
        "palyers=3",
        "players=9",
        "players=two",
        "limit=0",
        "status=won",
        "created_after=yesterday",
        "cursor=%%%",
        "limit=1&limit=2",
    ):
        r = api.get(f"/games?{query}", validate=False)
        _problem(r, 400, "invalid-parameters")
    _problem(api.get("/games/x/events?after=-1", validate=False), 400, "invalid-parameters")


def test_oversize_bodies_are_413() -> None:
    app = make_app("memory://oversize", MAX_CONTENT_LENGTH=1024, REPLAY_MAX_BYTES=2048)
    client = app.test_client()
    big = {"seats": [{"kind": "human"}] * 2, "seed": "x" * 5000}
    r = client.post("/games", json=big)
    p = _problem(r, 413, "payload-too-large")
    assert p["max_bytes"] == 1024
    r = client.post("/replays/verify", data=b"{}\n" * 1000, content_type="application/x-ndjson")
    assert _problem(r, 413, "payload-too-large")["max_bytes"] == 2048
    # a log under its own (larger) limit passes although it exceeds MAX_CONTENT_LENGTH
    r = client.post("/replays/verify", data=b"{}\n" * 500, content_type="application/x-ndjson")
    assert r.status_code == 200 and r.get_json()["ok"] is False


def test_unknown_paths_and_methods(api: ValidatingClient) -> None:
    _problem(api.get("/nowhere", validate=False), 404, "not-found")
    _problem(api.get("/games/bad%20id", validate=False), 404, "not-found")
    _problem(api.get("/games/0123456789ab"), 404, "not-found")
    _problem(api.get("/games/0123456789ab/seats/-1/view", validate=False), 404, "not-found")
    r = api.delete("/games", validate=False)
    p = _problem(r, 405, "method-not-allowed")
    assert "GET" in r.headers["Allow"] and "POST" in p["detail"]


def test_every_problem_type_is_documented(api: ValidatingClient) -> None:
    from service.errors import PROBLEM_TYPES

    for slug, t in PROBLEM_TYPES.items():
        r = api.get(f"/problems/{slug}")
        assert r.status_code == 200 and r.get_json()["status"] == t.status
    _problem(api.get("/problems/no-such-problem"), 404, "not-found")


def test_an_unexpected_failure_is_a_500_problem(
    app: Flask, monkeypatch: pytest.MonkeyPatch
) -> None:
    b = app.extensions["rfg"]

    def boom(*_a: Any, **_k: Any) -> None:
        raise RuntimeError("disk on fire")

    monkeypatch.setattr(b.games, "view", boom)
    r = app.test_client().get("/games/abc/view")
    p = _problem(r, 500, "internal-error")
    assert "disk on fire" not in p["detail"]


def test_readyz_is_503_when_redis_is_unreachable() -> None:
    app = make_app("redis://127.0.0.1:1/0")
    r = app.test_client().get("/readyz")
    _problem(r, 503, "not-ready")
    assert app.test_client().get("/healthz").status_code == 200
