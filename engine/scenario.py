"""Conformance scenarios: build a game situation from a compact description, run commands, compare.

The format is documented in docs/scenarios.md and is independent of internal class names: dice
are named by colour (optionally with a label, ``"blue:a"``, that commands may refer to as ``"$a"``),
tiles by their number, tableau cards by their card keys (``T16d``, ``F3w``, ``H4``).

Pure: ``run(spec)`` returns a report; the CLI does the file reading and printing.
"""

from __future__ import annotations

import copy
from collections import Counter
from typing import Any

from . import flow
from .ambition.objectives import TALENT_COUNTERS
from .catalogue import (
    ALL_DIE_COLORS,
    CARDS,
    COLOR_INDEX,
    DIE_COLORS,
    DIE_FACES,
    FACTIONS,
    HOME_WORLDS,
    OBJECTIVES,
    PHASE_INDEX,
    PHASES,
    TALENT,
    TALENT_BASE,
    WILD,
    color_of,
    face_phases,
    faction_ids,
    home_ids,
    installed,
    is_ambition,
    is_ambition_card,
    supply_piles,
    tile_ids,
)
from .economy import VP_PER_PLAYER
from .errors import EngineError, IllegalCommand
from .fold import Ctx, Event, evolve
from .phases import manage
from .rng import seed_state
from .scoring import score
from .state import GameState, PlayerState

STEPS = ("setup", "assign", "explore", "develop", "settle", "produce", "ship", "manage")
#: what a seat of a ``step: setup`` scenario may give: the rest is what setup deals
SETUP_SEAT_FIELDS = ("faction", "home", "start_tiles")
DICE_PLACES = ("cup", "citizenry", "dictate", "dev_dice", "world_dice")


class ScenarioError(ValueError):
    """The scenario file itself is wrong (not the engine): the message says where."""


# --- limits: a scenario is a small file, and running one is bounded work --------------------
#: rounds one command (or the opening of the situation) may run on by itself before the
#: scenario is refused: a situation where no seat ever owes a decision would play forever
MAX_ROUNDS = 100
#: events one command may produce (a real round makes well under 1,000)
MAX_EVENTS = 100_000
MAX_SCRIPT = 2_000
MAX_LIST = 200
MAX_DEPTH = 32

TOP_FIELDS = (
    "name",
    "rule",
    "powers",
    "step",
    "phases",
    "round",
    "vp_pool",
    "rules",
    "seed",
    "ambition",
    "objectives",
    "bag",
    "chance",
    "seats",
    "script",
    "expect_at",
    "expect",
    "expect_events",
)
SEAT_FIELDS = (
    "faction",
    "home",
    "tableau",
    "credits",
    "vp",
    "cup",
    "citizenry",
    "columns",
    "dictate",
    "dev_stack",
    "world_stack",
    "dev_dice",
    "world_dice",
    "goods",
    "selected",
    "start_tiles",
    "talents",
)
SCRIPT_FIELDS = ("seat", "command", "error")


def _type_name(v: Any) -> str:
    if v is None:
        return "nothing (null)"
    return {
        bool: "true/false",
        int: "a number",
        float: "a number",
        str: "text",
        list: "a list",
        dict: "a mapping",
    }.get(type(v), type(v).__name__)


def _mapping(v: Any, where: str, fields: tuple[str, ...] | None = None) -> dict[str, Any]:
    if not isinstance(v, dict):
        raise ScenarioError(f"{where}: must be a mapping, not {_type_name(v)}")
    for k in v:
        if not isinstance(k, str):
            raise ScenarioError(f"{where}: keys must be text, not {k!r}")
        if fields is not None and k not in fields:
            raise ScenarioError(f"{where}.{k}: unknown field; the fields are {', '.join(fields)}")
    return v


def _list(v: Any, where: str, max_len: int = MAX_LIST) -> list[Any]:
    if not isinstance(v, list):
        raise ScenarioError(f"{where}: must be a list, not {_type_name(v)}")
    if len(v) > max_len:
        raise ScenarioError(f"{where}: at most {max_len} entries, not {len(v)}")
    return v


