"""openapi.yaml is a valid OpenAPI 3.1 document and matches the app: every route is described and
every described path is served; its enumerations (bots, decision and command kinds) are the
engine's; its examples validate against their schemas and pass the app's marshmallow schemas."""

from __future__ import annotations

import re
from typing import Any

import pytest
import yaml
from flask import Flask
from openapi_schema_validator import OAS31Validator
from openapi_spec_validator import validate
from referencing import Registry, Resource
from referencing.jsonschema import DRAFT202012

import engine.flow
from bots.base import bot_names
from service.schemas.commands import COMMAND_SCHEMAS
from service.schemas.requests import CommandRequestSchema, CreateGameSchema

from .conftest import SPEC_PATH

METHODS = {"get", "post", "put", "patch", "delete"}


@pytest.fixture(scope="module")
def spec() -> dict[str, Any]:
    doc: dict[str, Any] = yaml.safe_load(SPEC_PATH.read_text(encoding="utf-8"))
    return doc


def _validator(spec: dict[str, Any], name: str) -> OAS31Validator:
    resource = Resource.from_contents(spec, default_specification=DRAFT202012)
    registry: Registry = Registry().with_resource("urn:spec", resource)
    return OAS31Validator({"$ref": f"urn:spec#/components/schemas/{name}"}, registry=registry)


def test_the_document_is_valid_openapi_3_1(spec: dict[str, Any]) -> None:
    assert spec["openapi"].startswith("3.1")
    validate(spec)


def test_every_route_is_in_the_spec_and_every_path_is_served(
    app: Flask, spec: dict[str, Any]
) -> None:
    served = set()
    for rule in app.url_map.iter_rules():
        path = re.sub(r"<(?:[a-z]+:)?([a-z_]+)>", r"{\1}", rule.rule)
        for method in (rule.methods or set()) - {"HEAD", "OPTIONS"}:
            served.add((method.lower(), path))
    described = {(m, p) for p, item in spec["paths"].items() for m in item if m in METHODS}
    assert served - described == set(), "routes missing from openapi.yaml"
    assert described - served == set(), "paths in openapi.yaml that the app does not serve"


def test_enumerations_are_the_engines(spec: dict[str, Any]) -> None:
    schemas = spec["components"]["schemas"]
    assert schemas["BotName"]["enum"] == bot_names()
    assert set(schemas["DecisionKind"]["enum"]) == set(engine.flow.DECISIONS)

    def kinds(prefix: str) -> set[str]:
        out: set[str] = set()
        for ref in schemas[prefix]["oneOf"]:
            kind = schemas[ref["$ref"].rsplit("/", 1)[1]]["properties"]["kind"]
            out |= {kind["const"]} if "const" in kind else set(kind["enum"])
        return out

    assert kinds("Command") == set(COMMAND_SCHEMAS) == set(engine.flow.DECISIONS)
    assert kinds("Decision") == set(engine.flow.DECISIONS)


def test_examples_validate_against_the_spec_and_the_app(spec: dict[str, Any]) -> None:
    schemas = spec["components"]["schemas"]
    checked = 0
    for name, schema in schemas.items():
        if "example" in schema:
            errors = list(_validator(spec, name).iter_errors(schema["example"]))
            assert not errors, f"example of {name}: {errors[0].message}"
            checked += 1
    ops = {
        ("/games/{game_id}/seats/{seat}/commands", "post"): (
            "CommandRequest",
            CommandRequestSchema(),
        ),
        ("/games", "post"): ("CreateGame", CreateGameSchema()),
    }
    for (path, method), (name, marshmallow_schema) in ops.items():
        examples = spec["paths"][path][method]["requestBody"]["content"]["application/json"][
            "examples"
        ]
        for key, ex in examples.items():
            errors = list(_validator(spec, name).iter_errors(ex["value"]))
            assert not errors, f"{path} example {key}: {errors[0].message}"
            marshmallow_schema.load(ex["value"])  # the app accepts it too
            checked += 1
    kinds = {
        ex["value"]["command"]["kind"]
        for ex in spec["paths"]["/games/{game_id}/seats/{seat}/commands"]["post"]["requestBody"][
            "content"
        ]["application/json"]["examples"].values()
    }
    assert kinds == set(engine.flow.DECISIONS), "an example per command kind"
    assert checked > 25


def test_the_command_schemas_refuse_what_the_spec_refuses(spec: dict[str, Any]) -> None:
    v = _validator(spec, "CommandRequest")
    bad = [
        {
            "command_id": "a",
            "command": {
                "kind": "ship",
                "tasks": [{"shipper": 1, "good": 2, "action": "trade", "x": 1}],
            },
        },
        {"command_id": "a b", "command": {"kind": "manage"}},
        {"command_id": "a", "command": {"kind": "explore", "task": "nap"}},
        {"command_id": "a", "command": {"kind": "develop"}},
    ]
    for body in bad:
        assert list(v.iter_errors(body)), body
        with pytest.raises(Exception, match="."):
            CommandRequestSchema().load(body)


def test_stream_events_are_checked_one_by_one(spec: dict[str, Any]) -> None:
    from .conftest import stream_events

    read = stream_events(spec)
    good = (
        b'retry: 2000\n\nid: 1\ndata: {"seq":1,"type":"GameCreated","actor":"system",'
        b'"ts":"2025-01-01T00:00:00Z","command_id":"create","event":{"type":"GameCreated","v":1}}\n\n: keep-alive\n\n'
        b'event: end\ndata: {"game_id":"g","version":1}\n\n'
    )
    assert read(good)["id"] == "1"
    with pytest.raises(AssertionError, match="FeedItem"):
        read(b'id: 1\ndata: {"seq": 1}\n\n')
    with pytest.raises(AssertionError, match="StreamEvent"):
        read(b"event: surprise\ndata: {}\n\n")


def test_log_lines_are_checked_one_by_one(
    spec: dict[str, Any], monkeypatch: pytest.MonkeyPatch
) -> None:
    from . import conftest

    read = conftest.log_lines(spec)
    golden = (conftest.ROOT / "tests" / "golden" / "export-rules4-2p-signed.jsonl").read_bytes()
    monkeypatch.setattr(conftest, "READING_RESPONSE", True)
    assert read(golden)["type"] == "GameCreated"
    bad = golden.replace(b'"type":"RoundStarted"', b'"type":"RoundStarted","x":1', 1)
    with pytest.raises(AssertionError, match="RoundStartedEnvelope"):
        read(bad)
    with pytest.raises(AssertionError, match="LogLine"):
        read(b'{"seq": 1}\n')
    monkeypatch.setattr(conftest, "READING_RESPONSE", False)  # an upload: any text
    assert read(b"not json\n") == "not json\n"


def test_no_request_schema_has_an_optional_property_with_a_default(spec: dict[str, Any]) -> None:
    """openapi-typescript makes a property with a ``default`` required in the types it
    generates, so a client could not leave it out (test_spec_for_clients.py)."""
    from .test_spec_for_clients import optional_defaults

    assert optional_defaults(spec) == [], (
        "a generated TypeScript client would have to send these: state each default in the "
        "property's description instead of `default:`"
    )
