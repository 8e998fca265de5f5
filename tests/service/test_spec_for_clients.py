"""openapi.yaml as client generators read it. openapi-typescript (v7, ``defaultNonNullable`` on by
default) makes every property that has a ``default`` required, so a request schema states its
defaults in the description, never as ``default:``: else a generated client cannot send a
request without the property (``POST /games`` needed ``bot_pace_seconds``). The TypeScript side
of the same rule - a minimal call to every operation with a body, type-checked - is
tests/clients/test_minimal_requests.py; tests/service/test_spec.py applies ``optional_defaults``
to openapi.yaml. And what a client needs to set its streams' read timeout,
the keep-alive interval, is stated where the streams are described."""

from __future__ import annotations

import copy
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
import yaml

from service.config import DEFAULTS

from .conftest import SPEC_PATH

ROOT = Path(__file__).resolve().parents[2]

METHODS = {"get", "put", "post", "delete", "patch", "options", "head", "trace"}


@pytest.fixture(scope="module")
def spec() -> dict[str, Any]:
    doc: dict[str, Any] = yaml.safe_load(SPEC_PATH.read_text(encoding="utf-8"))
    return doc


def _resolve(spec: dict[str, Any], node: Any) -> Any:
    while isinstance(node, dict) and isinstance(node.get("$ref"), str):
        target: Any = spec
        for part in node["$ref"].removeprefix("#/").split("/"):
            target = target[part.replace("~1", "/").replace("~0", "~")]
        node = target
    return node


def _request_schemas(spec: dict[str, Any]) -> Iterator[tuple[str, Any]]:
    for path, item in spec["paths"].items():
        for method, op in _resolve(spec, item).items():
            if method not in METHODS or "requestBody" not in op:
                continue
            for media, content in _resolve(spec, op["requestBody"]).get("content", {}).items():
                yield f"{method.upper()} {path} ({media})", content.get("schema", {})


def _subschemas(node: Any) -> Iterator[Any]:
    if not isinstance(node, dict):
        return
    for key in ("properties", "patternProperties", "$defs"):
        yield from (node.get(key) or {}).values()
    for key in ("items", "additionalProperties", "not", "contains", "unevaluatedProperties"):
        if isinstance(node.get(key), dict):
            yield node[key]
    for key in ("allOf", "oneOf", "anyOf", "prefixItems"):
        yield from node.get(key) or []


def optional_defaults(spec: dict[str, Any]) -> list[str]:
    """Every optional property with a ``default`` in a schema a request body reaches
    (``where: Schema.property``)."""
    found: list[str] = []
    seen: set[int] = set()
    todo = [(where, schema) for where, schema in _request_schemas(spec)]
    while todo:
        where, raw = todo.pop()
        name = raw["$ref"].rsplit("/", 1)[-1] if isinstance(raw, dict) and "$ref" in raw else where
        node = _resolve(spec, raw)
        if not isinstance(node, dict) or id(node) in seen:
            continue
        seen.add(id(node))
        required = set(node.get("required") or [])
        for prop, sub in (node.get("properties") or {}).items():
            if prop not in required and ("default" in sub or "default" in _resolve(spec, sub)):
                found.append(f"{name}.{prop}")
        todo += [(name, sub) for sub in _subschemas(node)]
    return sorted(set(found))


def test_the_rule_finds_a_default_wherever_a_request_body_reaches(spec: dict[str, Any]) -> None:
    """The check can fail: ``default: 0`` back on ``CreateGame.bot_pace_seconds`` (as it was), a
    default on a schema reached through a ``$ref`` and an ``anyOf``, and on an inline body."""
    bad = copy.deepcopy(spec)
    schemas = bad["components"]["schemas"]
    schemas["CreateGame"]["properties"]["bot_pace_seconds"]["default"] = 0
    schemas["TimeControl"]["properties"]["bank"]["default"] = 0
    schemas["SeatConfig"]["oneOf"][1]["properties"]["label"] = {"type": "string", "default": ""}
    bad["paths"]["/inline"] = {
        "post": {
            "requestBody": {
                "content": {
                    "application/json": {
                        "schema": {"type": "object", "properties": {"n": {"default": 1}}}
                    }
                }
            },
            "responses": {"204": {"description": "no content"}},
        }
    }
    found = optional_defaults(bad)
    assert "CreateGame.bot_pace_seconds" in found
    assert "TimeControl.bank" in found
    assert "POST /inline (application/json).n" in found
    assert "SeatConfig.label" in found
    # a default on a required property, or in a response-only schema, is not a request's concern
    fine = copy.deepcopy(spec)
    fine["components"]["schemas"]["CreateGame"]["properties"]["seats"]["default"] = []
    assert optional_defaults(fine) == []


def test_the_keep_alive_interval_and_read_timeout_are_stated_where_streams_are(
    spec: dict[str, Any],
) -> None:
    """A client needs the keep-alive interval to choose its streams' read timeout: the spec's,
    the API guide's and the bot guide's figures are the server's (twice it for the timeout), and
    a stream's own description that names its keep-alives gives the same interval."""
    keepalive = DEFAULTS["SSE_KEEPALIVE_SECONDS"]
    assert keepalive == int(keepalive)
    every = f"`: keep-alive` comment after {int(keepalive)} s without"
    timeouts = (f"read timeout of {2 * int(keepalive)} s", f"{2 * int(keepalive)} s read timeout")
    for where in ("openapi.yaml", "docs/api-guide.md", "docs/bots.md"):
        if where == "openapi.yaml":
            text = spec["info"]["description"]
        else:
            text = (ROOT / where).read_text(encoding="utf-8")
        text = " ".join(text.replace("**", "").split())
        assert every in text, where
        assert any(t in text for t in timeouts), where
    streams = [
        (path, " ".join(item["get"]["description"].split()))
        for path, item in spec["paths"].items()
        if "text/event-stream" in str((item.get("get") or {}).get("responses"))
    ]
    assert len(streams) >= 3, streams
    for path, text in streams:
        if "keep-alive" in text:  # a stream that names its keep-alives gives their interval
            assert f"after {int(keepalive)} s" in text, path
