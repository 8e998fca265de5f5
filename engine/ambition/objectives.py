"""Ambition's objectives and talent counters: the condition vocabulary's meaning, the checks, the
claims, and where a talent counter goes as it is used.

Owns the event ``ObjectiveClaimed`` and the state fields ``GameState.claims`` and
``PlayerState.talents`` (the six face-up tiles, ``GameState.objectives``, are dealt at setup by
``engine.phases.setup``; the talent supply is every counter no seat holds). The component
file's schema (which condition types exist and their fields) is ``engine.ambition.components``
(``CONDITIONS``, ``CHECKS``); this module says what each of them means (``met``).

Ambition rulebook, Objectives (optional):

* Setup: "shuffle the objective tiles face down. Select 6 to use and flip them face up. Put the
  rest away. Put the talent counters nearby to form a supply." (``engine.phases.setup``: a chance
  outcome recorded in ``GameCreated.objectives``.)
* Claiming: "check each objective at the end of the listed phases (or as indicated during a
  step). If its condition has been met, give the player(s) who achieved it the listed number of
  Talent counters from the supply, worker side face up, and flip the objective tile face down to
  show it has been claimed and is no longer available." (``check``: every seat that meets the
  condition at that moment gets the listed number; the tile is then claimed.)
* "For conditions that require you to own dice, these dice may be anywhere in your empire, among
  your tiles, construction zone, phase strip, cup, Citizenry, etc." (``PlayerState.owned_dice``.)

Check points (``CHECKS`` of the component file): ``assign`` "After Assign, before Reveal";
``reveal`` "After Reveal" (for example "only Develop and Settle selected"); a phase name: the end
of that phase, when it occurs this round; ``manage``: the end of the Manage Empire step.

Talent counters (ids from ``TALENT_BASE``, colour ``"talent"``), Ambition rulebook, Using Talent
Counters, and where each rule lives:
* "During the Assign step, players keep any Talent counters owned behind their screens": unused
  ones are ``PlayerState.talents``; ``engine.observe`` shows their number to others only once
  screens are lifted, and never counts talent workers among the dice behind a screen.
* "A Talent counter is considered a die and can be returned to the supply to satisfy immediate
  effects": a removal effect may take one (``engine.phases.develop_settle.removable``).
* "A player may assign Talent counters to any phase(s); they then become workers. Talent workers
  may be reassigned ... may not be used to Dictate dice": ``place_talents`` (the assign command's
  ``talents``); ``engine.phases.assign`` refuses to park one to Dictate. Reading: a talent worker
  may also be the worker that selects a phase (the rulebook does not forbid it).
* "During Reveal, any Talent workers assigned to phases that didn't occur are returned to a
  player's unused Talent counters": ``back_to_unused`` in the Reveal fold.
* "When a Talent worker finishes a task, remove it (returning the counter to the supply). If a
  Talent worker did not do a task, return it to its owner's unassigned Talent counters":
  ``finished`` (an explorer that Scouts or Stocks, a developer or settler whose tile completes, a
  good that is shipped, a shipper) and ``back_to_unused`` (workers returned unused). A talent
  developer or settler on a tile not yet complete stays on the stack, as a die would.
* "Talent counters used as either goods or shippers during Consume always match the color of the
  world": ``engine.catalogue.consume_matches``.
* "During the Manage Empire step, Talent workers can be recalled normally. If recalled, return
  them to their owners' unused Talent counters": ``engine.phases.manage``.
* "At game end, recall all Talent counters. Unused Talent counters are worth 1 VP apiece and do
  not count as dice for tie-breaking purposes (or as VP chips for Galactic Renaissance)":
  ``owned_talents`` in ``engine.scoring`` (never in the cup, never VP chips).

Readings where the rulebook is silent (noted):
* A talent counter is not a die for an objective's dice conditions (the rulebook makes it a die
  only "to satisfy immediate effects").
* ``distinct_die_colors`` counts a Leader (black) die as a Home (white) die, as the rulebook says
  for *Diverse Workforce*; an Entrepreneur (orange) die is a colour of its own
  (``engine.catalogue.diversity_color``, which Galactic Exchange's bonus shares).
* ``selected_phases`` compares the phases that occur this round (the 2-player game's spare Home
  die included) with the listed ones.
* When the supply has too few talent counters for every seat that claims, seats take theirs in
  seat order while the supply lasts.
"""

