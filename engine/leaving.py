"""Leaving a game: resigning, abandoning and aborting. House rules: the rulebook has none of them.

* **resign** (``{"kind": "resign"}``, from a seat): a seat may resign at any moment of a game
  under way, whether or not it owes a decision. Event: ``SeatResigned {seat, round, step}`` (the
  round and the step it happened in; ``step`` from rules version 5).

  - **Three or more seats** (rules version 5 on, ``PLAY_ON_SINCE_RULES``): the resigned seat
    leaves and the others play on. It takes no further part (no bot takes it over: a game is
    between the people who sat down): its workers under the phase strip and in the Dictate
    area go back to its cup, tiles it drew and had not placed are abandoned (they go back to the
    bag when Explore ends), and from then on it rolls no dice, selects no phase, owes no
    decision, its Manage Empire is skipped and no power of its tableau pays it. Its tableau,
    construction zone, goods and VP chips stay on the table as they are (powers that compare
    tableaux still see them); it is scored at the end like every seat but never wins. The game
    keeps the rules of the seats it was dealt (the VP pool of 12 chips per seat; no two-player
    Home die when two seats of three are left). It ends as every game does (the VP pool or a
    tableau of 12 tile squares; ``scoring.final_scores``), the winners being the best of the
    seats that did not resign; or, when only one seat that did not resign is left, at once
    (below), that seat winning.
  - **Two seats**, the last seat but one resigning, and every game of rules versions 1 to 4:
    the game ends at once: it is scored as it stands, exactly as at a normal end (VP chips +
    tile costs + the 6-cost developments' bonuses, ``scoring.score``), and the winners are the
    best of the seats that did not resign by the usual tie-break (cup dice + credits); a
    resigned seat never wins, whatever its score. Events: ``SeatResigned`` then ``GameEnded``
    with ``reason: "resigned"``.

  A resigned seat's commands are refused (code ``resigned``), ``abandon`` excepted.
* **abandon** (``{"kind": "abandon"}``): a game everyone walked away from ends with nobody
  winning; the scores as they stand are recorded. The engine takes it from any seat; the
  service lets only the game's host (the seat claimed first) or the admin send it. Events:
  ``GameAbandoned`` then ``GameEnded`` with ``reason: "abandoned"`` and no winners.

* **abort** (``{"kind": "abort"}``, from a seat): calling off a game just started, as if it had
  never been played: accepted only until the first round ends (during the setup decisions of
  round 0 and during round 1; from the start of round 2 it is refused with the code
  ``too_late``). Why a house rule: an online game between strangers (or programs) may start
  with a table nobody wanted (a wrong time control, an opponent that does not answer); letting
  either side call it off before anything much was played, without a result, keeps players from
  resigning games they never meant to play, while a later abort would be a free way out of a
  losing game. It ends with nobody winning; the scores as they stand are recorded (the game
  counts for nothing: a ladder records no result for it). Events: ``GameAborted`` then
  ``GameEnded`` with ``reason: "aborted"`` and no winners. The service offers it only in games
  made from a challenge (their table names it: ``table.challenge``); the engine never reads the
  table.

All three are commands like any other (recorded by ``CommandSubmitted``, re-run by the replayer), so
a log that ends by resignation, abandonment or abort verifies as complete.
"""

from __future__ import annotations

from typing import Any

from .catalogue import PHANTOM_BASE
from .errors import refuse
from .fold import Ctx, Event, ev, folds
from .phases.explore import waiting_for as explore_waiting
from .scoring import score
from .state import GameState

#: the rules version from which the others play on when a seat of three or more resigns
#: (``engine.phases.setup.RULES_VERSION``'s table); before it every resignation ended the game
PLAY_ON_SINCE_RULES = 5


def plays_on(state: GameState) -> bool:
    """Whether the game goes on after a resignation: rules version 5 or later and at least two
    seats that did not resign."""
    return state.rules >= PLAY_ON_SINCE_RULES and len(state.playing()) >= 2


