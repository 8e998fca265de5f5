"""A log export's lines are typed: every line of a full export matches docs/log.schema.json (its
envelope with the payload of its event type, then the signature line) and openapi.yaml's
``LogLine`` (the ``api`` client checks each line of every log it reads); a live game's redacted
log is feed items; the schemas are served at ``GET /schemas/log.json`` and
``GET /schemas/events.json``."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from jsonschema import Draft202012Validator

from .conftest import ROOT, ValidatingClient, bearer, new_game, play_http

DOCS = ROOT / "docs"
GOLDEN = ROOT / "tests" / "golden"


@pytest.fixture(scope="module")
def log_schema() -> Draft202012Validator:
    schema = json.loads((DOCS / "log.schema.json").read_text(encoding="utf-8"))
    Draft202012Validator.check_schema(schema)
    return Draft202012Validator(schema)


def _errors(validator: Draft202012Validator, lines: list[Any]) -> list[str]:
    return [
        f"line {i + 1}: {e.message}" for i, x in enumerate(lines) for e in validator.iter_errors(x)
    ]


def test_the_schemas_are_served(api: ValidatingClient) -> None:
    for name, file in (("log", "log.schema.json"), ("events", "events.schema.json")):
        r = api.get(f"/schemas/{name}.json")
        assert r.status_code == 200 and r.mimetype == "application/schema+json"
        assert r.get_data() == (DOCS / file).read_bytes()
    assert api.get("/").get_json()["links"]["log_schema"] == "/schemas/log.json"
    missing = api.get("/schemas/nothing.json", validate=False)
    assert missing.status_code == 404 and "known" in missing.get_json()["detail"]


def test_a_full_export_and_a_live_log_match_the_schemas(
    api: ValidatingClient, log_schema: Draft202012Validator
) -> None:
    gid, tokens = new_game(api, players=3)
    live = api.get(f"/games/{gid}/seats/1/log", headers=bearer(tokens[1]))  # checked: FeedItems
    assert live.headers["Log-Kind"] == "redacted"
    api.sample = 10
    play_http(api, gid, tokens, seed=3)
    api.sample = 1
    r = api.get(f"/games/{gid}/log")  # checked line by line against LogLine
    assert r.headers["Log-Kind"] == "full"
    lines = [json.loads(x) for x in r.get_data(as_text=True).splitlines()]
    assert _errors(log_schema, lines) == []
    assert "signature" in lines[-1] and {x["type"] for x in lines[:-1]} >= {
        "GameCreated",
        "GameEnded",
    }


def test_the_signed_golden_log_matches_and_a_stray_field_does_not(
    log_schema: Draft202012Validator,
) -> None:
    path: Path = GOLDEN / "export-rules4-2p-signed.jsonl"
    lines = [json.loads(x) for x in path.read_text(encoding="utf-8").splitlines()]
    assert _errors(log_schema, lines) == []
    rolled = next(x for x in lines if x.get("type") == "DiceRolled")
    assert _errors(log_schema, [dict(rolled, payload={**rolled["payload"], "extra": 1})])
    assert _errors(log_schema, [dict(rolled, type="RoundStarted")])
    assert _errors(log_schema, [{"signature": {**lines[-1]["signature"], "sig": "x"}}])
