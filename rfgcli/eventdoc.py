"""The event catalogue, generated from the code: ``docs/events.md`` and ``docs/events.schema.json``,
and from the latter the schemas of a log's lines (``rfgcli.logschema``: ``docs/log.schema.json``
and openapi.yaml's generated components).

``python -m rfgcli.eventdoc`` writes them all (``tests/engine/test_event_catalogue.py`` fails when
they and the code disagree). Where each fact comes from:

* the event types: the fold registry (``@folds`` / ``@creates``, ``engine/fold.py``): a type the
  engine does not fold cannot be in a log;
* the module that emits each type: the ``ev("Type", ...)`` calls in ``engine/`` (read with ``ast``),
  the module that folds it: the registered fold function's module;
* the fields and their JSON types: the events of real play, collected here (``samples``): bot
  games of 2 to 5 seats (with and without the first-game arrangement), every scenario under
  ``tests/scenarios/``, resignations (3 and 2 seats; rules 5 and 4), an abandonment, an
  abort, and the setup of Ambition games (with the tests' synthetic component file,
  ``tests/data/ambition-synthetic.yaml``, which the Ambition scenarios use too). A field present in every sample is required; fields a call site names
  (``ev(..., field=...)``) but no sample showed are listed too;
* the visibility: ``engine.observe.VISIBILITY`` and what ``engine.redact`` leaves another viewer
  of each sample.

The JSON Schema is inferred from the same samples: each event type's top level is closed (no field
but those listed), the objects inside are open (a rarely seen key is not an error).
"""

from __future__ import annotations

import ast
import json
import re
import sys
from collections.abc import Iterable, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import engine
from bots.arena import play_game
from engine import catalogue as engine_catalogue
from engine import fold, scenario
from engine.ambition import components
from engine.observe import SERVER_FIELDS, VISIBILITY

from . import logschema
from .scenario import load

ROOT = Path(__file__).resolve().parent.parent
DOC = ROOT / "docs" / "events.md"
SCHEMA = ROOT / "docs" / "events.schema.json"
_ENGINE = Path(engine.__file__).resolve().parent
_SCENARIOS = ROOT / "tests" / "scenarios"
#: the Ambition component file of the samples: made-up faces and objectives (tests/ambition.py)
_AMBITION = ROOT / "tests" / "data" / "ambition-synthetic.yaml"
#: the bot games sampled: (seats, first-game arrangement)
GAMES = [(n, first) for n in range(2, 6) for first in (False, True)]
#: fields every event has
_ENVELOPE = ("type", "v")
#: object keys that name things (dice, seats, cards), so the object is a map, not a record
_MAP_KEY = re.compile(r"^(\d+|[A-Z]+\d+[a-z]?)$")


# -- where each type is emitted, read from the source ------------------------------------------


@dataclass
class Site:
    """The ``ev("Type", ...)`` calls of one type: their modules and the fields they name."""

    modules: set[str] = field(default_factory=set)
    fields: list[str] = field(default_factory=list)


def emitters() -> dict[str, Site]:
    """event type -> where ``ev("Type", ...)`` is called in engine/ and the fields it names."""
    out: dict[str, Site] = {}
    for path in sorted(_ENGINE.rglob("*.py")):
        rel = path.relative_to(_ENGINE.parent).as_posix()
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if not (
                isinstance(node, ast.Call)
                and isinstance(node.func, ast.Name)
                and node.func.id == "ev"
                and node.args
                and isinstance(node.args[0], ast.Constant)
                and isinstance(node.args[0].value, str)
            ):
                continue
            site = out.setdefault(node.args[0].value, Site())
            site.modules.add(rel)
            for kw in node.keywords:  # (fields passed with ``**extra`` come from the samples)
                if kw.arg is not None and kw.arg not in site.fields:
                    site.fields.append(kw.arg)
    return out


def folders() -> dict[str, str]:
    """event type -> the module whose function folds it."""
    fns = {**fold._CREATORS, **fold._FOLDS}
    return {t: fn.__module__.replace(".", "/") + ".py" for t, fn in fns.items()}


# -- the samples --------------------------------------------------------------------------------


def scenario_files() -> list[Path]:
    return sorted(_SCENARIOS.rglob("*.yaml"))


def samples() -> Iterator[dict[str, Any]]:
    """Every event of the sampled play, in a fixed order (the same events on every run)."""
    for n, first in GAMES:
        yield from play_game(f"eventdoc:{n}:{int(first)}", n, options={"first_game": first}).events
    engine_catalogue.install(components.load_file(_AMBITION))
    for objectives in (False, True):
        options = {"ambition": True, "objectives": objectives, "first_game": True}
        yield from engine.create(f"eventdoc:ambition:{int(objectives)}", 4, options)
    for path in scenario_files():
        yield from scenario.run(load(str(path)))["events"]
    # a resignation the others play on after, one that ends the game, one of rules version 4
    # (its SeatResigned names no step), an abandonment and an abort
    for kind, players, rules in (
        ("resign", 3, None),
        ("resign", 2, None),
        ("resign", 3, 4),
        ("abandon", 3, None),
        ("abort", 3, None),
    ):
        name = f"eventdoc:{kind}" + (f":{players}" if players != 3 else "")
        name += f":rules{rules}" if rules else ""
        state, events = engine.new_game(name, players, rules=rules)
        yield from events
        cmd = {"kind": kind}
        record = engine.command_submitted(1, cmd)
        engine.evolve(state, record)
        yield record
        yield from engine.play(state, 1, cmd)


