"""A client generated from openapi.yaml with openapi-typescript's default options can send the
smallest request of every operation that takes a body: clients/typescript/scripts/
minimal-requests.mjs writes one (required properties only, from the spec's examples and enums)
for each such operation, and the client's build (``npm run build``, ``make ts-client``)
type-checks them with ``tsc --strict``. Here: the requests cover every operation and are valid
against the spec, and the check fails on a spec it should refuse - a new operation whose optional
property has a ``default`` (openapi-typescript then makes the property required)."""

from __future__ import annotations

import json
import subprocess
from pathlib import Path
from typing import Any

import yaml
from openapi_schema_validator import OAS31Validator
from referencing import Registry, Resource
from referencing.jsonschema import DRAFT202012

from .conftest import ROOT

SPEC = ROOT / "openapi.yaml"
SCRIPT = Path("scripts") / "minimal-requests.mjs"
METHODS = {"get", "put", "post", "delete", "patch", "options", "head", "trace"}


def _requests(ts: Path, spec: Path) -> list[dict[str, Any]]:
    run = subprocess.run(
        ["node", str(SCRIPT), str(spec), "--json"],
        cwd=ts,
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert run.returncode == 0, run.stderr
    return [json.loads(line) for line in run.stdout.splitlines()]


def test_every_operation_with_a_body_has_a_minimal_request_the_spec_accepts(
    ts_client: Path,
) -> None:
    spec = yaml.safe_load(SPEC.read_text(encoding="utf-8"))
    expected = {
        (path, method, media)
        for path, item in spec["paths"].items()
        for method, op in item.items()
        if method in METHODS and "requestBody" in op
        for media in op["requestBody"]["content"]
    }
    requests = _requests(ts_client, SPEC)
    assert {(r["path"], r["method"], r["mediaType"]) for r in requests} == expected
    registry: Registry = Registry().with_resource(
        "urn:spec", Resource.from_contents(spec, default_specification=DRAFT202012)
    )
    for r in requests:
        where = f"{r['method'].upper()} {r['path']} ({r['mediaType']})"
        schema = spec["paths"][r["path"]][r["method"]]["requestBody"]["content"][r["mediaType"]]
        pointer = "/".join(
            p.replace("~", "~0").replace("/", "~1")
            for p in ("paths", r["path"], r["method"], "requestBody", "content", r["mediaType"])
        )
        assert "schema" in schema, where
        validator = OAS31Validator({"$ref": f"urn:spec#/{pointer}/schema"}, registry=registry)
        errors = [e.message for e in validator.iter_errors(r["body"])]
        assert not errors, (where, r["body"], errors)
        if "{" in r["path"]:
            assert set(r["params"]["path"]) == set(
                seg[1:-1] for seg in r["path"].split("/") if seg.startswith("{")
            ), where


def test_the_type_check_refuses_an_optional_property_with_a_default(
    ts_client: Path, tmp_path: Path
) -> None:
    """A new operation is covered without being listed anywhere, and its optional property with
    a ``default`` fails the type check, as ``CreateGame.bot_pace_seconds`` did."""
    spec = yaml.safe_load(SPEC.read_text(encoding="utf-8"))
    spec["components"]["schemas"]["ProbeRequest"] = {
        "type": "object",
        "required": ["name"],
        "properties": {
            "name": {"type": "string", "examples": ["probe"]},
            "pace_probe": {"type": "number", "default": 0},
        },
    }
    spec["paths"]["/probes/{probe}"] = {
        "parameters": [
            {"name": "probe", "in": "path", "required": True, "schema": {"type": "string"}}
        ],
        "post": {
            "operationId": "createProbe",
            "requestBody": {
                "required": True,
                "content": {
                    "application/json": {"schema": {"$ref": "#/components/schemas/ProbeRequest"}}
                },
            },
            "responses": {"204": {"description": "made"}},
        },
    }
    bad = tmp_path / "openapi.yaml"
    bad.write_text(yaml.safe_dump(spec, sort_keys=False), encoding="utf-8")
    out = tmp_path / "check"
    out.mkdir()
    (out / "package.json").write_text('{"type": "module"}\n', encoding="utf-8")
    (out / "node_modules").symlink_to(ts_client / "node_modules")  # openapi-fetch's types
    (out / "tsconfig.json").write_text(
        json.dumps(
            {
                "compilerOptions": {
                    "target": "ES2022",
                    "module": "NodeNext",
                    "moduleResolution": "NodeNext",
                    "strict": True,
                    "noEmit": True,
                    "types": [],
                },
                "include": ["*.ts"],
            }
        ),
        encoding="utf-8",
    )
    bin_ = ts_client / "node_modules" / ".bin"
    steps = [
        [str(bin_ / "openapi-typescript"), str(bad), "-o", str(out / "api.ts")],
        ["node", str(SCRIPT), str(bad), str(out / "minimal-requests.ts")],
    ]
    for step in steps:
        run = subprocess.run(step, cwd=ts_client, capture_output=True, text=True, timeout=120)
        assert run.returncode == 0, run.stdout + run.stderr
    assert '"/probes/{probe}"' in (out / "minimal-requests.ts").read_text(encoding="utf-8")
    tsc = [str(bin_ / "tsc"), "-p", str(out / "tsconfig.json")]
    run = subprocess.run(tsc, cwd=ts_client, capture_output=True, text=True, timeout=300)
    assert run.returncode != 0, "tsc accepted a request without a property the spec leaves out"
    errors = [line for line in run.stdout.splitlines() if "error TS" in line]
    assert errors and all("'pace_probe' is missing" in line for line in errors), run.stdout
    # and the same spec without the default compiles: the refusal was the default's doing
    del spec["components"]["schemas"]["ProbeRequest"]["properties"]["pace_probe"]["default"]
    bad.write_text(yaml.safe_dump(spec, sort_keys=False), encoding="utf-8")
    for step in steps:
        assert subprocess.run(step, cwd=ts_client, capture_output=True, timeout=120).returncode == 0
    run = subprocess.run(tsc, cwd=ts_client, capture_output=True, text=True, timeout=300)
    assert run.returncode == 0, run.stdout + run.stderr
