"""Assign-step powers: the 18 Reassign developments (Dictate variants included).

Every power whose catalogue effect has ``type: reassign`` gets the same generic, data-driven
handler (``_use``) on the ``reassign`` hook and a description of what it allows (``_info``) on the
``reassign_info`` hook (read by ``assign.legal``). The effect fields (see engine/data/tiles.yaml):

  count       int, or {min, max}: how many workers one use moves (each die at most once per use)
  exactly     the count is exact (Executive Power: exactly 2, one die is refused)
  from        "any", or {die_colors, exclude_die_colors, phases (the columns the workers must
              stand in when this use starts), same_phase (all dice of the use from one column)}
  to          "any", "selected" (the column of the phase this seat selected) or a list of phases
  condition   Mad Scientists: Novelty worlds compared with every other tableau

The two Dictate variants change the built-in Dictate through the ``dictate_limit`` hook
(``dictate_unlimited``: Backup Planning) and the ``dictate_moves`` hook (``dictate_extra``:
Galactic Mandate); ``assign._dictate`` records them in ``AssignmentSealed.used`` when they made a
difference.

Readings where the sources disagree (see the data README, disagreement 7):
- Homeworld Patriotism and Propaganda Campaign: one or two workers, all into the *selected* phase
  (kfodex, BGA and Jonas); kp's "1 worker to any phase OR 2 to the selected phase" is not used.
- Isolation Policy: only workers standing in the Explore column (kp omits "explorers only").
- Mad Scientists: Novelty worlds of the whole tableau count, home and faction worlds included
  (BGA); strictly most -> up to 2 moves, tied for most -> 1 (everyone at zero is a tie, as the
  rulebook's clarification says), otherwise the power cannot be used.
- A die moved by one power may be moved again by a later power (BGA); the rulebook only limits
  each power to one use per round. A move must change the die's column.
- Colour limits use the die's colour only: a Consumption (purple) die is never a Home die, so it
  qualifies for System Diversification's "non-Home" and for no named colour (rulebook Fine Points).
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from ..catalogue import CARDS, PHASE_INDEX, PHASES, color_of
from ..errors import refuse
from ..state import GameState, PlayerState
from .registry import all_power_ids, effects, power, registrar

if TYPE_CHECKING:
    from ..phases.assign import Plan

COLOR_NAMES = {
    "white": "Home (white)",
    "red": "Military (red)",
    "purple": "Consumption (purple)",
    "blue": "Novelty (blue)",
    "brown": "Rare Elements (brown)",
    "green": "Genes (green)",
    "yellow": "Alien Technology (yellow)",
    "black": "Leader (black)",
    "orange": "Entrepreneur (orange)",
}


def _name(pid: str) -> str:
    """A power's development name (the catalogue grows with Ambition, so read it now)."""
    return next((c.name for c in CARDS.values() if c.power_id == pid), pid)


def _spec(pid: str, kind: str) -> dict[str, Any]:
    for eff in effects(pid):
        if eff.get("type") == kind:
            return eff
    raise KeyError(f"{pid} has no {kind} effect")


def _label(pid: str) -> str:
    return f"{_name(pid)} ({pid})"


def _colors(names: list[str]) -> str:
    return " or ".join(COLOR_NAMES.get(c, c) for c in names)


# --- Mad Scientists' condition -----------------------------------------------------------------


def novelty_worlds(p: PlayerState) -> int:
    """Novelty worlds in a tableau (home and faction worlds count)."""
    return sum(1 for k in p.worlds if CARDS[k].color == "novelty")