def _int(v: Any, where: str, lo: int, hi: int) -> int:
    if isinstance(v, bool) or not isinstance(v, int):
        raise ScenarioError(f"{where}: must be a whole number from {lo} to {hi}, not {v!r}")
    if not lo <= v <= hi:
        raise ScenarioError(f"{where}: must be from {lo} to {hi}, not {v}")
    return v


def _text(v: Any, where: str, choices: tuple[str, ...] | None = None) -> str:
    if not isinstance(v, str):
        raise ScenarioError(f"{where}: must be text, not {_type_name(v)}")
    if choices is not None and v not in choices:
        raise ScenarioError(f"{where}: {v!r} is not one of {', '.join(choices)}")
    return v


def _tiles(v: Any, where: str, ambition: bool = False) -> None:
    ids = tile_ids(ambition)
    for j, t in enumerate(_list(v, where)):
        if isinstance(t, bool) or not isinstance(t, int) or t not in ids:
            raise ScenarioError(
                f"{where}[{j}]: unknown tile {t!r}; tiles are numbered {min(ids)}-{max(ids)}"
            )
    dup = sorted(t for t, k in Counter(v).items() if k > 1)
    if dup:
        raise ScenarioError(f"{where}: tiles {dup} are listed twice")


def _dice(v: Any, where: str, ambition: bool = False) -> None:
    for j, d in enumerate(_list(v, where)):
        _die_spec(d, f"{where}[{j}]", ambition)


def _depth(v: Any, where: str, depth: int = 0) -> None:
    if depth > MAX_DEPTH:
        raise ScenarioError(f"{where}: nested more than {MAX_DEPTH} levels deep")
    if isinstance(v, dict):
        for k, x in v.items():
            _depth(x, f"{where}.{k}", depth + 1)
    elif isinstance(v, list):
        for j, x in enumerate(v):
            _depth(x, f"{where}[{j}]", depth + 1)


def validate(spec: Any) -> None:
    """Check the shape of a scenario before anything is built: types, ranges, known fields,
    tiles, factions and home worlds. Raises ``ScenarioError`` naming the field."""
    from .phases.setup import RULES_VERSION

    _mapping(spec, "scenario", TOP_FIELDS)
    _depth(spec, "scenario")
    for key in ("name", "rule", "expect_at"):
        if key in spec:
            _text(spec[key], key)
    if "seed" in spec and (
        isinstance(spec["seed"], bool) or not isinstance(spec["seed"], str | int)
    ):
        raise ScenarioError(f"seed: must be text or a number, not {_type_name(spec['seed'])}")
    for key in ("powers", "expect_events"):
        for j, x in enumerate(_list(spec.get(key, []), key)):
            _text(x, f"{key}[{j}]")
    if "step" in spec:
        _text(spec["step"], "step", STEPS)
    for j, ph in enumerate(_list(spec.get("phases", []) or [], "phases")):
        _text(ph, f"phases[{j}]", PHASES)
    if "round" in spec:
        _int(spec["round"], "round", 1, MAX_ROUNDS)
    if "rules" in spec:
        _int(spec["rules"], "rules", 1, RULES_VERSION)
    amb = _ambition(spec)
    if "bag" in spec:
        _tiles(spec["bag"], "bag", amb)
    chance = _mapping(spec.get("chance") or {}, "chance", ("tiles", "two_player_die"))
    if "tiles" in chance:
        _tiles(chance["tiles"], "chance.tiles", amb)
    faces = (*PHASES, WILD)  # the white die's faces, and wild (any phase)
    for j, f in enumerate(_list(chance.get("two_player_die", []), "chance.two_player_die")):
        _text(f, f"chance.two_player_die[{j}]", faces)
    if "seats" not in spec:
        raise ScenarioError("seats: missing; list 2 to 5 seats (each may be {})")
    seats = _list(spec["seats"], "seats")
    if not 2 <= len(seats) <= 5:
        raise ScenarioError(f"seats: list 2 to 5 seats, not {len(seats)}")
    max_vp = VP_PER_PLAYER * len(seats) * 10
    if "vp_pool" in spec:
        _int(spec["vp_pool"], "vp_pool", 0, max_vp)
    for i, seat in enumerate(seats):
        _validate_seat(seat, f"seats[{i}]", max_vp, amb)
    _validate_script(spec.get("script", []) or [], len(seats))
    _mapping(spec.get("expect", {}), "expect")