# -- JSON shapes ----------------------------------------------------------------------------------


def _json_type(x: Any) -> str:
    if x is None:
        return "null"
    if isinstance(x, bool):
        return "boolean"
    if isinstance(x, int):
        return "integer"
    if isinstance(x, float):
        return "number"
    if isinstance(x, str):
        return "string"
    if isinstance(x, list):
        return "array"
    if isinstance(x, dict):
        return "object"
    raise TypeError(f"not JSON: {x!r}")


class Shape:
    """The JSON values seen at one place of an event, summed up."""

    def __init__(self) -> None:
        self.seen = 0
        self.types: set[str] = set()
        self.items: Shape | None = None
        self.keys: dict[str, Shape] = {}
        self.objects = 0

    def add(self, x: Any) -> None:
        self.seen += 1
        t = _json_type(x)
        self.types.add(t)
        if t == "array":
            self.items = self.items or Shape()
            for y in x:
                self.items.add(y)
        elif t == "object":
            self.objects += 1
            for k, y in x.items():
                self.keys.setdefault(k, Shape()).add(y)

    def is_map(self) -> bool:
        return bool(self.keys) and all(_MAP_KEY.match(k) for k in self.keys)

    def values(self) -> Shape:
        """A map's values, as one shape."""
        out = Shape()
        for s in self.keys.values():
            out.merge(s)
        return out

    def merge(self, other: Shape) -> None:
        self.seen += other.seen
        self.types |= other.types
        self.objects += other.objects
        if other.items is not None:
            self.items = self.items or Shape()
            self.items.merge(other.items)
        for k, s in other.keys.items():
            self.keys.setdefault(k, Shape()).merge(s)

    def required(self) -> list[str]:
        return [k for k, s in self.keys.items() if s.seen == self.objects]

    def schema(self) -> dict[str, Any]:
        alts: list[dict[str, Any]] = []
        for t in sorted(self.types):
            s: dict[str, Any] = {"type": t}
            if t == "array" and self.items is not None and self.items.seen:
                s["items"] = self.items.schema()
            elif t == "object" and self.is_map():
                s["additionalProperties"] = self.values().schema()
            elif t == "object" and self.keys:
                s["properties"] = {k: v.schema() for k, v in sorted(self.keys.items())}
                if self.required():
                    s["required"] = sorted(self.required())
            alts.append(s)
        if len(alts) == 1:
            return alts[0]
        if all(len(a) == 1 for a in alts):
            return {"type": [a["type"] for a in alts]}
        return {"anyOf": alts}

    def describe(self, depth: int = 0) -> str:
        """The shape in a few words for the table: ``array of integer``, ``object {a, b?}``."""
        words = []
        for t in sorted(self.types, key=lambda t: (t == "null", t)):
            if t == "array" and self.items is not None and self.items.seen:
                words.append(f"array of {self.items.describe(depth + 1)}")
            elif t == "object" and self.is_map():
                words.append(f"object of {self.values().describe(depth + 1)}")
            elif t == "object" and self.keys and depth < 2 and len(self.keys) <= 8:
                req = set(self.required())
                keys = ", ".join(k if k in req else f"{k}?" for k in self.keys)
                words.append(f"object {{{keys}}}")
            else:
                words.append(t)
        text = " or ".join(words)
        return f"({text})" if depth and len(words) > 1 else text


# -- the catalogue --------------------------------------------------------------------------------


@dataclass
class Entry:
    type: str
    folded_by: str
    emitted_by: list[str]
    visibility: str
    shape: Shape
    #: fields a call site names but no sample showed
    unseen: list[str]
    #: keys another viewer (not the event's seat, not the server) gets of it
    others_see: list[str]


def catalogue(events: Iterable[dict[str, Any]] | None = None) -> dict[str, Entry]:
    """event type -> its entry, for every type the engine folds, in alphabetical order."""
    shapes: dict[str, Shape] = {}
    others: dict[str, dict[str, None]] = {}
    for e in samples() if events is None else events:
        t = e["type"]
        shapes.setdefault(t, Shape()).add(e)
        seat = e.get("seat")
        viewer: int | str = (seat + 1) if isinstance(seat, int) else "public"
        others.setdefault(t, {}).update(dict.fromkeys(engine.redact(e, viewer)))
    sites = emitters()
    out = {}
    for t, module in sorted(folders().items()):
        shape = shapes.get(t, Shape())
        site = sites.get(t, Site())
        out[t] = Entry(
            type=t,
            folded_by=module,
            emitted_by=sorted(site.modules),
            visibility=VISIBILITY.get(t, "public"),
            shape=shape,
            unseen=[f for f in site.fields if f not in shape.keys],
            others_see=[k for k in others.get(t, {}) if k not in _ENVELOPE],
        )
    return out