from __future__ import annotations

from typing import Any

from ..catalogue import (
    CARDS,
    DIE_COLOR,
    OBJECTIVES,
    PHANTOM_BASE,
    PHASES,
    TALENT_BASE,
    diversity_color,
)
from ..errors import InvalidEvent, refuse
from ..fold import Ctx, Event, ev, folds
from ..state import GameState, PlayerState

#: Ambition rulebook, Contents: "90 talent counters"
TALENT_COUNTERS = 90


def is_talent(worker: int) -> bool:
    """Whether a worker id is a talent counter (not a die, not a phantom worker)."""
    return worker >= TALENT_BASE


# --- the condition vocabulary -------------------------------------------------------------------


def _dice(p: PlayerState) -> list[int]:
    """Every real die the seat owns, wherever it lies (no phantom workers, no talent counters)."""
    return [d for d in p.owned_dice() if d < PHANTOM_BASE]


def _colors_ok(color: str | None, wanted: list[str] | None) -> bool:
    return wanted is None or color in wanted


def count(cond: dict[str, Any], state: GameState, p: PlayerState) -> int:
    """How much of what a counting condition counts the seat has now."""
    kind = cond["type"]
    colors = cond.get("colors")
    if kind == "worlds":
        least = int(cond.get("cost_at_least", 0))
        return sum(
            1 for k in p.worlds if _colors_ok(CARDS[k].color, colors) and CARDS[k].cost >= least
        )
    if kind == "developments":
        least = int(cond.get("cost_at_least", 0))
        return sum(1 for k in p.devs if CARDS[k].cost >= least)
    if kind == "distinct_world_colors":
        return len({CARDS[k].color for k in p.worlds})
    if kind == "dice":
        return sum(1 for d in _dice(p) if _colors_ok(DIE_COLOR[d], colors))
    if kind == "distinct_die_colors":
        return len({diversity_color(DIE_COLOR[d]) for d in _dice(p)})
    if kind == "citizenry":
        return sum(1 for d in p.citizenry if _colors_ok(DIE_COLOR[d], colors))
    if kind == "goods":
        return sum(len(g) for w, g in p.goods.items() if _colors_ok(CARDS[w].color, colors))
    if kind == "credits":
        return p.credits
    if kind == "vp_chips":
        return p.vp
    if kind == "shipped":
        tasks = cond.get("tasks") or ("trade", "consume")
        return sum(p.marks.get(f"shipped_{t}", 0) for t in tasks)
    if kind == "construction":
        return p.construction_tiles()
    raise ValueError(f"objective condition {kind!r} counts nothing")


def met(cond: dict[str, Any], state: GameState, p: PlayerState) -> bool:
    """Whether the seat's empire meets an objective's condition now."""
    kind = cond["type"]
    if kind == "all_of":
        return all(met(c, state, p) for c in cond["conditions"])
    if kind == "selected_phases":
        return sorted(PHASES[i] for i in state.phases) == sorted(cond["phases"])
    return count(cond, state, p) >= int(cond["min"])


# --- claiming -----------------------------------------------------------------------------------


def talent_supply(state: GameState) -> list[int]:
    """The talent counters in the supply: every counter no seat holds, lowest first."""
    held = {t for p in state.players for t in p.talents}
    for p in state.players:
        held.update(d for d in p.owned_dice() if d >= TALENT_BASE)
    return [t for t in range(TALENT_BASE, TALENT_BASE + TALENT_COUNTERS) if t not in held]


def available(state: GameState) -> list[int]:
    """The face-up objectives not claimed yet (the game's objectives are dealt at setup)."""
    claimed = {c["objective"] for c in state.claims}
    return [o for o in state.objectives if o not in claimed]


def check(state: GameState, ctx: Ctx, when: str) -> None:
    """Check the face-up objectives listed for this moment; every seat that meets one claims it."""
    if not state.objectives:
        return
    for oid in available(state):
        obj = OBJECTIVES[oid]
        if obj.check != when:
            continue
        seats = [p.seat for p in state.playing() if met(obj.condition, state, p)]
        if not seats:
            continue
        supply = talent_supply(state)
        talents: list[dict[str, Any]] = []
        at = 0
        for seat in seats:
            ids = supply[at : at + obj.talents]
            at += len(ids)
            talents.append({"seat": seat, "counters": ids})
        ctx.emit(
            ev(
                "ObjectiveClaimed",
                objective=oid,
                name=obj.name,
                check=when,
                round=state.round,
                seats=seats,
                talents=talents,
            )
        )


