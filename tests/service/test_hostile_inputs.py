"""Inputs that used to get a 500 (or were quietly misread) get a 4xx problem with a detail that
says what to send instead: JSON nested past 1,024 levels, lone UTF-16 surrogates in stored
strings, chunked bodies past the size limit (over a real HTTP server: the test client never
chunks), charsets other than UTF-8, non-ASCII digits in a seat number, ``null`` for an object,
over-long or non-ASCII ``Last-Event-ID`` headers."""

from __future__ import annotations

import http.client
import json
import threading
import uuid
from collections.abc import Iterator
from typing import Any

import pytest
from flask import Flask
from werkzeug.serving import BaseWSGIServer, make_server

from .conftest import ADMIN, ValidatingClient, bearer, make_app, new_game, play_http


def _problem(r: Any, status: int, slug: str) -> dict[str, Any]:
    assert r.status_code == status, (r.status_code, r.get_data()[:300])
    assert r.mimetype == "application/problem+json"
    p: dict[str, Any] = r.get_json()
    assert p["type"] == f"/problems/{slug}", p
    return p


def test_json_nested_past_1024_levels_is_400(api: ValidatingClient) -> None:
    gid, tokens = new_game(api)
    for depth in (1025, 5000, 30_000):
        deep = "[" * depth + "]" * depth
        for url, headers in (("/games", {}), (f"/games/{gid}/seats/0/commands", bearer(tokens[0]))):
            # (validate=False: the spec checker's own JSON parser would recurse on it)
            r = api.post(
                url, data=deep, content_type="application/json", headers=headers, validate=False
            )
            p = _problem(r, 400, "malformed-request")
            assert "deep" in p["detail"] and "flatter" in p["detail"]
    # inside a string, brackets are not nesting
    body = {"seats": [{"kind": "human"}] * 2, "options": {}, "abandon_after": None}
    r = api.post(
        "/games",
        data=json.dumps(body).replace("{}", '{"x": "' + "[" * 2000 + '"}'),
        content_type="application/json",
        validate=False,
    )
    assert r.status_code in (400, 422) and "deep" not in r.get_json()["detail"]


@pytest.mark.parametrize("field", ["name", "description", "contact"])
def test_a_lone_surrogate_in_a_stored_string_is_400(api: ValidatingClient, field: str) -> None:
    body = {"name": "bot", "description": "d", "contact": "me@example.org"}
    raw = json.dumps(body).replace(f'"{body[field]}"', '"x\\ud800y"')
    r = api.post("/bots/accounts", data=raw, content_type="application/json")
    p = _problem(r, 400, "malformed-request")
    assert "surrogate" in p["detail"]
    # a surrogate pair is a real character and fine
    ok = json.dumps(body).replace(f'"{body[field]}"', '"x\\ud83d\\ude00y"')
    assert api.post("/bots/accounts", data=ok, content_type="application/json").status_code == 201


def test_a_lone_surrogate_in_a_seed_is_400_and_nothing_is_created(api: ValidatingClient) -> None:
    raw = '{"seats": [{"kind": "human"}, {"kind": "human"}], "seed": "\\udfff"}'
    r = api.post("/games", data=raw, content_type="application/json", headers=bearer(ADMIN))
    assert "surrogate" in _problem(r, 400, "malformed-request")["detail"]
    assert api.get("/games").get_json()["items"] == []


def test_a_charset_other_than_utf8_is_415(api: ValidatingClient) -> None:
    body = json.dumps({"seats": [{"kind": "human"}] * 2})
    for charset in ("utf-16", "latin-1", "UTF-32"):
        r = api.post(
            "/games", data=body.encode("utf-8"), content_type=f"application/json; charset={charset}"
        )
        p = _problem(r, 415, "unsupported-media-type")
        assert charset in p["detail"] and "UTF-8" in p["detail"]
    r = api.post("/games", data=body, content_type="application/json; charset=UTF-8")
    assert r.status_code == 201
    r = api.post(
        "/replays/verify", data=b"{}\n", content_type="text/plain; charset=utf-16", validate=False
    )
    _problem(r, 415, "unsupported-media-type")


def test_non_ascii_digits_do_not_name_a_seat(api: ValidatingClient) -> None:
    gid, tokens = new_game(api, players=4)
    for digits in ("٣", "３", "३", "³"):  # Arabic-Indic, fullwidth, Devanagari three, superscript
        r = api.get(f"/games/{gid}/seats/{digits}/view", headers=bearer(tokens[3]), validate=False)
        assert r.status_code == 404, (digits, r.status_code)
    assert api.get(f"/games/{gid}/seats/3/view", headers=bearer(tokens[3])).status_code == 200


