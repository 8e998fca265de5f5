"""Leaving a game: resigning, abandoning and aborting. House rules: the rulebook has none of them.

* **resign** (``{"kind": "resign"}``, from a seat): a seat may resign at any moment of a game
  under way, whether or not it owes a decision. The game ends at once (no bot takes the seat
  over: a game is between the people who sat down): it is scored as it stands, exactly as at a
  normal end (VP chips + tile costs + the 6-cost developments' bonuses, ``scoring.score``), and
  the winners are the best of the seats that did not resign by the usual tie-break (cup dice +
  credits); the resigned seat never wins, whatever its score. Events: ``SeatResigned`` then
  ``GameEnded`` with ``reason: "resigned"``.
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

from .errors import refuse
from .fold import Ctx, Event, ev, folds
from .scoring import score
from .state import GameState


def resign(state: GameState, seat: int, cmd: dict[str, Any], ctx: Ctx) -> None:
    """The seat resigns: the game ends now, the best of the others wins."""
    if set(cmd) != {"kind"}:
        refuse("fields", "a resign command is just {'kind': 'resign'}", "command", cmd)
    ctx.emit(ev("SeatResigned", seat=seat, round=state.round))
    scores = [score(p) for p in state.players]
    others = [s for s in scores if s["seat"] != seat]
    best = max((s["total"], s["tiebreak"]) for s in others)
    winners = [s["seat"] for s in others if (s["total"], s["tiebreak"]) == best]
    _end(state, ctx, "resigned", scores, winners)


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
    """Only a marker: the GameEnded that follows ends the game."""


@folds("GameAbandoned")
def _abandoned(state: GameState, e: Event) -> None:
    """Only a marker: the GameEnded that follows ends the game."""


@folds("GameAborted")
def _aborted(state: GameState, e: Event) -> None:
    """Only a marker: the GameEnded that follows ends the game."""
