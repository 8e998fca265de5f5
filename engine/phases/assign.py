"""Roll, Assign and Reveal.

Roll: every seat rolls its cup behind its screen; each die lands in the column of its face, wild
faces in Explore until placed. Assign: the sealed ``assign`` decision places wild dice, selects one
phase with one worker (its face is then ignored), and applies Dictate and Reassign powers in the
order given. Reveal: the selected phases (plus, with 2 players, the phase of a spare Home die) will
happen; workers under other phases and dice in the Dictate area go back to the cup.

Ambition's dice (rulebook, Two Phase Faces and $ Faces): a die showing two phases is rolled into
the column of its first phase and may be placed in either (``two_phase``); a worker in one of its
two phases that does not occur moves at Reveal to the other one if that occurs. A $ has no effect
here; the faces of dice left on the construction stacks or as goods are kept from round to round,
since a $ there matters when they finish their task (``economy.finish_task``).

Ambition, Psi-Crystal Forecasters (``change_selected_phase_after_reveal``; Fine Points): "During
the Assign step, you must still put a die on your phase strip. During the Reveal step, moving your
die changes which phase you select, as if you had selected that phase before Reveal, and occurs
before any phase tiles are flipped over." and "2-Player Game (rule change): Roll the spare Home
(white) die before the owner of Psi-Crystal Forecasters decides whether to use its power." "This
power is neither a Reassign nor a phase power." So when an owner is playing, Reveal opens with
``ScreensLifted`` (every seat's selection, and with 2 players the spare Home die, rolled now),
the owner's ``forecast`` decision may move its selector to another phase (``PhaseReselected``),
and only then are the phases revealed (``PhasesRevealed``, which reuses the die rolled).
"""

from __future__ import annotations

from typing import Any

from .. import rng as rngmod
from ..ambition import objectives
from ..catalogue import (
    DICE,
    DIE_FACES,
    PHANTOM_BASE,
    PHASE_INDEX,
    PHASES,
    WILD,
    color_of,
    face_phases,
)
from ..errors import ChanceMismatch, refuse
from ..fold import Ctx, Event, ev, folds
from ..powers import registry
from ..state import GameState, PlayerState

DICTATE = "dictate"


# --- Roll ------------------------------------------------------------------------------------


def roll(state: GameState, ctx: Ctx) -> None:
    ctx.emit(ev("RoundStarted", round=state.round + 1))
    for p in state.playing():  # a seat that resigned rolls no more (``engine.leaving``)
        r = state.rng
        faces = []
        for die in sorted(p.cup):
            r, face = rngmod.below(r, 6)
            faces.append([die, face])
        ctx.emit(ev("DiceRolled", seat=p.seat, faces=faces, public={"dice": len(faces)}))


@folds("RoundStarted")
def _round_started(state: GameState, e: Event) -> None:
    state.round = e["round"]
    state.step = "assign"
    state.phases = []
    state.phase_pos = -1
    state.two_player_die = None
    ambition = state.options.get("ambition")
    for p in state.players:
        p.faces = _kept_faces(p) if ambition else {}
        p.selected = -1
        p.selector = -1
        p.used = []
        p.marks = {}


def _kept_faces(p: PlayerState) -> dict[int, int]:
    """Ambition: the faces still shown by dice on the construction stacks and by goods (their $
    takes effect when they finish their task in a later round); the others are rolled again."""
    keep = p.dev_dice + p.world_dice
    for g in p.goods.values():
        keep = keep + g
    return {d: p.faces[d] for d in keep if d in p.faces}


#: face code -> the column a die showing it is rolled into (wild faces wait in Explore)
_ROLLED_COLUMN: dict[str, int] = {**PHASE_INDEX, WILD: 0}


def rolled_column(face: str) -> int:
    """The column a die showing ``face`` lands in when rolled: its phase, the first of two phases
    (Ambition; the owner may move it to the second at Assign), Explore for a wild face."""
    col = _ROLLED_COLUMN.get(face)
    if col is None:
        col = _ROLLED_COLUMN[face] = PHASE_INDEX[face_phases(face)[0]]
    return col