def _condition_max(state: GameState, p: PlayerState, cond: dict[str, Any]) -> tuple[int, str]:
    """The count a ``condition`` allows now, and why (for messages and the legal choices)."""
    if cond.get("counter") != "novelty_worlds_in_tableau":
        raise ValueError(f"unknown reassign condition {cond!r}")
    mine = novelty_worlds(p)
    others = [novelty_worlds(q) for q in state.players if q.seat != p.seat]
    best = max(others, default=0)
    if mine > best:
        n, how = int(cond["strictly_most"]["max"]), "strictly the most"
    elif mine == best:
        n, how = int(cond["tied_for_most"]["max"]), "tied for the most"
    else:
        n, how = int(cond["otherwise"]["max"]), "not the most"
    why = (
        f"you have {mine} Novelty world(s), the most any other player has is {best}: "
        f"{how}, so up to {n} move(s)"
    )
    return n, why


# --- the shape of one power ------------------------------------------------------------------


def _bounds(state: GameState, p: PlayerState, eff: dict[str, Any]) -> tuple[int, int, str]:
    count = eff.get("count", 1)
    if isinstance(count, dict):
        lo, hi = int(count.get("min", 1)), int(count["max"])
    else:
        lo = hi = int(count)
    why = ""
    if eff.get("condition"):
        cap, why = _condition_max(state, p, eff["condition"])
        hi = min(hi, cap)
        lo = min(lo, hi)
    return lo, hi, why


def _from(eff: dict[str, Any]) -> dict[str, Any]:
    src = eff.get("from", "any")
    if src == "any" or not src:
        return {}
    out: dict[str, Any] = {}
    for key in ("die_colors", "exclude_die_colors", "phases"):
        if src.get(key):
            out[key] = list(src[key])
    if src.get("same_phase"):
        out["same_phase"] = True
    return out


def _targets(eff: dict[str, Any], selected: int) -> list[str] | str:
    to = eff.get("to", "any")
    if to == "any":
        return list(PHASES)
    if to == "selected":
        return "selected" if selected < 0 else [PHASES[selected]]
    return [ph for ph in PHASES if ph in to]


def _info(pid: str) -> Any:
    def info(state: GameState, p: PlayerState) -> dict[str, Any]:
        eff = _spec(pid, "reassign")
        lo, hi, why = _bounds(state, p, eff)
        out: dict[str, Any] = {
            "via": pid,
            "name": _name(pid),
            "uses": 1 if hi > 0 else 0,
            "count_min": lo,
            "count_max": hi,
            "exactly": bool(eff.get("exactly")),
            "from": _from(eff),
            # "selected": the phase this seat selects in the same command
            "to": "selected" if eff.get("to") == "selected" else _targets(eff, -1),
        }
        if why:
            out["condition"] = why
        return out

    return info


# --- the generic handler -----------------------------------------------------------------------


def _use(pid: str) -> Any:
    def use_power(
        state: GameState, p: PlayerState, plan: Plan, use: dict[str, Any], field: str
    ) -> None:
        eff = _spec(pid, "reassign")
        name = _label(pid)
        moves = _check_count(state, p, eff, use.get("moves"), field, name, pid)
        src = _from(eff)
        targets = _targets(eff, plan.selected)
        to_text = (
            f"only into the phase you selected ({PHASES[plan.selected]})"
            if eff.get("to") == "selected"
            else "only into " + " or ".join(targets)
        )
        # check every move against the columns as they stand when this use starts
        seen: set[int] = set()
        first_col: int | None = None
        for j, m in enumerate(moves):
            f = f"{field}.moves[{j}]"
            die, to = m.get("die"), m.get("to")
            if die not in plan.col or die == plan.selector:
                plan.move(die, to, f, name)  # raises the shared "not a worker" / "selector" error
            if die in seen:
                refuse(
                    "moves", f"{f}.die: {name} moves die {die} twice in one use", f"{f}.die", die
                )
            seen.add(die)
            col = plan.col[die]
            _check_source(src, die, col, first_col, f, name)
            if first_col is None:
                first_col = col
            if to in PHASE_INDEX and to not in targets:
                refuse(
                    "target",
                    f"{f}.to: {name} moves workers {to_text}; die {die} cannot go to {to}",
                    f"{f}.to",
                    to,
                )
        # Plan.move does the shared checks (a phase name, a change of column); the dice of one use
        # are distinct, so each still stands where the checks above saw it
        for j, m in enumerate(moves):
            plan.move(m["die"], m.get("to"), f"{field}.moves[{j}]", name)

    return use_power