def _ambition(spec: dict[str, Any]) -> bool:
    """Whether the scenario is an Ambition game (``ambition: true``, ``objectives: [ids]``); an
    Ambition scenario needs the component file installed (``rfg scenario run --components``)."""
    amb = spec.get("ambition", False)
    if not isinstance(amb, bool):
        raise ScenarioError(f"ambition: must be true or false, not {_type_name(amb)}")
    if "objectives" in spec and not amb:
        raise ScenarioError("objectives: objectives are part of Ambition; set ambition: true")
    if not amb:
        return False
    if installed() is None:
        raise ScenarioError(
            "ambition: an Ambition scenario needs the Ambition component file; run it with "
            "rfg scenario run --components FILE (or RFG_AMBITION_COMPONENTS=FILE)"
        )
    for j, o in enumerate(_list(spec.get("objectives", []), "objectives")):
        if isinstance(o, bool) or o not in OBJECTIVES:
            raise ScenarioError(
                f"objectives[{j}]: unknown objective {o!r}; the component file's objectives "
                f"are {sorted(OBJECTIVES)}"
            )
    return True


def _validate_seat(seat: Any, where: str, max_vp: int, amb: bool = False) -> None:
    """One seat: faction, home world, credits, VP, tableau, stacks, dice and goods."""
    s = _mapping(seat, where, SEAT_FIELDS)
    if "start_tiles" in s:
        _tiles(s["start_tiles"], f"{where}.start_tiles", amb)
        if len(s["start_tiles"]) != 2:
            raise ScenarioError(f"{where}.start_tiles: a seat starts with 2 tiles")
    factions, homes = faction_ids(amb), home_ids(amb)
    if "faction" in s:
        _int(s["faction"], f"{where}.faction", min(factions), max(factions))
        if s["faction"] not in factions:
            raise ScenarioError(f"{where}.faction: no faction {s['faction']}")
    if "home" in s:
        _int(s["home"], f"{where}.home", min(homes), max(homes))
        if s["home"] not in homes:
            raise ScenarioError(f"{where}.home: no home world {s['home']}")
    if "credits" in s:
        _int(s["credits"], f"{where}.credits", 0, 99)
    if "vp" in s:
        _int(s["vp"], f"{where}.vp", 0, max_vp)
    if "talents" in s:
        _int(s["talents"], f"{where}.talents", 0, TALENT_COUNTERS)
    for j, key in enumerate(_list(s.get("tableau", []), f"{where}.tableau")):
        _text(key, f"{where}.tableau[{j}]")
        if key not in CARDS or (is_ambition_card(key) and not amb):
            raise ScenarioError(
                f"{where}.tableau[{j}]: unknown card {key!r}; cards are "
                f"written T<n>d, T<n>w, F<n>d, F<n>w or H<n>"
                + ("" if amb else " (Ambition's only with ambition: true)")
            )
    for name in ("dev_stack", "world_stack"):
        if name in s:
            _tiles(s[name], f"{where}.{name}", amb)
    for place in DICE_PLACES:
        if place in s:
            _dice(s[place], f"{where}.{place}", amb)
    for ph, dice in _mapping(s.get("columns") or {}, f"{where}.columns").items():
        _text(ph, f"{where}.columns.{ph}", PHASES)
        _dice(dice, f"{where}.columns.{ph}", amb)
    for w, dice in _mapping(s.get("goods") or {}, f"{where}.goods").items():
        _dice(dice, f"{where}.goods.{w}", amb)
    if s.get("selected") is not None:
        _text(s["selected"], f"{where}.selected", PHASES)


