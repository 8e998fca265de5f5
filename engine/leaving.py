"""Leaving a game: resigning and abandoning. House rules: the rulebook has neither.

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

Both are commands like any other (recorded by ``CommandSubmitted``, re-run by the replayer), so
a log that ends by resignation or abandonment verifies as complete.
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
LEAVING = {"resign": resign, "abandon": abandon}


@folds("SeatResigned")
def _resigned(state: GameState, e: Event) -> None:
    """Only a marker: the GameEnded that follows ends the game."""


@folds("GameAbandoned")
def _abandoned(state: GameState, e: Event) -> None:
    """Only a marker: the GameEnded that follows ends the game."""
