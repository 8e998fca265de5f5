"""The schemas of a log export's lines, generated from the event schema (``rfgcli.eventdoc``):
``docs/log.schema.json`` (served at ``GET /schemas/log.json``) and the same definitions as
openapi.yaml's generated components (the end of the file, after ``MARKER``).

A full log (docs/log-format.md) is envelopes, one per line - ``<Type>Envelope``, whose
``payload`` is the engine event without ``type`` and ``v`` (``<Type>Payload``) - then one
signature line (``LogSignatureLine``). ``LogLine`` is either.
"""

from __future__ import annotations

import copy
import json
from pathlib import Path
from typing import Any

from events.verify.signing import ALG, SIGNED_FIELDS

ROOT = Path(__file__).resolve().parent.parent
LOG_SCHEMA = ROOT / "docs" / "log.schema.json"
OPENAPI = ROOT / "openapi.yaml"
MARKER = (
    "    # ---------------------------------------------------------------- log lines (generated)\n"
)
_HEADER = (
    "    # Written by python -m rfgcli.eventdoc from the events the engine folds (docs/log.schema.json,\n"
    "    # served at GET /schemas/log.json): edit the code, never these lines; from here to the end\n"
    "    # of the file (tests/engine/test_event_catalogue.py checks they are current).\n"
)
_ENGINE_KEYS = ("type", "v")
#: what every envelope has (docs/log-format.md, section 3); each type's adds its type,
#: schema_version and payload (one definition of each field: generators merge allOf field by field)
_FIELDS: dict[str, Any] = {
    "type": "object",
    "description": "The fields every envelope has besides its type, schema_version and payload "
    "(docs/log-format.md)",
    "required": ["actor", "command_id", "game_id", "hash", "prev_hash", "seq", "ts", "visibility"],
    "properties": {
        "actor": {"type": "string", "description": "seat:N, bot:<name>, timeout or system"},
        "command_id": {"type": "string"},
        "game_id": {"type": "string"},
        "hash": {"$ref": "#/$defs/LogHash"},
        "prev_hash": {"$ref": "#/$defs/LogHash"},
        "seq": {"type": "integer", "minimum": 1},
        "ts": {"type": "string", "format": "date-time"},
        "visibility": {"type": "string", "pattern": "^(public|server|seat:[0-9]+)$"},
    },
}
_HASH = {"type": "string", "pattern": "^[0-9a-f]{64}$", "description": "hex SHA-256"}


def definitions(events: dict[str, Any]) -> dict[str, Any]:
    """name -> schema of the log's lines (``$ref`` as ``#/$defs/<name>``), from the events'
    JSON Schema (``eventdoc.schema``)."""
    defs: dict[str, Any] = {"LogHash": _HASH, "LogEnvelopeFields": _FIELDS}
    types = list(events["$defs"])
    for t in types:
        d = events["$defs"][t]
        defs[f"{t}Payload"] = {
            "type": "object",
            "description": f"The payload of a {t} envelope: the engine event without type and v "
            f"({d['description']})",
            "properties": {k: v for k, v in d["properties"].items() if k not in _ENGINE_KEYS},
            "required": [k for k in d["required"] if k not in _ENGINE_KEYS],
            "additionalProperties": False,
        }
        defs[f"{t}Envelope"] = {
            "description": f"A log line: the envelope of a {t} event",
            "allOf": [
                {"$ref": "#/$defs/LogEnvelopeFields"},
                {
                    "type": "object",
                    "required": ["type", "schema_version", "payload"],
                    "properties": {
                        "type": {"const": t},
                        "schema_version": copy.deepcopy(d["properties"]["v"]),
                        "payload": {"$ref": f"#/$defs/{t}Payload"},
                    },
                },
            ],
            "unevaluatedProperties": False,
        }
    defs["LogEnvelope"] = {
        "description": "One envelope of a full log, by its type",
        "oneOf": [{"$ref": f"#/$defs/{t}Envelope"} for t in types],
    }
    ended = events["$defs"]["GameEnded"]["properties"]
    defs["LogSignature"] = {
        "type": "object",
        "description": "The server's signature of the log: sig is the Ed25519 signature of the "
        "canonical JSON of the other fields (docs/log-format.md)",
        "required": [*SIGNED_FIELDS, "sig"],
        "additionalProperties": False,
        "properties": {
            "alg": {"const": ALG},
            "key_id": {"type": "string", "pattern": "^[0-9a-f]{16}$"},
            "game_id": {"type": "string"},
            "events": {"type": "integer", "minimum": 1},
            "chain_head": {"$ref": "#/$defs/LogHash"},
            "over": {"type": "boolean"},
            "result": {
                "description": "null while the game runs; once it is over, the scores and "
                "winners of the log's GameEnded payload, whichever way it ended (a verifier "
                "refuses a signature whose result differs)",
                "oneOf": [
                    {"type": "null"},
                    {
                        "type": "object",
                        "required": ["scores", "winners"],
                        "additionalProperties": False,
                        "properties": {"scores": ended["scores"], "winners": ended["winners"]},
                    },
                ],
            },
            "sig": {"type": "string", "pattern": "^[A-Za-z0-9+/]{86}==$"},
        },
    }
    defs["LogSignatureLine"] = {
        "type": "object",
        "description": "The last line of a full log",
        "required": ["signature"],
        "additionalProperties": False,
        "properties": {"signature": {"$ref": "#/$defs/LogSignature"}},
    }
    return defs


def log_schema(events: dict[str, Any]) -> dict[str, Any]:
    return {
        "$schema": "https://json-schema.org/draft/2020-12/schema",
        "$id": "log.schema.json",
        "title": "Roll for the Galaxy server: one line of a full game log",
        "description": "Generated by python -m rfgcli.eventdoc (see docs/log-format.md).",
        "oneOf": [{"$ref": "#/$defs/LogEnvelope"}, {"$ref": "#/$defs/LogSignatureLine"}],
        "$defs": definitions(events),
    }


def log_schema_json(events: dict[str, Any]) -> str:
    return json.dumps(log_schema(events), indent=2) + "\n"


def openapi_text(events: dict[str, Any], current: str) -> str:
    """openapi.yaml with its generated components (from ``MARKER`` to the end) written anew."""
    at = current.find(MARKER)
    if at < 0:
        raise ValueError("openapi.yaml lacks the generated components' marker line")
    defs = json.loads(
        json.dumps(definitions(events)).replace('"#/$defs/', '"#/components/schemas/')
    )
    lines = []
    for name, schema in defs.items():  # one line a field: JSON is YAML's flow style
        if "allOf" in schema:  # an envelope: one line
            lines.append(f"    {name}: {_flow(schema)}\n")
            continue
        lines.append(f"    {name}:\n")
        for key, value in schema.items():
            if key == "properties":
                lines.append("      properties:\n")
                lines += [f"        {k}: {_flow(v)}\n" for k, v in value.items()]
            else:
                lines.append(f"      {key}: {_flow(value)}\n")
    return current[:at] + MARKER + _HEADER + "".join(lines)


def _flow(value: Any) -> str:
    return json.dumps(value, ensure_ascii=False)