def _validate_script(script: Any, seats: int) -> None:
    """The script: a list of {seat, command[, error]} steps."""
    for j, step in enumerate(_list(script, "script", MAX_SCRIPT)):
        st = _mapping(step, f"script[{j}]", SCRIPT_FIELDS)
        if "seat" not in st or "command" not in st:
            raise ScenarioError(f"script[{j}]: must be {{seat, command[, error]}}")
        _int(st["seat"], f"script[{j}].seat", 0, seats - 1)
        _mapping(st["command"], f"script[{j}].command")
        if "error" in st and not isinstance(st["error"], str | bool):
            raise ScenarioError(
                f"script[{j}].error: must be an error code or true, not {_type_name(st['error'])}"
            )


class _BoundedCtx(Ctx):
    """A ``Ctx`` that refuses to run on forever: a scenario is a bounded piece of work."""

    __slots__ = ("rounds",)

    def __init__(self, state: GameState) -> None:
        super().__init__(state)
        self.rounds = 0

    def emit(self, event: Event) -> None:
        if event["type"] == "RoundEnded":
            self.rounds += 1
            if self.rounds > MAX_ROUNDS:
                raise ScenarioError(
                    f"seats: the game played {MAX_ROUNDS} rounds by itself without any seat "
                    f"owing a decision (does any seat have a die?); stopped there"
                )
        if len(self.events) >= MAX_EVENTS:
            raise ScenarioError(
                f"script: one step produced more than {MAX_EVENTS} events; stopped there"
            )
        super().emit(event)


def _die_spec(spec: Any, where: str, ambition: bool = False) -> tuple[str, str | None, str | None]:
    """'blue', 'blue:a', 'blue@ship' or 'blue:a@ship' -> (colour, label, face); Ambition's faces
    are written as the engine names them: 'black@explore/produce', 'orange@produce$'."""
    if not isinstance(spec, str):
        raise ScenarioError(f"{where}: a die is a string like 'blue' or 'blue:a', not {spec!r}")
    face = None
    if "@" in spec:
        spec, face = spec.split("@", 1)
    color, _, label = spec.partition(":")
    colors = (*ALL_DIE_COLORS, TALENT) if ambition else DIE_COLORS
    if color not in colors:
        raise ScenarioError(
            f"{where}: unknown die colour {color!r}; colours: {', '.join(colors)}"
            + ("" if ambition else f" (black, orange and {TALENT} with ambition: true)")
        )
    return color, label or None, face


class Builder:
    def __init__(self, state: GameState) -> None:
        self.state = state
        self.labels: dict[str, int] = {}

    def die(self, spec: Any, where: str) -> int:
        color, label, face = _die_spec(spec, where, len(self.state.supply) > len(DIE_COLORS))
        if color == TALENT:  # Ambition: a talent counter at work (a worker, a good, ...)
            return self._label(self.talent(where), label, where)
        pile = self.state.supply[COLOR_INDEX[color]]
        if not pile:
            raise ScenarioError(f"{where}: no {color} die left in the supply")
        d = self._label(pile.pop(0), label, where)
        if face is not None:
            faces = DIE_FACES[d]
            if face not in faces:
                raise ScenarioError(
                    f"{where}: a {color} die has no {face!r} face; faces: {sorted(set(faces))}"
                )
            self._faces[d] = faces.index(face)
        return d

    _faces: dict[int, int]

    def _label(self, d: int, label: str | None, where: str) -> int:
        if label:
            if label in self.labels:
                raise ScenarioError(f"{where}: label {label!r} used twice")
            self.labels[label] = d
        return d

    def talent(self, where: str) -> int:
        """The next talent counter from the supply (Ambition objectives)."""
        if not self.state.objectives:
            raise ScenarioError(f"{where}: talent counters come with objectives: list them")
        if self.talents_taken >= TALENT_COUNTERS:
            raise ScenarioError(f"{where}: the supply holds {TALENT_COUNTERS} talent counters")
        self.talents_taken += 1
        return TALENT_BASE + self.talents_taken - 1

    talents_taken: int = 0


