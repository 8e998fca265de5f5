"""The answer of ``POST /games/<id>/seats/<n>/commands`` is sent without ``CommandResultSchema``'s
dump at run time (``respond(..., dumped=True)``): the view builds the dict field by field. These
tests prove, for every command of whole bot games (on fakeredis and on the real Redis), that the
bytes sent are exactly the JSON of what the schema's dump gives for them - the same keys, order,
types and values - and the ``api`` client checks the answers against openapi.yaml. A retried
command (``Idempotent-Replayed``) is checked too.

The request hooks' cheaper paths are pinned here as well: the request id made without a UUID
object is ``uuid.uuid4().hex`` of the same random bytes; the metrics children looked up by label
are prometheus-client's own."""

from __future__ import annotations

import os
import uuid
from typing import Any

import orjson
import pytest
from flask.testing import FlaskClient

from bots import get_bot
from engine.rng import Rng
from service import logs, metrics
from service.schemas.responses import CommandResultSchema

from .conftest import ValidatingClient, bearer, new_game

_schema = CommandResultSchema()


@pytest.fixture(params=["fakeredis", "redis"])
def any_api(request: pytest.FixtureRequest) -> FlaskClient:
    name = "api" if request.param == "fakeredis" else "real_api"
    client: ValidatingClient = request.getfixturevalue(name)
    client.sample = 5  # every new shape of call, and every 5th, against openapi.yaml
    return client


def _assert_dumped(raw: bytes) -> dict[str, Any]:
    """The answer's bytes are the schema's dump of it, serialised as the API serialises."""
    body: dict[str, Any] = orjson.loads(raw)
    dumped = _schema.dump(body)
    assert orjson.dumps(dumped) == raw, (dumped, raw)
    assert list(body) == list(_schema.fields), list(body)  # every field, in the schema's order
    assert all(
        set(item) == {"seq", "type", "actor", "ts", "command_id", "event"}
        for item in body["events"]
    )
    return body


def _play(api: FlaskClient, players: int, seed: int) -> int:
    gid, tokens = new_game(api, players=players)
    bot, rng = get_bot("random"), Rng(seed)
    n = 0
    while True:
        pub = api.get(f"/games/{gid}/view").get_json()
        if pub["view"]["step"] == "over":
            return n
        seat = min(int(s) for s in pub["view"]["pending"])
        sv = api.get(f"/games/{gid}/seats/{seat}/view", headers=bearer(tokens[seat])).get_json()
        command = bot.act(sv["view"]["decision"], sv["view"] if bot.needs_view else None, rng)
        payload = {"command_id": f"c{n}", "expected_version": sv["version"], "command": command}
        r = api.post(
            f"/games/{gid}/seats/{seat}/commands", json=payload, headers=bearer(tokens[seat])
        )
        assert r.status_code == 201, (r.get_json(), command)
        body = _assert_dumped(r.get_data())
        assert body["game_id"] == gid and body["seat"] == seat and body["command_id"] == f"c{n}"
        assert body["version"] == body["last_seq"] > sv["version"] and body["events"]
        assert r.headers["ETag"] == f'"{body["version"]}"'
        assert r.headers["Content-Type"] == "application/json"
        assert "Idempotent-Replayed" not in r.headers
        if n % 25 == 0:  # a retry: the same answer, replayed
            again = api.post(
                f"/games/{gid}/seats/{seat}/commands", json=payload, headers=bearer(tokens[seat])
            )
            assert again.status_code == 201 and again.headers["Idempotent-Replayed"] == "true"
            replayed = _assert_dumped(again.get_data())
            assert replayed["version"] >= body["version"]
            assert again.headers["ETag"] == f'"{replayed["version"]}"'
        n += 1
        assert n < 3000, "the game did not end"


@pytest.mark.parametrize("players", [2, 4])
def test_every_command_answer_is_the_schema_dump(any_api: FlaskClient, players: int) -> None:
    assert _play(any_api, players, seed=players) > 30


def test_request_id_is_uuid4_hex_of_the_same_bytes() -> None:
    for raw in (bytes(16), b"\xff" * 16, *(os.urandom(16) for _ in range(2000))):
        assert logs._uuid4_hex(raw) == uuid.UUID(bytes=raw, version=4).hex


def test_metrics_children_are_prometheus_own() -> None:
    child = metrics._requests_child("GET", "/test-route", 200)
    assert child is metrics.REQUESTS.labels("GET", "/test-route", "200")
    assert metrics._requests_child("GET", "/test-route", 200) is child
    assert metrics._commands_child("applied") is metrics.COMMANDS.labels("applied")
