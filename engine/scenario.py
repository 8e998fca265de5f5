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
from .catalogue import (
    CARDS,
    DIE_COLOR,
    DIE_COLORS,
    DIE_FACES,
    FACTIONS,
    HOME_WORLDS,
    PHASE_INDEX,
    PHASES,
    TILE_IDS,
    WILD,
)
from .economy import VP_PER_PLAYER
from .errors import EngineError, IllegalCommand
from .fold import Ctx, evolve
from .phases import manage
from .rng import seed_state
from .scoring import score
from .state import GameState, PlayerState

STEPS = ("assign", "explore", "develop", "settle", "produce", "ship", "manage")
DICE_PLACES = ("cup", "citizenry", "dictate", "dev_dice", "world_dice")


class ScenarioError(ValueError):
    """The scenario file itself is wrong (not the engine): the message says where."""


def _die_spec(spec: Any, where: str) -> tuple[str, str | None, str | None]:
    """'blue', 'blue:a', 'blue@ship' or 'blue:a@ship' -> (colour, label, face)."""
    if not isinstance(spec, str):
        raise ScenarioError(f"{where}: a die is a string like 'blue' or 'blue:a', not {spec!r}")
    face = None
    if "@" in spec:
        spec, face = spec.split("@", 1)
    color, _, label = spec.partition(":")
    if color not in DIE_COLORS:
        raise ScenarioError(
            f"{where}: unknown die colour {color!r}; colours: {', '.join(DIE_COLORS)}"
        )
    return color, label or None, face


class Builder:
    def __init__(self, state: GameState) -> None:
        self.state = state
        self.labels: dict[str, int] = {}

    def die(self, spec: Any, where: str) -> int:
        color, label, face = _die_spec(spec, where)
        pile = self.state.supply[DIE_COLORS.index(color)]
        if not pile:
            raise ScenarioError(f"{where}: no {color} die left in the supply")
        d = pile.pop(0)
        if label:
            if label in self.labels:
                raise ScenarioError(f"{where}: label {label!r} used twice")
            self.labels[label] = d
        if face is not None:
            faces = DIE_FACES[d]
            if face not in faces:
                raise ScenarioError(
                    f"{where}: a {color} die has no {face!r} face; faces: {sorted(set(faces))}"
                )
            self._faces[d] = faces.index(face)
        return d

    _faces: dict[int, int]


def build(spec: dict[str, Any]) -> tuple[GameState, dict[str, int]]:
    """Build the situation described by a scenario; returns (state, die labels)."""
    if not isinstance(spec, dict):
        raise ScenarioError("a scenario is a mapping")
    seats = spec.get("seats")
    if not isinstance(seats, list) or not 2 <= len(seats) <= 5:
        raise ScenarioError("'seats' must list 2 to 5 seats")
    n = len(seats)
    step = spec.get("step", "assign")
    if step not in STEPS:
        raise ScenarioError(f"'step' must be one of {STEPS}, not {step!r}")
    state = GameState(
        seed=str(spec.get("seed", "scenario")), rng=seed_state(str(spec.get("seed", "scenario"))),
        players=[], options={"first_game": False}, bag=[],
        supply=[list(range(len(DIE_COLOR)))[0:0] for _ in DIE_COLORS], vp_pool=int(spec.get("vp_pool", VP_PER_PLAYER * n)),
    )  # fmt: skip
    from .catalogue import DICE_OF_COLOR
    from .phases.setup import RULES_VERSION

    state.rules = int(spec.get("rules", RULES_VERSION))
    if not 1 <= state.rules <= RULES_VERSION:
        raise ScenarioError(f"'rules' must be a rules version from 1 to {RULES_VERSION}")
    state.supply = [list(DICE_OF_COLOR[c]) for c in DIE_COLORS]
    b = Builder(state)
    b._faces = {}
    used_tiles: list[int] = []
    for i, s in enumerate(seats):
        where = f"seats[{i}]"
        if not isinstance(s, dict):
            raise ScenarioError(f"{where} must be a mapping")
        faction = int(s.get("faction", i + 1))
        home = int(s.get("home", i + 1))
        if faction not in FACTIONS or home not in HOME_WORLDS:
            raise ScenarioError(f"{where}: faction and home must be 1-9")
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
        if s.get("selected"):
            p.selected = PHASE_INDEX[s["selected"]]
        p.cup.sort()
        state.players.append(p)
    dup = [t for t, k in Counter(used_tiles).items() if k > 1]
    if dup:
        raise ScenarioError(f"tiles {dup} are used twice")
    if "bag" in spec:
        state.bag = sorted(int(t) for t in spec["bag"])
    else:
        state.bag = [t for t in TILE_IDS if t not in used_tiles]
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
        for d in [d for col in p.columns for d in col]:
            p.faces[d] = b._faces.get(d, _natural_face(d, p))
    _prepare(state, spec.get("step", "assign"), spec)
    return state, b.labels


def enter(state: GameState, spec: dict[str, Any]) -> list[dict[str, Any]]:
    """Open the scenario's step (automatic resolutions included); returns the events."""
    ctx = Ctx(state)
    _enter(state, spec.get("step", "assign"), spec, ctx)
    return ctx.events


def _natural_face(d: int, p: PlayerState) -> int:
    """A face showing the die's column when it has one (else wild, else the first face)."""
    col = next(i for i, c in enumerate(p.columns) if d in c)
    faces = DIE_FACES[d]
    for want in (PHASES[col], WILD):
        if want in faces:
            return faces.index(want)
    return 0


def _prepare(state: GameState, step: str, spec: dict[str, Any]) -> None:
    """Set the round's phases and the step the scenario opens (no events yet)."""
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
    elif step != "assign":
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
    names = {d: f"{DIE_COLOR[d]}:{lab}" for lab, d in labels.items()}

    def dice(ds: list[int]) -> list[str]:
        return sorted(names.get(d, DIE_COLOR[d]) for d in ds)

    seats = []
    for p in state.players:
        sc = score(p)
        seats.append({
            "credits": p.credits, "vp": p.vp,
            "cup": dice(p.cup), "citizenry": dice(p.citizenry), "dictate": dice(p.dictate),
            "columns": {ph: dice(p.columns[i]) for i, ph in enumerate(PHASES) if p.columns[i]},
            "dev_stack": p.dev_stack[:], "world_stack": p.world_stack[:],
            "dev_dice": dice(p.dev_dice), "world_dice": dice(p.world_dice),
            "goods": {w: dice(g) for w, g in p.goods.items()},
            "tableau": p.devs + p.worlds,
            "score": sc["total"], "bonuses": sc["bonuses"],
            "pending": p.waiting or None,
        })  # fmt: skip
    return {"step": state.step, "vp_pool": state.vp_pool, "phases": [PHASES[i] for i in state.phases],
            "seats": seats, "round": state.round, "end_reason": state.end_reason, "winners": state.winners}  # fmt: skip


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
    if isinstance(expected, list) and isinstance(actual, list) and path.split(".")[-1] in (
        "cup", "citizenry", "dictate", "dev_dice", "world_dice") or path.count(".goods.") or path.count(".columns."):  # fmt: skip
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
    ctx = Ctx(state)
    flow.apply_command(state, seat, cmd, ctx)
    return ctx.events