def build(spec: dict[str, Any]) -> tuple[GameState, dict[str, int]]:
    """Build the situation described by a scenario; returns (state, die labels)."""
    validate(spec)
    seats = spec.get("seats")
    if not isinstance(seats, list) or not 2 <= len(seats) <= 5:
        raise ScenarioError("'seats' must list 2 to 5 seats")
    n = len(seats)
    step = spec.get("step", "assign")
    if step not in STEPS:
        raise ScenarioError(f"'step' must be one of {STEPS}, not {step!r}")
    amb = _ambition(spec)
    options: dict[str, Any] = {"first_game": False}
    if amb:
        options.update(ambition=True, objectives="objectives" in spec)
    state = GameState(
        seed=str(spec.get("seed", "scenario")),
        rng=seed_state(str(spec.get("seed", "scenario"))),
        players=[],
        options=options,
        bag=[],
        supply=supply_piles(amb),
        vp_pool=int(spec.get("vp_pool", VP_PER_PLAYER * n)),
    )
    comp = installed()
    if amb and comp is not None:
        state.components = comp.summary()
        state.objectives = [int(o) for o in spec.get("objectives", [])]
    from .phases.setup import RULES_VERSION

    state.rules = int(spec.get("rules", RULES_VERSION))
    if not 1 <= state.rules <= RULES_VERSION:
        raise ScenarioError(f"'rules' must be a rules version from 1 to {RULES_VERSION}")
    b = Builder(state)
    b._faces = {}
    used_tiles: list[int] = []
    if step == "setup":
        for i, s in enumerate(seats):
            state.players.append(_setup_seat(b, i, s, used_tiles))
        _fill_bag(state, spec, used_tiles)
        state.step = "start_tiles"
        return state, b.labels
    for i, s in enumerate(seats):
        if "start_tiles" in s:
            raise ScenarioError(f"seats[{i}].start_tiles: only a step: setup scenario has them")
        state.players.append(_build_seat(b, i, s, used_tiles))
    _fill_bag(state, spec, used_tiles)
    state.round = int(spec.get("round", 1))
    forced = spec.get("chance") or {}
    if forced:
        unknown = set(forced) - {"tiles", "two_player_die"}
        if unknown:
            raise ScenarioError(
                f"chance: unknown keys {sorted(unknown)}; use tiles and two_player_die"
            )
        state.forced = {k: list(v) for k, v in forced.items()}
    for p in state.players:
        for d in [d for col in p.columns for d in col if d < TALENT_BASE]:
            p.faces[d] = b._faces.get(d, _natural_face(d, p))
        if amb:  # a face given to a die on a stack or to a good: its $ matters (economy)
            for d in p.owned_dice():
                if d in b._faces:
                    p.faces[d] = b._faces[d]
    _prepare(state, spec.get("step", "assign"), spec)
    return state, b.labels


def _setup_seat(b: Builder, i: int, s: Any, used_tiles: list[int]) -> PlayerState:
    """Seat ``i`` of a ``step: setup`` scenario: its faction, home world and two start tiles; the
    starting dice, credits and the dice the start tiles grant are setup's own
    (``engine.phases.setup``). Commands name the seat's dice by automatic labels
    ``$<seat>.<place>.<k>``: the k-th die (from 0, lowest id first) in ``cup``, ``citizenry`` or
    ``goods``, as setup left them (``$0.citizenry.0``)."""
    from .phases import setup

    where = f"seats[{i}]"
    extra = sorted(set(s) - set(SETUP_SEAT_FIELDS))
    if extra:
        raise ScenarioError(
            f"{where}.{extra[0]}: a step: setup scenario gives only "
            f"{', '.join(SETUP_SEAT_FIELDS)}; setup deals the rest"
        )
    amb = is_ambition(b.state.options)
    faction = int(s.get("faction", i + 1))
    home = int(s.get("home", i + 1))
    if faction not in faction_ids(amb) or home not in home_ids(amb):
        raise ScenarioError(f"{where}: no such faction {faction} or home world {home}")
    if "start_tiles" not in s:
        raise ScenarioError(f"{where}.start_tiles: a setup seat needs its two start tiles")
    p = PlayerState(seat=i, faction=faction, home=home)
    p.start_tiles = [int(t) for t in s["start_tiles"]]
    used_tiles += p.start_tiles
    p.waiting = "start_tiles"
    setup._take_start_dice(b.state, p, amb)
    goods = sorted(d for g in p.goods.values() for d in g)
    for place, dice in (("cup", p.cup), ("citizenry", p.citizenry), ("goods", goods)):
        for k, d in enumerate(sorted(dice)):
            b.labels[f"{i}.{place}.{k}"] = d
    return p


