"""The Ambition component file: its format, its loader and the errors that name file and field.

A host supplies Ambition's printed components as one YAML (or JSON) file (``docs/ambition.md``;
its JSON Schema is ``docs/ambition-components.schema.json``)::

    format: rfg-ambition-components/1
    name: <shown to people>
    dice:
      black:  {name: Leader,       count: 5, faces: [<face> x6]}
      orange: {name: Entrepreneur, count: 9, faces: [<face> x6]}
    objectives: [{id, name, check, condition, talents}, ...]      # at least 6
    factions: [...]; home_worlds: [...]; game_tiles: [...]        # optional

A face is ``{phases: [p], dollar: bool}``, ``{phases: [p, q], dollar: bool}`` (a two-phase face)
or ``{phases: [wild]}``. Factions, home worlds and game tiles have the record shape of
``engine/data/tiles.yaml``; a file without them gets the ones the engine ships
(``engine/data/ambition_tiles.yaml``, low confidence: see that file).

``load(doc, source)`` is pure: it takes the parsed document and the name of the file it came from
and returns ``Components`` or raises ``ComponentsError`` whose message starts with
``<source>: <field path>:`` (for example ``components.yaml: dice.black.faces[3].phases: ...``).
``load_file(path)`` reads and parses a file first. Nothing here touches the catalogue:
``engine.catalogue.install`` does.

Face codes (how the engine names a face): ``"explore"``, ``"wild"``, a two-phase face
``"explore/produce"`` (its phases in phase order), and a ``$`` face ends in ``"$"``:
``"produce$"``, ``"explore/produce$"``.
"""

from __future__ import annotations

import hashlib
import json
from dataclasses import dataclass
from importlib import resources
from pathlib import Path
from typing import Any

import yaml

from ..canonical import canonical_bytes

FORMAT = "rfg-ambition-components/1"

PHASES: tuple[str, ...] = ("explore", "develop", "settle", "produce", "ship")
WILD = "wild"
WORLD_COLORS: tuple[str, ...] = ("novelty", "rare", "genes", "alien", "gray")
#: every die colour a tile may grant in an Ambition game
DIE_COLORS: tuple[str, ...] = (
    "white",
    "red",
    "purple",
    "blue",
    "brown",
    "green",
    "yellow",
    "black",
    "orange",
)

#: Ambition rulebook, Contents: "38 dice": Leader (black, 5), Entrepreneur (orange, 9)
NEW_DICE: dict[str, tuple[str, int]] = {"black": ("Leader", 5), "orange": ("Entrepreneur", 9)}
FACES_PER_DIE = 6
#: Ambition rulebook, Objectives: "Select 6 to use" (the box holds 20)
OBJECTIVES_IN_PLAY = 6

#: When an objective is checked. Ambition rulebook, Objectives: "check each objective at the end of
#: the listed phases (or as indicated during a step)": the end of a phase, the end of the Manage
#: Empire step, or two step points printed on the tiles: "After Assign, before Reveal" (``assign``)
#: and "After Reveal" (``reveal``).
CHECKS: tuple[str, ...] = ("assign", "reveal", *PHASES, "manage")

#: The condition vocabulary: condition type -> {field: kind}; a field whose kind ends in "?" is
#: optional. Kinds: int (>= 0), phases, world_colors, die_colors, tasks, conditions (a list of
#: conditions, every one must hold). Counts of dice count every die a player owns, wherever it lies
#: ("these dice may be anywhere in your empire"). ``engine.ambition.objectives`` evaluates them.
CONDITIONS: dict[str, dict[str, str]] = {
    # worlds in the tableau (home world and faction worlds included)
    "worlds": {"min": "int", "colors": "world_colors?", "cost_at_least": "int?"},
    # developments in the tableau (faction developments included)
    "developments": {"min": "int", "cost_at_least": "int?"},
    # worlds of at least this many different colours (gray counts as a colour)
    "distinct_world_colors": {"min": "int"},
    # dice owned anywhere in the empire, optionally of these colours
    "dice": {"min": "int", "colors": "die_colors?"},
    # different die colours owned (a Leader die counts as a Home die where the rulebook says so)
    "distinct_die_colors": {"min": "int"},
    # dice in the Citizenry, optionally of these colours
    "citizenry": {"min": "int", "colors": "die_colors?"},
    # goods lying on worlds, optionally on worlds of these colours
    "goods": {"min": "int", "colors": "world_colors?"},
    # galactic credits held
    "credits": {"min": "int"},
    # VP chips held
    "vp_chips": {"min": "int"},
    # goods shipped in this Ship phase, optionally only by these tasks (trade, consume)
    "shipped": {"min": "int", "tasks": "tasks?"},
    # tiles in the construction zone (both stacks)
    "construction": {"min": "int"},
    # the phases selected this round are exactly these
    "selected_phases": {"phases": "phases"},
    # every listed condition holds
    "all_of": {"conditions": "conditions"},
}
TASKS: tuple[str, ...] = ("trade", "consume")