def resign(state: GameState, seat: int, cmd: dict[str, Any], ctx: Ctx) -> None:
    """The seat resigns: the others play on while two or more are left, else the game ends now
    and the best of the others wins."""
    if set(cmd) != {"kind"}:
        refuse("fields", "a resign command is just {'kind': 'resign'}", "command", cmd)
    when = {"step": state.step} if state.rules >= PLAY_ON_SINCE_RULES else {}
    ctx.emit(ev("SeatResigned", seat=seat, round=state.round, **when))
    if plays_on(state):
        return
    scores = [score(p) for p in state.players]
    staying = {p.seat for p in state.playing()}
    others = [s for s in scores if s["seat"] in staying]
    best = max((s["total"], s["tiebreak"]) for s in others)
    winners = [s["seat"] for s in others if (s["total"], s["tiebreak"]) == best]
    _end(state, ctx, "resigned", scores, winners)


def refuse_resigned(state: GameState, seat: int, kind: Any) -> None:
    """A resigned seat takes no further part: its commands are refused (``abandon`` aside)."""
    when = state.players[seat].resigned
    if when and kind != "abandon":
        refuse(
            "resigned",
            f"seat {seat} resigned in round {when['round']} and takes no further part in this "
            "game; the others play on",
            "kind",
            kind,
        )


def abandon(state: GameState, seat: int, cmd: dict[str, Any], ctx: Ctx) -> None:
    """The game is abandoned: it ends now and nobody wins."""
    if set(cmd) != {"kind"}:
        refuse("fields", "an abandon command is just {'kind': 'abandon'}", "command", cmd)
    ctx.emit(ev("GameAbandoned", seat=seat, round=state.round))
    _end(state, ctx, "abandoned", [score(p) for p in state.players], [])


#: the last round in which a game may still be aborted (round 0: the setup decisions)
ABORT_UNTIL_ROUND = 1


def abort(state: GameState, seat: int, cmd: dict[str, Any], ctx: Ctx) -> None:
    """The game is called off before its first round ended: it ends now, nobody wins."""
    if set(cmd) != {"kind"}:
        refuse("fields", "an abort command is just {'kind': 'abort'}", "command", cmd)
    if state.round > ABORT_UNTIL_ROUND:
        refuse(
            "too_late",
            f"a game can be aborted only until its first round ends; this one is in round "
            f"{state.round}: resign instead ({{'kind': 'resign'}})",
            "kind",
            "abort",
        )
    ctx.emit(ev("GameAborted", seat=seat, round=state.round))
    _end(state, ctx, "aborted", [score(p) for p in state.players], [])


def _end(
    state: GameState, ctx: Ctx, reason: str, scores: list[dict[str, Any]], winners: list[int]
) -> None:
    ctx.emit(
        ev(
            "GameEnded",
            reason=reason,
            rounds=state.round,
            scores=scores,
            winners=winners,
            seed=state.seed,
        )
    )


#: command kind -> its rule; any seat may send these whatever decision it owes (``flow``)
LEAVING = {"resign": resign, "abandon": abandon, "abort": abort}


@folds("SeatResigned")
def _resigned(state: GameState, e: Event) -> None:
    """The seat is marked resigned (the round and step it happened in). When the others play on,
    it leaves the board: its workers and parked dice go back to its cup, the tiles it drew and
    had not placed are abandoned, and it owes nothing; otherwise the GameEnded that follows ends
    the game."""
    p = state.players[e["seat"]]
    p.resigned = {"round": e["round"], "step": e.get("step", state.step)}
    if not plays_on(state):
        return
    for col in p.columns:
        p.cup.extend(d for d in col if d < PHANTOM_BASE)
        col.clear()
    p.cup.extend(p.dictate)
    p.cup.sort()
    p.dictate = []
    p.selected = p.selector = -1
    state.abandoned.extend(p.drawn)
    p.drawn = []
    p.marks.pop("resume", None)
    p.waiting = ""
    if state.shortfall.get("seat") == p.seat:  # the scout left: nothing more is drawn for it
        state.shortfall = {}
        for q in state.playing():
            if q.waiting == "abandon_one":
                q.marks.pop("resume", None)
                q.waiting = explore_waiting(state, q)


@folds("GameAbandoned")
def _abandoned(state: GameState, e: Event) -> None:
    """Only a marker: the GameEnded that follows ends the game."""


@folds("GameAborted")
def _aborted(state: GameState, e: Event) -> None:
    """Only a marker: the GameEnded that follows ends the game."""