def _build_seat(b: Builder, i: int, s: Any, used_tiles: list[int]) -> PlayerState:
    """Seat ``i``: its faction and home world, tableau, tile stacks, dice and goods.

    The tiles it holds are added to ``used_tiles``."""
    where = f"seats[{i}]"
    if not isinstance(s, dict):
        raise ScenarioError(f"{where} must be a mapping")
    faction = int(s.get("faction", i + 1))
    home = int(s.get("home", i + 1))
    amb = len(b.state.supply) > len(DIE_COLORS)
    if faction not in faction_ids(amb) or home not in home_ids(amb):
        raise ScenarioError(f"{where}: no such faction {faction} or home world {home}")
    p = PlayerState(
        seat=i,
        faction=faction,
        home=home,
        credits=int(s.get("credits", 1)),
        vp=int(s.get("vp", 0)),
    )
    base = [c.key for c in FACTIONS[faction].cards] + [HOME_WORLDS[home].key]
    for key in base + list(s.get("tableau", [])):
        if key not in CARDS:
            raise ScenarioError(f"{where}.tableau: unknown card {key!r}")
        c = CARDS[key]
        (p.worlds if c.is_world else p.devs).append(key)
        if c.tile:
            used_tiles.append(c.tile)
    for name in ("dev_stack", "world_stack"):
        tiles = [int(t) for t in s.get(name, [])]
        setattr(p, name, tiles)
        used_tiles += tiles
    _place_dice(b, p, s, where)
    p.talents = [b.talent(f"{where}.talents") for _ in range(int(s.get("talents", 0)))]
    if s.get("selected"):
        p.selected = PHASE_INDEX[s["selected"]]
    p.cup.sort()
    return p


def _place_dice(b: Builder, p: PlayerState, s: dict[str, Any], where: str) -> None:
    """A seat's dice: cup, citizenry and the other places, phase columns, goods on worlds."""
    for place in DICE_PLACES:
        setattr(
            p,
            place,
            [b.die(x, f"{where}.{place}[{j}]") for j, x in enumerate(s.get(place, []))],
        )
    cols = s.get("columns", {}) or {}
    for ph, dice in cols.items():
        if ph not in PHASE_INDEX:
            raise ScenarioError(f"{where}.columns: unknown phase {ph!r}")
        p.columns[PHASE_INDEX[ph]] = [
            b.die(x, f"{where}.columns.{ph}[{j}]") for j, x in enumerate(dice)
        ]
    for w, dice in (s.get("goods", {}) or {}).items():
        if w not in p.worlds:
            raise ScenarioError(f"{where}.goods: {w} is not a world in this seat's tableau")
        p.goods[w] = [b.die(x, f"{where}.goods.{w}[{j}]") for j, x in enumerate(dice)]


def _fill_bag(state: GameState, spec: dict[str, Any], used_tiles: list[int]) -> None:
    """The bag holds the scenario's tiles, or else every tile no seat holds (none twice)."""
    dup = [t for t, k in Counter(used_tiles).items() if k > 1]
    if dup:
        raise ScenarioError(f"tiles {dup} are used twice")
    if "bag" in spec:
        placed = sorted(set(spec["bag"]) & set(used_tiles))
        if placed:
            raise ScenarioError(f"bag: tiles {placed} are also in a seat's tableau or stacks")
        state.bag = sorted(int(t) for t in spec["bag"])
    else:
        state.bag = [t for t in tile_ids(is_ambition(state.options)) if t not in used_tiles]