DEV_KINDS: tuple[str, ...] = ("reassign", "power", "immediate")
GAIN_PLACES: tuple[str, ...] = ("cup", "citizenry", "good")
#: the numbers the shipped tiles use; host tiles must keep clear of the base game's
FIRST_FACTION, FIRST_HOME, FIRST_TILE = 10, 10, 56
#: the highest number a host file may give a faction, home world or game tile (the API says 99)
LAST_NUMBER = 99

_Loader = getattr(yaml, "CSafeLoader", yaml.SafeLoader)


class ComponentsError(ValueError):
    """A component file that cannot be used; the message names the file and the field."""

    def __init__(self, source: str, path: str, problem: str) -> None:
        self.source = source
        self.path = path
        self.problem = problem
        where = f"{source}: {path}" if path else source
        super().__init__(f"{where}: {problem}")


@dataclass(frozen=True, slots=True)
class NewDie:
    """One of Ambition's new die types: its colour key, name, box count and six face codes."""

    color: str
    name: str
    count: int
    faces: tuple[str, ...]


@dataclass(frozen=True, slots=True)
class Objective:
    id: int
    name: str
    check: str
    condition: dict[str, Any]
    talents: int


@dataclass(frozen=True, slots=True)
class Components:
    """A loaded component file. ``tiles_shipped`` says the tiles are the engine's own."""

    name: str
    source: str
    digest: str
    dice: dict[str, NewDie]
    objectives: tuple[Objective, ...]
    factions: tuple[dict[str, Any], ...]
    home_worlds: tuple[dict[str, Any], ...]
    game_tiles: tuple[dict[str, Any], ...]
    tiles_shipped: bool

    def summary(self) -> dict[str, str]:
        """What a game records of its components (``GameCreated.components``)."""
        return {"name": self.name, "digest": self.digest}


def face_code(phases: list[str] | tuple[str, ...], dollar: bool) -> str:
    """The engine's name of a face: phases in phase order joined by "/", "$" last if it has one."""
    if list(phases) == [WILD]:
        return WILD
    ordered = sorted(phases, key=PHASES.index)
    return "/".join(ordered) + ("$" if dollar else "")


def shipped_tiles() -> dict[str, Any]:
    """The engine's own Ambition tiles (``engine/data/ambition_tiles.yaml``), parsed."""
    text = (resources.files("engine") / "data" / "ambition_tiles.yaml").read_text(encoding="utf-8")
    doc = yaml.load(text, Loader=_Loader)
    if not isinstance(doc, dict):
        raise ComponentsError("engine/data/ambition_tiles.yaml", "", "not a mapping")
    return doc


def load_file(path: str | Path) -> Components:
    """Read, parse and load a component file (YAML, or JSON, which YAML reads too)."""
    p = Path(path)
    source = str(path)
    try:
        text = p.read_text(encoding="utf-8")
    except OSError as exc:
        raise ComponentsError(source, "", f"cannot be read ({exc.strerror or exc})") from exc
    except UnicodeDecodeError as exc:
        raise ComponentsError(source, "", "is not UTF-8 text") from exc
    try:
        doc = json.loads(text) if p.suffix.lower() == ".json" else yaml.load(text, Loader=_Loader)
    except (yaml.YAMLError, ValueError) as exc:
        raise ComponentsError(source, "", f"is not valid YAML or JSON ({exc})") from exc
    return load(doc, source)