@folds("DiceRolled")
def _dice_rolled(state: GameState, e: Event) -> None:
    p = state.players[e["seat"]]
    r = state.rng
    if sorted(p.cup) != [d for d, _ in e["faces"]]:
        raise ChanceMismatch(f"DiceRolled: seat {p.seat} rolled dice that are not its cup")
    for die, face in e["faces"]:
        r, expect = rngmod.below(r, 6)
        if expect != face:
            raise ChanceMismatch(
                f"DiceRolled: die {die} of seat {p.seat} shows face {face}, the seed gives {expect}"
            )
        p.faces[die] = face
        phase = DIE_FACES[die][face]
        col = _ROLLED_COLUMN.get(phase)
        p.columns[col if col is not None else rolled_column(phase)].append(die)
    state.rng = r
    p.cup = []
    p.waiting = "assign" if e["faces"] else ""


# --- Assign ----------------------------------------------------------------------------------


def face_of(p: PlayerState, die: int) -> str:
    return DIE_FACES[die][p.faces[die]]


def dictate_limit(state: GameState, p: PlayerState) -> int:
    return int(registry.fold_value("dictate_limit", p, 1, state, p))


def dictate_moves(state: GameState, p: PlayerState) -> int:
    return int(registry.fold_value("dictate_moves", p, 1, state, p))


def legal(state: GameState, p: PlayerState) -> dict[str, Any]:
    faces = p.faces
    dice: list[dict[str, Any]] = [
        {"die": d, "color": color_of(d), "face": DIE_FACES[d][faces[d]], "column": PHASES[i]}
        for d, i in sorted([(d, i) for i, col in enumerate(p.columns) for d in col])
    ]
    means: list[dict[str, Any]] = [
        {"via": DICTATE, "uses": dictate_limit(state, p), "moves_per_use": dictate_moves(state, p)}
    ]
    # one entry per Reassign power in the tableau: {via, name, uses (0 when it cannot be used this
    # round), count_min, count_max, exactly, from {die_colors?, exclude_die_colors?, phases?,
    # same_phase?} ({} = any worker), to ([phases] or "selected"), condition? (why, Mad Scientists)}
    for _pid, h in registry.handlers(p, "reassign_info"):
        means.append(h(state, p))
    out: dict[str, Any] = {
        "kind": "assign",
        "dice": dice,
        "wild_dice": [x["die"] for x in dice if x["face"] == WILD],
        "phases": list(PHASES),
        "means": means,
        "help": "select one worker for a phase; place wild dice; then optional Dictate/Reassign uses in order",
    }
    if state.options.get("ambition"):
        # Ambition: each die showing two phases and the two columns it may be placed in
        out["two_phase_dice"] = [
            {"die": x["die"], "phases": list(two)}
            for x in dice
            if len(two := _two_phases(x["face"])) == 2
        ]
        out["help"] += "; two_phase: [{die, to}] places a die showing two phases in either one"
    if p.talents:
        # Ambition: unused talent counters may become workers in any phase(s) ("talents":
        # [{die, to}], placed before the selection; a talent cannot be parked to Dictate)
        out["talents"] = p.talents[:]
        out["help"] += "; talents: [{die, to}] puts unused talent counters to work"
    return out


def _two_phases(face: str) -> tuple[str, ...]:
    """The phases of a two-phase face (Ambition), else ``()``."""
    return face_phases(face) if "/" in face else ()


def _phase(value: Any, field: str) -> int:
    if value not in PHASE_INDEX:
        refuse("phase", f"{field} must be one of {list(PHASES)}, not {value!r}", field, value)
    return PHASE_INDEX[value]