def test_null_for_an_object_body_is_400(api: ValidatingClient) -> None:
    h = bearer(ADMIN)
    assert api.post("/ladders", json={"name": "l", "players": [2]}, headers=h).status_code == 201
    r = api.patch(
        "/ladders/l", data="null", content_type="application/json", headers=h, validate=False
    )
    assert "null" in _problem(r, 400, "malformed-request")["detail"]
    assert api.get("/ladders/l").get_json()["paused"] is False
    gid, _ = new_game(api, claim=False)
    r = api.post(
        f"/games/{gid}/seats/0/claim", data="null", content_type="application/json", validate=False
    )
    _problem(r, 400, "malformed-request")
    assert api.post(f"/games/{gid}/seats/0/claim").status_code == 201  # no body: fine


def test_last_event_id_must_be_ascii_digits_or_a_short_id(api: ValidatingClient) -> None:
    gid, _ = new_game(api, claim=False)
    for bad in ("²", "٣", "1" * 30):
        r = api.get(f"/games/{gid}/events/stream", headers={"Last-Event-ID": bad}, validate=False)
        assert _problem(r, 400, "malformed-request")["detail"].startswith("Last-Event-ID")
    token = api.post(
        "/bots/accounts", json={"name": "b", "description": "d", "contact": "c"}
    ).get_json()["token"]
    r = api.get(
        "/bots/me/decisions/stream",
        headers={**bearer(token), "Last-Event-ID": "x" * 201},
        validate=False,
    )
    assert "200" in _problem(r, 400, "malformed-request")["detail"]


# --- chunked bodies, over a real HTTP server --------------------------------------------------


@pytest.fixture
def server() -> Iterator[tuple[str, int, Flask]]:
    app = make_app(f"memory://{uuid.uuid4().hex}", REPLAY_MAX_BYTES=100_000)
    srv: BaseWSGIServer = make_server("127.0.0.1", 0, app, threaded=True)
    thread = threading.Thread(target=srv.serve_forever, daemon=True)
    thread.start()
    yield "127.0.0.1", srv.server_port, app
    srv.shutdown()
    thread.join(5)


def _chunked(
    host: str, port: int, path: str, body: bytes, content_type: str
) -> tuple[int, dict[str, Any]]:
    conn = http.client.HTTPConnection(host, port, timeout=30)
    try:
        pieces = (body[i : i + 8192] for i in range(0, len(body), 8192))
        conn.request(
            "POST", path, body=pieces, headers={"Content-Type": content_type}, encode_chunked=True
        )
        resp = conn.getresponse()
        data = resp.read()
        return resp.status, json.loads(data) if data else {}
    finally:
        conn.close()


def test_a_chunked_body_past_the_limit_is_413_not_cut(server: tuple[str, int, Flask]) -> None:
    host, port, _app = server
    seats = [{"kind": "human"}] * 2
    # 100 KB of JSON (over the 64 KiB limit) - it used to be read as its first 64 KiB: a 400
    big = json.dumps({"seats": seats, "seed": "x" * 100_000}).encode()
    status, p = _chunked(host, port, "/games", big, "application/json")
    assert status == 413 and p["type"] == "/problems/payload-too-large", p
    assert p["max_bytes"] == 64 * 1024 and "smaller" in p["detail"]
    # under the limit, chunked is fine
    status, game = _chunked(
        host, port, "/games", json.dumps({"seats": seats}).encode(), "application/json"
    )
    assert status == 201 and game["players"] == 2


def test_a_chunked_replay_upload_past_its_limit_is_413_not_verified_on_a_prefix(
    server: tuple[str, int, Flask],
) -> None:
    host, port, app = server
    api = app.test_client()
    gid, tokens = new_game(api, players=2)
    play_http(api, gid, tokens, seed=3)
    log = api.get(f"/games/{gid}/log").get_data()
    # a whole, valid log, sent chunked to a server that takes logs up to half its size: its first
    # half used to be read and verified (a verdict on a prefix); now the upload is refused
    app.config["REPLAY_MAX_BYTES"] = len(log) // 2
    status, p = _chunked(host, port, "/replays/verify", log, "application/x-ndjson")
    assert status == 413 and p["type"] == "/problems/payload-too-large", p
    assert p["max_bytes"] == len(log) // 2
    app.config["REPLAY_MAX_BYTES"] = len(log)
    status, verdict = _chunked(host, port, "/replays/verify", log, "application/x-ndjson")
    assert status == 200 and "ok" in verdict