def load(doc: Any, source: str) -> Components:
    """Validate a parsed component file and return its components (see the module docstring)."""
    c = _Checker(source)
    c.mapping(doc, "")
    c.known(
        doc, "", {"format", "name", "dice", "objectives", "factions", "home_worlds", "game_tiles"}
    )
    if doc.get("format") != FORMAT:
        c.fail("format", f"must be {FORMAT!r}, not {doc.get('format')!r}")
    name = c.text(doc.get("name"), "name")
    dice = _dice(c, doc.get("dice"))
    objectives = _objectives(c, doc.get("objectives"))
    given = [k for k in ("factions", "home_worlds", "game_tiles") if k in doc]
    tiles_doc: dict[str, Any] = doc
    if not given:
        tiles_doc = shipped_tiles()
    elif len(given) != 3:
        missing = sorted({"factions", "home_worlds", "game_tiles"} - set(given))
        c.fail(
            missing[0],
            "give factions, home_worlds and game_tiles together, or none of them "
            "(then the engine's shipped tiles are used)",
        )
    tile_checker = c if given else _Checker("engine/data/ambition_tiles.yaml")
    factions = _factions(tile_checker, tiles_doc.get("factions"))
    homes = _homes(tile_checker, tiles_doc.get("home_worlds"))
    tiles = _game_tiles(tile_checker, tiles_doc.get("game_tiles"))
    complete = dict(doc)
    complete.update(factions=list(factions), home_worlds=list(homes), game_tiles=list(tiles))
    try:
        digest = hashlib.sha256(canonical_bytes(complete)).hexdigest()
    except (TypeError, ValueError) as exc:
        raise ComponentsError(source, "", f"holds a value JSON cannot represent ({exc})") from exc
    return Components(
        name=name,
        source=source,
        digest=digest,
        dice=dice,
        objectives=objectives,
        factions=factions,
        home_worlds=homes,
        game_tiles=tiles,
        tiles_shipped=not given,
    )


# --- the checks, one per part of the file -------------------------------------------------------


class _Checker:
    """Type checks that raise ComponentsError naming the source and the field path."""

    def __init__(self, source: str) -> None:
        self.source = source

    def fail(self, path: str, problem: str) -> Any:
        raise ComponentsError(self.source, path, problem)

    def mapping(self, v: Any, path: str) -> dict[str, Any]:
        if not isinstance(v, dict):
            self.fail(path, f"must be a mapping, not {_kind(v)}")
        return v

    def sequence(self, v: Any, path: str) -> list[Any]:
        if not isinstance(v, list):
            self.fail(path, f"must be a list, not {_kind(v)}")
        return v

    def text(self, v: Any, path: str) -> str:
        if not isinstance(v, str) or not v.strip():
            self.fail(path, f"must be a non-empty text, not {_kind(v)}")
        return v

    def integer(self, v: Any, path: str, least: int = 0) -> int:
        if isinstance(v, bool) or not isinstance(v, int):
            self.fail(path, f"must be a whole number, not {_kind(v)}")
        if v < least:
            self.fail(path, f"must be at least {least}, not {v}")
        return v

    def boolean(self, v: Any, path: str) -> bool:
        if not isinstance(v, bool):
            self.fail(path, f"must be true or false, not {_kind(v)}")
        return v

    def one_of(self, v: Any, path: str, allowed: tuple[str, ...]) -> str:
        if v not in allowed:
            self.fail(path, f"must be one of {', '.join(allowed)}; not {v!r}")
        return v

    def names(self, v: Any, path: str, allowed: tuple[str, ...]) -> list[str]:
        items = self.sequence(v, path)
        if not items:
            self.fail(path, "must not be empty")
        for i, x in enumerate(items):
            self.one_of(x, f"{path}[{i}]", allowed)
        if len(set(items)) != len(items):
            self.fail(path, f"names one twice: {items}")
        return items

    def known(self, d: dict[str, Any], path: str, fields: set[str]) -> None:
        extra = sorted(str(k) for k in d if k not in fields)
        if extra:
            self.fail(
                _join(path, extra[0]),
                f"is not a field here; known fields: {', '.join(sorted(fields))}",
            )


def _kind(v: Any) -> str:
    if v is None:
        return "nothing"
    return {
        bool: "true/false",
        int: "a number",
        float: "a number",
        str: f"the text {v!r}" if isinstance(v, str) and len(v) < 40 else "a text",
        list: "a list",
        dict: "a mapping",
    }.get(type(v), type(v).__name__)