@folds("ObjectiveClaimed")
def _claimed(state: GameState, e: Event) -> None:
    if e["objective"] not in available(state):
        raise InvalidEvent(f"ObjectiveClaimed: objective {e['objective']} is not face up")
    supply = set(talent_supply(state))
    for award in e["talents"]:
        seat, ids = award["seat"], award["counters"]
        if not supply.issuperset(ids):
            raise InvalidEvent(f"ObjectiveClaimed: talent counters {ids} are not in the supply")
        supply.difference_update(ids)
        state.players[seat].talents = sorted(state.players[seat].talents + list(ids))
    state.claims.append(
        {
            "objective": e["objective"],
            "round": e["round"],
            "check": e["check"],
            "seats": list(e["seats"]),
        }
    )


# --- where a talent worker goes -----------------------------------------------------------------


def finished(worker: int) -> bool:
    """Whether a worker that finished its task leaves the game: a talent counter goes back to the
    supply (the caller just drops it: the supply is every counter no seat holds); a die goes
    where its phase says.

    Ambition rulebook: "When a Talent worker finishes a task, remove it (returning the counter to
    the supply)."
    """
    return worker >= TALENT_BASE


def back_to_unused(p: PlayerState, worker: int) -> bool:
    """A worker going back (not used, recalled): a talent counter returns to the seat's unused
    counters (True); a die goes where its rule says (False).

    Ambition rulebook: "During Reveal, any Talent workers assigned to phases that didn't occur are
    returned to a player's unused Talent counters"; "If a Talent worker did not do a task, return
    it to its owner's unassigned Talent counters"; Manage Empire: "If recalled, return them to
    their owners' unused Talent counters."
    """
    if worker < TALENT_BASE:
        return False
    p.talents.append(worker)
    p.talents.sort()
    return True


def place_talents(p: PlayerState, columns: dict[int, int], talents: Any) -> list[int]:
    """Assign: unused talent counters put to work (``talents: [{die, to}]``); each becomes a worker
    in ``columns`` (worker -> phase index). Returns the counters placed, in order.

    Ambition rulebook: "A player may assign Talent counters to any phase(s); they then become
    workers. Talent workers may be reassigned ... Talent counters need not be assigned; keep any
    unassigned counters separate from assigned Talent workers."
    """
    if not isinstance(talents, list):
        refuse("talents", "'talents' must be a list of {die, to}", "talents", talents)
    placed: list[int] = []
    for i, t in enumerate(talents):
        die = t.get("die") if isinstance(t, dict) else None
        if die not in p.talents:
            refuse(
                "talents",
                f"talents[{i}].die: {die!r} is not one of your unused talent counters {p.talents}",
                f"talents[{i}].die",
                die,
            )
        if die in placed:
            refuse("talents", f"talents[{i}].die: {die} is placed twice", f"talents[{i}].die", die)
        to = t.get("to")
        if to not in PHASES:
            refuse(
                "phase",
                f"talents[{i}].to must be one of {list(PHASES)}, not {to!r}",
                f"talents[{i}].to",
                to,
            )
        columns[die] = PHASES.index(to)
        placed.append(die)
    return placed


def owned_talents(p: PlayerState) -> int:
    """Every talent counter the seat owns: unused ones and those at work (as workers, on its
    construction stacks, as goods). Scoring: "At game end, recall all Talent counters. Unused
    Talent counters are worth 1 VP apiece"."""
    return len(p.talents) + sum(1 for d in p.owned_dice() if d >= TALENT_BASE)


def view(state: GameState) -> list[dict[str, Any]]:
    """The face-up objectives as everybody sees them: id, name, when checked, the reward, and
    who claimed it (the tiles are public)."""
    claims = {c["objective"]: c for c in state.claims}
    out = []
    for oid in state.objectives:
        obj = OBJECTIVES[oid]
        claim = claims.get(oid)
        out.append(
            {
                "id": obj.id,
                "name": obj.name,
                "check": obj.check,
                "condition": obj.condition,
                "talents": obj.talents,
                "claimed": {"round": claim["round"], "seats": list(claim["seats"])}
                if claim
                else None,
            }
        )
    return out