def _fields(entry: Entry) -> list[str]:
    return [k for k in entry.shape.keys if k not in _ENVELOPE]


def markdown(cat: dict[str, Entry]) -> str:
    lines = [
        "# Events: type, fields, visibility, emitter",
        "",
        "Generated by `python -m rfgcli.eventdoc` (which also writes",
        "[events.schema.json](events.schema.json), a JSON Schema of each type) from the code:",
        "the types the engine folds (`@folds` / `@creates`, `engine/fold.py`), the",
        '`ev("Type", ...)` calls that emit them, the visibility table (`engine/observe.py`) and the',
        f"fields seen in {len(GAMES)} bot games of 2 to 5 seats, every scenario under",
        "`tests/scenarios/`, resignations (3 and 2 seats; rules 5 and 4), an abandonment and an",
        "abort.",
        "`tests/engine/test_event_catalogue.py` fails when this file and the code disagree.",
        "",
        "Every event also has `type` (string: its name) and `v` (integer: the event schema version,",
        f"{fold.SCHEMA_VERSION}). A field marked *optional* is absent from some events of its type.",
        "",
        "**Visibility** (`engine.observe.redact`, used by every projection and feed): *public*: every",
        "viewer sees the whole event; *seat*: the event's `seat` and the server see it whole, any",
        "other viewer gets `seat` and the fields under its `public`; *server*: other viewers get it",
        "without the server-only fields.",
        "",
        "| event | visibility | emitted by | folded by |",
        "|---|---|---|---|",
    ]
    for t, e in cat.items():
        emitted = ", ".join(f"`{m}`" for m in e.emitted_by) or "(no `ev` call)"
        lines.append(f"| [`{t}`](#{t.lower()}) | {e.visibility} | {emitted} | `{e.folded_by}` |")
    for t, e in cat.items():
        lines += ["", f"## {t}", ""]
        if e.visibility == "seat":
            seen = ", ".join(f"`{k}`" for k in e.others_see)
            lines.append(f"Visibility: seat. Other viewers see {seen}.")
        elif e.visibility == "server":
            hidden = ", ".join(f"`{k}`" for k in SERVER_FIELDS.get(t, ()))
            lines.append(f"Visibility: server. Other viewers see it without {hidden}.")
        else:
            lines.append("Visibility: public.")
        lines += ["", "| field | JSON type | |", "|---|---|---|"]
        required = set(e.shape.required())
        for k in _fields(e):
            note = "" if k in required else "optional"
            lines.append(f"| `{k}` | {e.shape.keys[k].describe()} | {note} |")
        for k in e.unseen:
            lines.append(f"| `{k}` | (no sample) | named by an `ev` call |")
    return "\n".join(lines) + "\n"


def schema(cat: dict[str, Entry]) -> dict[str, Any]:
    defs: dict[str, Any] = {}
    for t, e in cat.items():
        s: dict[str, Any] = e.shape.schema() if e.shape.seen else {"type": "object"}
        props = dict(s.get("properties", {}))
        props["type"] = {"const": t}
        props["v"] = {"const": fold.SCHEMA_VERSION}
        for k in e.unseen:
            props[k] = {}
        defs[t] = {
            "type": "object",
            "description": f"visibility: {e.visibility}; emitted by "
            + (", ".join(e.emitted_by) or "(no ev call)")
            + f"; folded by {e.folded_by}",
            "properties": props,
            "required": sorted(set(s.get("required", [])) | set(_ENVELOPE)),
            "additionalProperties": False,
        }
    return {
        "$schema": "https://json-schema.org/draft/2020-12/schema",
        "$id": "events.schema.json",
        "title": "Roll for the Galaxy server: game events",
        "description": "Generated by python -m rfgcli.eventdoc (see docs/events.md).",
        "oneOf": [{"$ref": f"#/$defs/{t}"} for t in cat],
        "$defs": defs,
    }


def schema_json(cat: dict[str, Entry]) -> str:
    return json.dumps(schema(cat), indent=2, sort_keys=False) + "\n"


def main() -> int:
    cat = catalogue()
    DOC.write_text(markdown(cat), encoding="utf-8")
    SCHEMA.write_text(schema_json(cat), encoding="utf-8")
    events = schema(cat)
    logschema.LOG_SCHEMA.write_text(logschema.log_schema_json(events), encoding="utf-8")
    spec = logschema.OPENAPI.read_text(encoding="utf-8")
    logschema.OPENAPI.write_text(logschema.openapi_text(events, spec), encoding="utf-8")
    written = [DOC, SCHEMA, logschema.LOG_SCHEMA, logschema.OPENAPI]
    print("wrote " + ", ".join(str(p.relative_to(ROOT)) for p in written), file=sys.stderr)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