class Plan:
    """An Assign plan being checked: which column each worker is in, what is parked."""

    __slots__ = ("col", "selector", "selected", "dictate", "used", "dictates")

    def __init__(self, p: PlayerState) -> None:
        self.col: dict[int, int] = {d: i for i, c in enumerate(p.columns) for d in c}
        self.selector = -1
        self.selected = -1
        self.dictate: list[int] = []
        self.used: list[str] = []
        self.dictates = 0

    def move(self, die: Any, to: Any, field: str, by: str = "Dictate") -> None:
        """Reassign one worker to a different column (the shared check of every Reassign).

        ``by`` names the Dictate or the power in error messages.
        """
        if die in self.dictate:
            refuse(
                "die",
                f"{field}.die: {by} cannot move die {die}: it is in the Dictate area, "
                "and a die there is no longer a worker",
                f"{field}.die",
                die,
            )
        if die not in self.col:
            refuse(
                "die",
                f"{field}.die: {by} cannot move die {die!r}: it is not one of your workers "
                "below the phase strip",
                f"{field}.die",
                die,
            )
        if die == self.selector:
            refuse(
                "selector",
                f"{field}.die: {by} cannot move die {die}: it selects your phase, and the "
                "selector cannot be Reassigned",
                f"{field}.die",
                die,
            )
        t = _phase(to, f"{field}.to")
        if self.col[die] == t:
            refuse(
                "same_column",
                f"{field}: {by} cannot move die {die} to {PHASES[t]}: it is already in that "
                "column, and a Reassign must change a worker's column",
                f"{field}.to",
                to,
            )
        self.col[die] = t


def apply(state: GameState, p: PlayerState, cmd: dict[str, Any], ctx: Ctx) -> None:
    """Wild dice to their columns, one worker selects a phase, then the Reassign uses, in order."""
    plan = Plan(p)
    _place_wild(p, plan, cmd.get("wild") or [])
    if cmd.get("two_phase"):
        _place_two_phase(p, plan, cmd["two_phase"])
    talents = objectives.place_talents(p, plan.col, cmd.get("talents") or [])
    _select(plan, cmd.get("select"))
    _reassign(state, p, plan, cmd.get("reassign") or [])
    for _pid, check in registry.handlers(p, "assign_done"):
        check(state, p, plan)
    workers: list[list[int]] = [[] for _ in PHASES]
    for d, c in plan.col.items():
        workers[c].append(d)
    columns = {ph: sorted(workers[i]) for i, ph in enumerate(PHASES)}
    extra: dict[str, Any] = {"talents": talents} if talents else {}
    ctx.emit(
        ev(
            "AssignmentSealed",
            seat=p.seat,
            selected=PHASES[plan.selected],
            selector=plan.selector,
            columns=columns,
            dictate=plan.dictate,
            used=plan.used,
            public={},
            **extra,
        )
    )


def _place_wild(p: PlayerState, plan: Plan, wild: Any) -> None:
    """Each die showing a wild face goes to the column of the owner's choice."""
    if not isinstance(wild, list):
        refuse("wild", "'wild' must be a list of {die, to}", "wild", wild)
    seen: set[int] = set()
    for i, w in enumerate(wild):
        die = w.get("die") if isinstance(w, dict) else None
        if die not in plan.col or face_of(p, die) != WILD:
            refuse(
                "wild",
                f"wild[{i}].die: die {die!r} is not one of your dice showing a wild face",
                f"wild[{i}].die",
                die,
            )
        if die in seen:
            refuse("wild", f"wild[{i}].die: die {die} is placed twice", f"wild[{i}].die", die)
        seen.add(die)
        plan.col[die] = _phase(w.get("to"), f"wild[{i}].to")


def _place_two_phase(p: PlayerState, plan: Plan, moves: Any) -> None:
    """Ambition rulebook, Two Phase Faces: "During the Assign step, if a die face shows two phase
    icons (for example, Explore and Produce), assign it to either of these columns. **Reassign**
    powers may then be applied to this worker, based on the column it is assigned to." A die not
    placed here stays in the column it was rolled into (its first phase)."""
    if not isinstance(moves, list):
        refuse("two_phase", "'two_phase' must be a list of {die, to}", "two_phase", moves)
    seen: set[int] = set()
    for i, m in enumerate(moves):
        die = m.get("die") if isinstance(m, dict) else None
        two = _two_phases(face_of(p, die)) if die in plan.col and die in p.faces else ()
        if die is None or not two:
            refuse(
                "two_phase",
                f"two_phase[{i}].die: die {die!r} is not one of your dice showing two phases",
                f"two_phase[{i}].die",
                die,
            )
        if die in seen:
            refuse(
                "two_phase",
                f"two_phase[{i}].die: die {die} is placed twice",
                f"two_phase[{i}].die",
                die,
            )
        seen.add(die)
        to = m.get("to")
        if to not in two:
            refuse(
                "two_phase",
                f"two_phase[{i}].to: die {die} shows {' and '.join(two)}; place it in one of "
                f"those columns, not {to!r}",
                f"two_phase[{i}].to",
                to,
            )
        plan.col[die] = PHASE_INDEX[to]


