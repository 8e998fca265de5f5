"""The published JSON Schema of the Ambition component file, ``docs/ambition-components.schema.json``,
generated from the loader's own vocabulary (``engine.ambition.components``: the phases, the
checks, the condition types and their fields, the dice and their counts), so the two cannot drift.

``python -m rfgcli.componentschema`` writes it; ``tests/engine/test_ambition_schema.py`` fails when
the file and the code differ, and checks that the loader and the schema accept and refuse the
same files. What a schema cannot say the loader still checks: objective ids given once, tile
numbers given once, a two-phase face's two phases different.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Any

from engine.ambition import components as c

SCHEMA = Path(__file__).resolve().parent.parent / "docs" / "ambition-components.schema.json"

_TEXT: dict[str, Any] = {"type": "string", "pattern": "\\S"}


def _names(values: tuple[str, ...]) -> dict[str, Any]:
    return {"type": "array", "minItems": 1, "uniqueItems": True, "items": {"enum": list(values)}}


def _field(kind: str) -> dict[str, Any]:
    if kind == "int":
        return {"type": "integer", "minimum": 0}
    if kind == "conditions":
        return {"type": "array", "minItems": 1, "items": {"$ref": "#/$defs/condition"}}
    vocab = {
        "phases": c.PHASES,
        "world_colors": c.WORLD_COLORS,
        "die_colors": c.DIE_COLORS,
        "tasks": c.TASKS,
    }
    return _names(vocab[kind])


def _condition(ctype: str, fields: dict[str, str]) -> dict[str, Any]:
    props: dict[str, Any] = {"type": {"const": ctype}}
    for name, kind in fields.items():
        props[name] = _field(kind.rstrip("?"))
    required = ["type"] + [n for n, k in fields.items() if not k.endswith("?")]
    return {
        "type": "object",
        "required": required,
        "additionalProperties": False,
        "properties": props,
    }


def _number(first: int) -> dict[str, Any]:
    return {"type": "integer", "minimum": first, "maximum": c.LAST_NUMBER}


def schema() -> dict[str, Any]:
    die = {
        color: {
            "type": "object",
            "description": f"The {name} ({color}) die: {count} in the box",
            "required": ["name", "count", "faces"],
            "additionalProperties": False,
            "properties": {
                "name": _TEXT,
                "count": {"const": count},
                "faces": {
                    "type": "array",
                    "minItems": c.FACES_PER_DIE,
                    "maxItems": c.FACES_PER_DIE,
                    "items": {"$ref": "#/$defs/face"},
                },
            },
        }
        for color, (name, count) in c.NEW_DICE.items()
    }
    immediate = {
        "type": "object",
        "properties": {
            "dice_gained": {
                "type": ["array", "null"],
                "items": {
                    "type": "object",
                    "required": ["color", "to"],
                    "properties": {
                        "color": {"enum": list(c.DIE_COLORS)},
                        "to": {"enum": list(c.GAIN_PLACES)},
                    },
                },
            },
            **{
                k: {"type": ["integer", "null"], "minimum": 0}
                for k in ("credits", "dice_removed", "start_credits")
            },
        },
    }
    world = {
        "type": "object",
        "required": ["name", "cost", "color"],
        "properties": {
            "name": _TEXT,
            "cost": {"type": "integer", "minimum": 0},
            "color": {"enum": list(c.WORLD_COLORS)},
            "immediate": {"anyOf": [{"type": "null"}, {"$ref": "#/$defs/immediate"}]},
        },
    }
    development = {
        "type": "object",
        "required": ["name", "cost", "kind", "power_id"],
        "properties": {
            "name": _TEXT,
            "cost": {"type": "integer", "minimum": 0},
            "kind": {"enum": list(c.DEV_KINDS)},
            "power_id": _TEXT,
            "effects": {
                "type": ["array", "null"],
                "items": {
                    "type": "object",
                    "required": ["type"],
                    "properties": {"type": _TEXT},
                    "if": {"properties": {"type": {"const": "immediate"}}},
                    "then": {"$ref": "#/$defs/immediate"},
                },
            },
        },
    }
    tiles = ["factions", "home_worlds", "game_tiles"]
    return {
        "$schema": "https://json-schema.org/draft/2020-12/schema",
        "$id": "https://rfg.example/docs/ambition-components.schema.json",
        "title": "Ambition component file",
        "description": (
            "The Ambition components a host supplies (docs/ambition.md): the Leader and "
            "Entrepreneur die faces, the objective tiles, and optionally the factions, home "
            "worlds and game tiles (all three or none: without them the engine's shipped tiles "
            "are used). Generated from engine/ambition/components.py by python -m "
            "rfgcli.componentschema; the loader also checks that objective ids and tile numbers "
            "are given once and that a two-phase face shows two different phases."
        ),
        "type": "object",
        "required": ["format", "name", "dice", "objectives"],
        "additionalProperties": False,
        "dependentRequired": {t: [o for o in tiles if o != t] for t in tiles},
        "properties": {
            "format": {"const": c.FORMAT},
            "name": {**_TEXT, "description": "Shown to people"},
            "dice": {
                "type": "object",
                "required": list(c.NEW_DICE),
                "additionalProperties": False,
                "properties": die,
            },
            "objectives": {
                "type": "array",
                "minItems": c.OBJECTIVES_IN_PLAY,
                "items": {"$ref": "#/$defs/objective"},
            },
            "factions": {
                "type": "array",
                "minItems": 1,
                "items": {
                    "type": "object",
                    "required": ["id"],
                    "properties": {
                        "id": _number(c.FIRST_FACTION),
                        "developments": {"type": "array", "items": {"$ref": "#/$defs/development"}},
                        "worlds": {"type": "array", "items": {"$ref": "#/$defs/world"}},
                    },
                    "anyOf": [
                        {
                            "required": ["developments"],
                            "properties": {"developments": {"minItems": 1}},
                        },
                        {"required": ["worlds"], "properties": {"worlds": {"minItems": 1}}},
                    ],
                },
            },
            "home_worlds": {
                "type": "array",
                "minItems": 1,
                "items": {
                    "type": "object",
                    "required": ["id", "world"],
                    "properties": {"id": _number(c.FIRST_HOME), "world": {"$ref": "#/$defs/world"}},
                },
            },
            "game_tiles": {
                "type": "array",
                "minItems": 1,
                "items": {
                    "type": "object",
                    "required": ["id", "development", "world"],
                    "properties": {
                        "id": _number(c.FIRST_TILE),
                        "development": {"$ref": "#/$defs/development"},
                        "world": {"$ref": "#/$defs/world"},
                    },
                },
            },
        },
        "$defs": {
            "face": {
                "description": (
                    "One face: one phase, two different phases, or [wild]; dollar: the $ "
                    "symbol (not on a wild face)"
                ),
                "oneOf": [
                    {
                        "type": "object",
                        "required": ["phases"],
                        "additionalProperties": False,
                        "properties": {
                            "phases": {"const": [c.WILD]},
                            "dollar": {"const": False},
                        },
                    },
                    {
                        "type": "object",
                        "required": ["phases"],
                        "additionalProperties": False,
                        "properties": {
                            "phases": {
                                "type": "array",
                                "minItems": 1,
                                "maxItems": 2,
                                "uniqueItems": True,
                                "items": {"enum": list(c.PHASES)},
                            },
                            "dollar": {"type": "boolean"},
                        },
                    },
                ],
            },
            "objective": {
                "type": "object",
                "required": ["id", "name", "check", "condition", "talents"],
                "additionalProperties": False,
                "properties": {
                    "id": {"type": "integer", "minimum": 1},
                    "name": _TEXT,
                    "check": {"enum": list(c.CHECKS)},
                    "condition": {"$ref": "#/$defs/condition"},
                    "talents": {"type": "integer", "minimum": 1},
                },
            },
            "condition": {
                "type": "object",
                "required": ["type"],
                "properties": {"type": {"enum": list(c.CONDITIONS)}},
                "oneOf": [_condition(t, f) for t, f in c.CONDITIONS.items()],
            },
            "immediate": immediate,
            "world": world,
            "development": development,
        },
    }


def schema_json() -> str:
    return json.dumps(schema(), indent=2, ensure_ascii=False) + "\n"


def main() -> int:
    SCHEMA.write_text(schema_json(), encoding="utf-8")
    print(f"wrote {SCHEMA.relative_to(SCHEMA.parent.parent)}", file=sys.stderr)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