def _join(path: str, key: str) -> str:
    return f"{path}.{key}" if path else key


def _dice(c: _Checker, v: Any) -> dict[str, NewDie]:
    dice = c.mapping(v, "dice")
    c.known(dice, "dice", set(NEW_DICE))
    out: dict[str, NewDie] = {}
    for color, (name, count) in NEW_DICE.items():
        path = f"dice.{color}"
        if color not in dice:
            c.fail(path, f"is missing: the {name} ({color}) die's faces are required")
        rec = c.mapping(dice[color], path)
        c.known(rec, path, {"name", "count", "faces"})
        c.text(rec.get("name"), f"{path}.name")
        got = c.integer(rec.get("count"), f"{path}.count", 1)
        if got != count:
            c.fail(f"{path}.count", f"the Ambition box holds {count} {name} dice, not {got}")
        if "faces" not in rec:
            c.fail(f"{path}.faces", f"is missing: give the six faces of the {name} die")
        faces = c.sequence(rec["faces"], f"{path}.faces")
        if len(faces) != FACES_PER_DIE:
            c.fail(f"{path}.faces", f"a die has {FACES_PER_DIE} faces, not {len(faces)}")
        codes = tuple(_face(c, f, f"{path}.faces[{i}]") for i, f in enumerate(faces))
        out[color] = NewDie(color, rec["name"], count, codes)
    return out


def _face(c: _Checker, v: Any, path: str) -> str:
    face = c.mapping(v, path)
    c.known(face, path, {"phases", "dollar"})
    phases = c.sequence(face.get("phases"), f"{path}.phases")
    dollar = c.boolean(face.get("dollar", False), f"{path}.dollar")
    if phases == [WILD]:
        if dollar:
            c.fail(f"{path}.dollar", "a wild face carries no $")
        return WILD
    if len(phases) not in (1, 2):
        c.fail(f"{path}.phases", f"a face shows one or two phases (or [wild]), not {len(phases)}")
    for i, p in enumerate(phases):
        c.one_of(p, f"{path}.phases[{i}]", PHASES)
    if len(phases) == 2 and phases[0] == phases[1]:
        c.fail(f"{path}.phases", "a two-phase face shows two different phases")
    return face_code(phases, dollar)


def _objectives(c: _Checker, v: Any) -> tuple[Objective, ...]:
    if v is None:
        c.fail("objectives", f"is missing: give at least {OBJECTIVES_IN_PLAY} objective tiles")
    items = c.sequence(v, "objectives")
    if len(items) < OBJECTIVES_IN_PLAY:
        c.fail(
            "objectives",
            f"a game uses {OBJECTIVES_IN_PLAY} objectives, so give at least that many, not {len(items)}",
        )
    out: list[Objective] = []
    seen: set[int] = set()
    for i, rec in enumerate(items):
        path = f"objectives[{i}]"
        c.mapping(rec, path)
        c.known(rec, path, {"id", "name", "check", "condition", "talents"})
        oid = c.integer(rec.get("id"), f"{path}.id", 1)
        if oid in seen:
            c.fail(f"{path}.id", f"objective {oid} is given twice")
        seen.add(oid)
        out.append(
            Objective(
                id=oid,
                name=c.text(rec.get("name"), f"{path}.name"),
                check=c.one_of(rec.get("check"), f"{path}.check", CHECKS),
                condition=_condition(c, rec.get("condition"), f"{path}.condition"),
                talents=c.integer(rec.get("talents"), f"{path}.talents", 1),
            )
        )
    return tuple(out)


def _condition(c: _Checker, v: Any, path: str) -> dict[str, Any]:
    cond = c.mapping(v, path)
    ctype = c.one_of(cond.get("type"), f"{path}.type", tuple(CONDITIONS))
    fields = CONDITIONS[ctype]
    c.known(cond, path, {"type", *fields})
    for name, kind in fields.items():
        fpath = f"{path}.{name}"
        if name not in cond:
            if not kind.endswith("?"):
                c.fail(fpath, f"is missing: a {ctype} condition needs {name}")
            continue
        value = cond[name]
        kind = kind.rstrip("?")
        if kind == "int":
            c.integer(value, fpath)
        elif kind == "phases":
            c.names(value, fpath, PHASES)
        elif kind == "world_colors":
            c.names(value, fpath, WORLD_COLORS)
        elif kind == "die_colors":
            c.names(value, fpath, DIE_COLORS)
        elif kind == "tasks":
            c.names(value, fpath, TASKS)
        else:  # conditions
            parts = c.sequence(value, fpath)
            if not parts:
                c.fail(fpath, "must not be empty")
            for i, part in enumerate(parts):
                _condition(c, part, f"{fpath}[{i}]")
    return cond