def enter(state: GameState, spec: dict[str, Any]) -> list[dict[str, Any]]:
    """Open the scenario's step (automatic resolutions included); returns the events."""
    ctx = _BoundedCtx(state)
    _enter(state, spec.get("step", "assign"), spec, ctx)
    return ctx.events


def _natural_face(d: int, p: PlayerState) -> int:
    """A face showing the die's column when it has one (else a face showing that phase among
    others, an Ambition two-phase or $ face; else wild, else the first face)."""
    col = next(i for i, c in enumerate(p.columns) if d in c)
    faces = DIE_FACES[d]
    if PHASES[col] in faces:
        return faces.index(PHASES[col])
    for i, f in enumerate(faces):
        if f != WILD and PHASES[col] in face_phases(f):
            return i
    return faces.index(WILD) if WILD in faces else 0


def _prepare(state: GameState, step: str, spec: dict[str, Any]) -> None:
    """Set the round's phases and the step the scenario opens (no events yet)."""
    if step == "setup":
        return
    if step == "assign":
        state.step = "assign"
        for p in state.players:
            p.waiting = "assign" if any(p.columns) else ""
        return
    phases = spec.get("phases") or ([step] if step != "manage" else [])
    for ph in phases:
        if ph not in PHASE_INDEX:
            raise ScenarioError(f"phases: unknown phase {ph!r}")
    state.phases = sorted(PHASE_INDEX[x] for x in phases)
    if step == "manage":
        state.phase_pos = len(state.phases)
        state.step = "manage"
    else:
        if PHASE_INDEX[step] not in state.phases:
            raise ScenarioError(f"phases must include the scenario's step {step!r}")
        state.phase_pos = state.phases.index(PHASE_INDEX[step]) - 1
        state.step = "assign"


def _enter(state: GameState, step: str, spec: dict[str, Any], ctx: Ctx) -> None:
    if step == "manage":
        manage.start(state, ctx)
    elif step not in ("assign", "setup"):
        flow._start_next_phase(state, ctx)
    flow.advance(state, ctx)


def _resolve_labels(obj: Any, labels: dict[str, int]) -> Any:
    if isinstance(obj, str) and obj.startswith("$"):
        if obj[1:] not in labels:
            raise ScenarioError(f"unknown die label {obj!r}; labels: {sorted(labels)}")
        return labels[obj[1:]]
    if isinstance(obj, list):
        return [_resolve_labels(x, labels) for x in obj]
    if isinstance(obj, dict):
        return {k: _resolve_labels(v, labels) for k, v in obj.items()}
    return obj


def snapshot(state: GameState, labels: dict[str, int]) -> dict[str, Any]:
    """The observable facts a scenario can check, in scenario vocabulary."""
    # a setup scenario's automatic labels ("0.cup.1") name dice in commands, not in results
    names = {d: f"{color_of(d)}:{lab}" for lab, d in labels.items() if "." not in lab}

    def dice(ds: list[int]) -> list[str]:
        return sorted(names.get(d, color_of(d)) for d in ds)

    seats = []
    for p in state.players:
        sc = score(p)
        seats.append(
            {
                "credits": p.credits,
                "vp": p.vp,
                "cup": dice(p.cup),
                "citizenry": dice(p.citizenry),
                "dictate": dice(p.dictate),
                "columns": {ph: dice(p.columns[i]) for i, ph in enumerate(PHASES) if p.columns[i]},
                "dev_stack": p.dev_stack[:],
                "world_stack": p.world_stack[:],
                "dev_dice": dice(p.dev_dice),
                "world_dice": dice(p.world_dice),
                "goods": {w: dice(g) for w, g in p.goods.items()},
                "tableau": p.devs + p.worlds,
                "score": sc["total"],
                "bonuses": sc["bonuses"],
                "pending": p.waiting or None,
            }
        )
        if state.objectives:  # Ambition: unused talent counters
            seats[-1]["talents"] = len(p.talents)
    out: dict[str, Any] = {
        "step": state.step,
        "vp_pool": state.vp_pool,
        "phases": [PHASES[i] for i in state.phases],
        "seats": seats,
        "round": state.round,
        "end_reason": state.end_reason,
        "winners": state.winners,
    }
    if state.objectives:  # Ambition: objective id -> the seats that claimed it (null: face up)
        claimed = {c["objective"]: c["seats"] for c in state.claims}
        out["objectives"] = {o: claimed.get(o) for o in state.objectives}
    return out