def _check_count(
    state: GameState,
    p: PlayerState,
    eff: dict[str, Any],
    moves: Any,
    field: str,
    name: str,
    pid: str,
) -> list[Any]:
    """How many workers one use moves: the power's count, capped by its condition (if any)."""
    lo, hi, why = _bounds(state, p, eff)
    if hi <= 0:
        refuse("condition", f"{field}: {name} cannot be used this round: {why}", field, pid)
    if not isinstance(moves, list) or not all(isinstance(m, dict) for m in moves):
        refuse(
            "moves",
            f"{field}.moves: {name} needs a list of moves {{die, to}}",
            f"{field}.moves",
            moves,
        )
    if not lo <= len(moves) <= hi:
        if lo == hi:
            need = f"exactly {lo}"
        else:
            need = f"{lo} to {hi}"
        extra = f" ({why})" if why else ""
        refuse(
            "count",
            f"{field}.moves: {name} moves {need} worker(s) per use{extra}, not {len(moves)}",
            f"{field}.moves",
            len(moves),
        )
    return moves


def _check_source(
    src: dict[str, Any], die: int, col: int, first_col: int | None, f: str, name: str
) -> None:
    """The workers a power may move: by die colour, by the column they stand in, from one column."""
    color = color_of(die)
    if "die_colors" in src and color not in src["die_colors"]:
        refuse(
            "color",
            f"{f}.die: {name} moves only {_colors(src['die_colors'])} dice; "
            f"die {die} is {COLOR_NAMES[color]}",
            f"{f}.die",
            die,
        )
    if "exclude_die_colors" in src and color in src["exclude_die_colors"]:
        refuse(
            "color",
            f"{f}.die: {name} cannot move {_colors(src['exclude_die_colors'])} dice; "
            f"die {die} is {COLOR_NAMES[color]}",
            f"{f}.die",
            die,
        )
    if "phases" in src and PHASES[col] not in src["phases"]:
        refuse(
            "source",
            f"{f}.die: {name} moves only workers standing in the "
            f"{' or '.join(src['phases'])} column; die {die} is in the {PHASES[col]} column",
            f"{f}.die",
            die,
        )
    if src.get("same_phase") and first_col is not None and col != first_col:
        refuse(
            "same_phase",
            f"{f}.die: {name} moves workers from one and the same column; die {die} "
            f"is in the {PHASES[col]} column, the first in the {PHASES[first_col]} column",
            f"{f}.die",
            die,
        )


# --- Dictate variants --------------------------------------------------------------------------


def _workers(p: PlayerState) -> int:
    return sum(len(c) for c in p.columns)


def _dictate_unlimited(state: GameState, p: PlayerState, limit: int) -> int:
    # "any number of times": each use parks one worker other than the selector, so at most
    # (workers - 1) uses can ever happen; that bound is the limit shown in the legal choices
    return max(limit, _workers(p) - 1)


def _dictate_extra(pid: str) -> Any:
    def moves(state: GameState, p: PlayerState, limit: int) -> int:
        return max(limit, int(_spec(pid, "dictate_extra")["reassign_max"]))

    return moves


@registrar
def _register() -> None:
    for pid in all_power_ids():
        kinds = {e.get("type") for e in effects(pid)}
        if "reassign" in kinds:
            power(pid, "reassign")(_use(pid))
            power(pid, "reassign_info")(_info(pid))
        if "dictate_unlimited" in kinds:
            power(pid, "dictate_limit")(_dictate_unlimited)
        if "dictate_extra" in kinds:
            power(pid, "dictate_moves")(_dictate_extra(pid))