def _numbered(c: _Checker, v: Any, path: str, first: int) -> list[Any]:
    """A non-empty list of records, each with its own ``id`` from ``first`` to LAST_NUMBER."""
    items = c.sequence(v, path)
    if not items:
        c.fail(path, "must not be empty")
    seen: set[int] = set()
    for i, rec in enumerate(items):
        c.mapping(rec, f"{path}[{i}]")
        n = c.integer(rec.get("id"), f"{path}[{i}].id", first)
        if n > LAST_NUMBER:
            c.fail(f"{path}[{i}].id", f"must be at most {LAST_NUMBER}, not {n}")
        if n in seen:
            c.fail(f"{path}[{i}].id", f"{n} is given twice")
        seen.add(n)
    return items


def _factions(c: _Checker, v: Any) -> tuple[dict[str, Any], ...]:
    items = _numbered(c, v, "factions", FIRST_FACTION)
    for i, rec in enumerate(items):
        path = f"factions[{i}]"
        devs = c.sequence(rec.get("developments", []), f"{path}.developments")
        worlds = c.sequence(rec.get("worlds", []), f"{path}.worlds")
        if not devs and not worlds:
            c.fail(path, "a faction tile has at least one development or world")
        for j, d in enumerate(devs):
            _development(c, d, f"{path}.developments[{j}]")
        for j, w in enumerate(worlds):
            _world(c, w, f"{path}.worlds[{j}]")
    return tuple(items)


def _homes(c: _Checker, v: Any) -> tuple[dict[str, Any], ...]:
    items = _numbered(c, v, "home_worlds", FIRST_HOME)
    for i, rec in enumerate(items):
        _world(c, rec.get("world"), f"home_worlds[{i}].world")
    return tuple(items)


def _game_tiles(c: _Checker, v: Any) -> tuple[dict[str, Any], ...]:
    items = _numbered(c, v, "game_tiles", FIRST_TILE)
    for i, rec in enumerate(items):
        _development(c, rec.get("development"), f"game_tiles[{i}].development")
        _world(c, rec.get("world"), f"game_tiles[{i}].world")
    return tuple(items)


def _world(c: _Checker, v: Any, path: str) -> None:
    w = c.mapping(v, path)
    c.text(w.get("name"), f"{path}.name")
    c.integer(w.get("cost"), f"{path}.cost")
    c.one_of(w.get("color"), f"{path}.color", WORLD_COLORS)
    _immediate(c, w.get("immediate") or {}, f"{path}.immediate")


def _immediate(c: _Checker, v: Any, path: str) -> None:
    imm = c.mapping(v, path)
    gains = c.sequence(imm.get("dice_gained") or [], f"{path}.dice_gained")
    for i, g in enumerate(gains):
        gp = f"{path}.dice_gained[{i}]"
        c.mapping(g, gp)
        c.one_of(g.get("color"), f"{gp}.color", DIE_COLORS)
        c.one_of(g.get("to"), f"{gp}.to", GAIN_PLACES)
    for key in ("credits", "dice_removed", "start_credits"):
        if imm.get(key) is not None:
            c.integer(imm[key], f"{path}.{key}")


def _development(c: _Checker, v: Any, path: str) -> None:
    d = c.mapping(v, path)
    c.text(d.get("name"), f"{path}.name")
    c.integer(d.get("cost"), f"{path}.cost")
    c.one_of(d.get("kind"), f"{path}.kind", DEV_KINDS)
    c.text(d.get("power_id"), f"{path}.power_id")
    effects = c.sequence(d.get("effects") or [], f"{path}.effects")
    for i, e in enumerate(effects):
        c.mapping(e, f"{path}.effects[{i}]")
        c.text(e.get("type"), f"{path}.effects[{i}].type")
        if e.get("type") == "immediate":
            _immediate(c, e, f"{path}.effects[{i}]")