def _select(plan: Plan, sel: Any) -> None:
    """One worker selects one phase: it moves to that column."""
    if not isinstance(sel, dict):
        refuse(
            "select",
            "'select' is required: {die, phase}: one worker selects one phase",
            "select",
            sel,
        )
    die = sel.get("die")
    if die not in plan.col:
        refuse("select", f"select.die: die {die!r} is not one of your workers", "select.die", die)
    plan.selector = die
    plan.selected = _phase(sel.get("phase"), "select.phase")
    plan.col[die] = plan.selected


def _reassign(state: GameState, p: PlayerState, plan: Plan, uses: Any) -> None:
    """Dictate and the Reassign powers of the tableau, each power once per round, in order."""
    if not isinstance(uses, list):
        refuse("reassign", "'reassign' must be a list of uses", "reassign", uses)
    for i, use in enumerate(uses):
        if not isinstance(use, dict):
            refuse("reassign", f"reassign[{i}] must be an object", f"reassign[{i}]", use)
        via = use.get("via")
        if via == DICTATE:
            _dictate(state, p, plan, use, f"reassign[{i}]")
            continue
        handler = dict(registry.handlers(p, "reassign")).get(via)  # type: ignore[arg-type]
        if handler is None:
            refuse(
                "reassign_power",
                f"reassign[{i}].via: {via!r} is neither 'dictate' nor a Reassign power in your tableau",
                f"reassign[{i}].via",
                via,
            )
        if via in plan.used:
            refuse(
                "once_per_round",
                f"reassign[{i}]: {via} can be used once per round",
                f"reassign[{i}].via",
                via,
            )
        handler(state, p, plan, use, f"reassign[{i}]")
        plan.used.append(via)  # type: ignore[arg-type]


def _dictate(state: GameState, p: PlayerState, plan: Plan, use: dict[str, Any], field: str) -> None:
    # the rulebook's Dictate: once per round, one move; powers raise these (Backup Planning:
    # any number of uses; Galactic Mandate: up to 3 moves) and are recorded in ``used`` when needed
    uses, uses_by = registry.fold_tracked("dictate_limit", p, 1, state, p)
    if plan.dictates >= uses:
        refuse("dictate_used", f"{field}: Dictate can be used {uses} time(s) per round", field, use)
    park = use.get("park")
    if park not in plan.col:
        refuse(
            "park",
            f"{field}.park: die {park!r} is not one of your workers; Dictate parks one worker",
            f"{field}.park",
            park,
        )
    if objectives.is_talent(park):
        refuse(
            "park",
            f"{field}.park: {park} is a talent worker, and talent workers may not be used to "
            "Dictate (Ambition rulebook); park one of your dice",
            f"{field}.park",
            park,
        )
    if park == plan.selector:
        refuse(
            "park",
            f"{field}.park: die {park} selects your phase; park another worker",
            f"{field}.park",
            park,
        )
    moves = use.get("moves") or []
    limit, limit_by = registry.fold_tracked("dictate_moves", p, 1, state, p)
    if not isinstance(moves, list) or len(moves) > limit:
        refuse(
            "moves",
            f"{field}.moves: Dictate Reassigns at most {limit} other worker(s)",
            f"{field}.moves",
            moves,
        )
    del plan.col[park]
    plan.dictate.append(park)
    plan.dictates += 1
    moved: set[int] = set()
    for j, m in enumerate(moves):
        d = m.get("die") if isinstance(m, dict) else None
        if d in moved:
            refuse(
                "moves",
                f"{field}.moves[{j}]: die {d} is moved twice by one Dictate",
                f"{field}.moves[{j}].die",
                d,
            )
        plan.move(d, m.get("to") if isinstance(m, dict) else None, f"{field}.moves[{j}]")
        moved.add(d)  # type: ignore[arg-type]
    plan.used.append(DICTATE)
    if plan.dictates > 1:  # a Dictate beyond the rulebook's one per round
        plan.used.extend(uses_by)
    if len(moves) > 1:  # a Dictate moving more than the rulebook's one worker
        plan.used.extend(limit_by)