def _compare(expected: Any, actual: Any, path: str, diffs: list[str]) -> None:
    if isinstance(expected, dict) and isinstance(actual, dict):
        for k, v in expected.items():
            key = k if k in actual else (int(k) if isinstance(k, str) and k.isdigit() else k)
            if key not in actual:
                diffs.append(f"{path}.{k}: expected {v!r}, but there is no such field")
                continue
            _compare(v, actual[key], f"{path}.{k}", diffs)
        return
    if isinstance(expected, dict) and isinstance(actual, list):
        for k, v in expected.items():
            i = int(k)
            if i >= len(actual):
                diffs.append(f"{path}[{i}]: expected {v!r}, but there are only {len(actual)}")
            else:
                _compare(v, actual[i], f"{path}[{i}]", diffs)
        return
    if (
        isinstance(expected, list)
        and isinstance(actual, list)
        and path.split(".")[-1] in ("cup", "citizenry", "dictate", "dev_dice", "world_dice")
        or path.count(".goods.")
        or path.count(".columns.")
    ):
        if sorted(map(str, expected)) != sorted(map(str, actual)):
            diffs.append(
                f"{path}: expected {sorted(map(str, expected))}, got {sorted(map(str, actual))}"
            )
        return
    if expected != actual:
        diffs.append(f"{path}: expected {expected!r}, got {actual!r}")


def run(spec: dict[str, Any]) -> dict[str, Any]:
    """Run one scenario: build, apply the script, compare with ``expect``.

    Returns {"ok": bool, "diffs": [...], "events": [...], "snapshot": {...}}.
    """
    spec = copy.deepcopy(spec)
    state, labels = build(spec)
    start = state.copy()
    script_events: list[dict[str, Any]] = enter(state, spec)
    diffs: list[str] = []
    for i, step in enumerate(spec.get("script", []) or []):
        if not isinstance(step, dict) or "seat" not in step or "command" not in step:
            raise ScenarioError(f"script[{i}] must be {{seat, command[, error]}}")
        cmd = _resolve_labels(step["command"], labels)
        want_error = step.get("error")
        try:
            new = flow_play(state, int(step["seat"]), cmd)
        except IllegalCommand as exc:
            if want_error is None:
                diffs.append(f"script[{i}]: command refused ({exc.code}): {exc.message}")
                break
            if want_error not in (True, exc.code):
                diffs.append(
                    f"script[{i}]: expected error {want_error!r}, got {exc.code!r}: {exc.message}"
                )
            continue
        except EngineError as exc:
            diffs.append(f"script[{i}]: engine error: {exc}")
            break
        if want_error is not None:
            diffs.append(
                f"script[{i}]: expected error {want_error!r}, but the command was accepted"
            )
        script_events += new
    events = script_events
    at = spec.get("expect_at")
    if at:
        state = start
        for e in script_events:
            evolve(state, e)
            if at in (e["type"], f"{e['type']}:{e.get('phase')}"):
                break
        else:
            diffs.append(f"expect_at: no {at} event happened")
    snap = snapshot(state, labels)
    _compare(spec.get("expect", {}), snap, "expect", diffs)
    if "expect_events" in spec:
        kinds = [e["type"] for e in events]
        for want in spec["expect_events"]:
            if want not in kinds:
                diffs.append(f"expect_events: no {want} event; events were {kinds}")
    return {"ok": not diffs, "diffs": diffs, "events": events, "snapshot": snap}


def flow_play(state: GameState, seat: int, cmd: dict[str, Any]) -> list[dict[str, Any]]:
    ctx = _BoundedCtx(state)
    flow.apply_command(state, seat, cmd, ctx)
    return ctx.events