@folds("AssignmentSealed")
def _sealed(state: GameState, e: Event) -> None:
    p = state.players[e["seat"]]
    p.columns = [list(e["columns"][ph]) for ph in PHASES]
    p.dictate = list(e["dictate"])
    p.selected = PHASE_INDEX[e["selected"]]
    p.selector = e["selector"]
    p.used = list(e["used"])
    for t in e.get("talents", ()):  # Ambition: talent counters put to work
        p.talents.remove(t)
    p.waiting = ""


# --- Reveal ----------------------------------------------------------------------------------


def forecasters(state: GameState) -> list[int]:
    """The seats that may still change their selected phase at this Reveal (Psi-Crystal
    Forecasters) and have not decided yet."""
    return [
        p.seat
        for p in state.playing()
        if p.selector >= 0 and not p.marks.get(FORECAST_DONE) and registry.handlers(p, "forecast")
    ]


FORECAST = "forecast"
FORECAST_DONE = "forecast"  # the mark of a decided forecast this round


def screens_lifted(state: GameState) -> bool:
    """Whether this round's Reveal already opened for a Psi-Crystal Forecasters owner."""
    return any(p.marks.get(FORECAST_DONE) or p.waiting == FORECAST for p in state.players)


def lift_screens(state: GameState, ctx: Ctx) -> bool:
    """Open Reveal for the owners of Psi-Crystal Forecasters: roll the 2-player spare Home die
    now and let them decide (True when someone now owes the ``forecast`` decision)."""
    seats = forecasters(state)
    if not seats:
        return False
    extra = _spare_die(state)
    ctx.emit(
        ev(
            "ScreensLifted",
            seats=seats,
            selected={str(p.seat): PHASES[p.selected] for p in state.players if p.selected >= 0},
            two_player_die=extra,
        )
    )
    return True


def _spare_die(state: GameState) -> str | None:
    """The 2-player spare Home die's face this round (None with more players)."""
    if len(state.players) != 2:
        return None
    if state.forced.get("two_player_die"):
        return str(state.forced["two_player_die"][0])
    _, face = rngmod.below(state.rng, 6)
    return DICE["white"].faces[face]


def _roll_spare(state: GameState, die: str | None) -> None:
    """Fold the 2-player spare Home die's roll (consumes a forced face or the generator)."""
    if len(state.players) != 2:
        return
    if state.forced.get("two_player_die"):
        state.forced["two_player_die"].pop(0)
    else:
        state.rng, face = rngmod.below(state.rng, 6)
        if DICE["white"].faces[face] != die:
            raise ChanceMismatch("the 2-player Home die differs from the seed's roll")
    state.two_player_die = die


@folds("ScreensLifted")
def _screens_lifted(state: GameState, e: Event) -> None:
    _roll_spare(state, e["two_player_die"])
    for seat in e["seats"]:
        state.players[seat].waiting = FORECAST


def legal_forecast(state: GameState, p: PlayerState) -> dict[str, Any]:
    return {
        "kind": FORECAST,
        "selected": PHASES[p.selected],
        "selector": p.selector,
        "phases": list(PHASES),
        "others": {
            str(q.seat): PHASES[q.selected]
            for q in state.playing()
            if q.seat != p.seat and q.selected >= 0
        },
        "two_player_die": state.two_player_die,
        "help": "phase (optional): move your phase selection die to this phase, as if you had "
        "selected it before Reveal; leave it out (or give your selected phase) to keep it",
    }


def apply_forecast(state: GameState, p: PlayerState, cmd: dict[str, Any], ctx: Ctx) -> None:
    to = cmd.get("phase")
    if to is None:
        to = PHASES[p.selected]
    t = _phase(to, "phase")
    pid = next(pid for pid, _h in registry.handlers(p, "forecast"))
    moved = t != p.selected
    ctx.emit(
        ev(
            "PhaseReselected",
            seat=p.seat,
            selector=p.selector,
            selected=PHASES[t],
            powers=[pid] if moved else [],
        )
    )


@folds("PhaseReselected")
def _reselected(state: GameState, e: Event) -> None:
    p = state.players[e["seat"]]
    new = PHASE_INDEX[e["selected"]]
    if new != p.selected:
        p.columns[p.selected].remove(e["selector"])
        p.columns[new].append(e["selector"])
        p.columns[new].sort()
        p.selected = new
    p.marks[FORECAST_DONE] = 1
    p.waiting = ""


def reveal(state: GameState, ctx: Ctx) -> None:
    selected = {p.selected for p in state.playing() if p.selected >= 0}
    extra = None
    lifted = state.two_player_die is not None  # rolled when the screens were lifted
    if lifted:
        extra = state.two_player_die
    elif len(state.players) == 2:
        if state.forced.get("two_player_die"):
            extra = state.forced["two_player_die"][0]
        else:
            _, face = rngmod.below(state.rng, 6)
            extra = DICE["white"].faces[face]
    seats = [
        {
            "seat": p.seat,
            "selected": PHASES[p.selected] if p.selected >= 0 else None,
            "selector": p.selector,
            "columns": {ph: p.columns[i][:] for i, ph in enumerate(PHASES)},
            "dictate": p.dictate[:],
            "faces": {str(d): DIE_FACES[d][f] for d, f in sorted(p.faces.items())},
        }
        for p in state.players
    ]
    phases = set(selected)
    if extra is not None and extra != WILD:
        phases.add(PHASE_INDEX[extra])
    ctx.emit(
        ev(
            "PhasesRevealed",
            phases=[PHASES[i] for i in sorted(phases)],
            two_player_die=extra,
            seats=seats,
            **({"lifted": True} if lifted else {}),
        )
    )


@folds("PhasesRevealed")
def _revealed(state: GameState, e: Event) -> None:
    if e.get("lifted"):
        pass  # the spare Home die was rolled when the screens were lifted (Psi-Crystal)
    elif len(state.players) == 2 and state.forced.get("two_player_die"):
        state.forced["two_player_die"].pop(0)
        state.two_player_die = e["two_player_die"]
    elif len(state.players) == 2:
        state.rng, face = rngmod.below(state.rng, 6)
        if DICE["white"].faces[face] != e["two_player_die"]:
            raise ChanceMismatch(
                "PhasesRevealed: the 2-player Home die differs from the seed's roll"
            )
        state.two_player_die = e["two_player_die"]
    state.phases = [PHASE_INDEX[ph] for ph in e["phases"]]
    state.phase_pos = -1
    happening = set(state.phases)
    ambition = state.options.get("ambition")
    for p in state.players:
        for i, col in enumerate(p.columns):
            if i not in happening and col:
                if ambition:
                    col[:] = _shift_two_phase(p, i, col, happening)
                # Ambition: "any Talent workers assigned to phases that didn't occur are
                # returned to a player's unused Talent counters"
                p.cup.extend(d for d in col if not objectives.back_to_unused(p, d))
                col.clear()
        p.cup.extend(p.dictate)
        p.dictate = []
        p.cup.sort()


def _shift_two_phase(p: PlayerState, i: int, col: list[int], happening: set[int]) -> list[int]:
    """Ambition rulebook, Two Phase Faces: "During the Reveal step, if this worker is assigned to
    either of its two displayed phases and that phase does *not* occur, immediately shift it to
    the other displayed phase - if it occurred - instead of the cup." Moves such workers of column
    ``i`` (a phase that does not occur) and returns the workers left for the cup."""
    rest = []
    for d in col:
        f = p.faces.get(d)
        two = _two_phases(DIE_FACES[d][f]) if f is not None and d < PHANTOM_BASE else ()
        other = [PHASE_INDEX[ph] for ph in two if PHASE_INDEX[ph] != i]
        if len(other) == 1 and PHASES[i] in two and other[0] in happening:
            p.columns[other[0]].append(d)
        else:
            rest.append(d)
    return rest
