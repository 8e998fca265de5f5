"""The record of a submitted command: ``CommandSubmitted``.

The engine's ``decide`` never emits it; the service puts it first in every command's batch of
events, so a game's log holds its inputs as well as their outcomes, and a replayer can re-run each
command against the state before it and compare the outcome byte for byte. Its fold changes nothing
but the event count. It is private to the seat (an Assign command shows dice behind the screen);
others see only the kind of decision that was made.
"""

from __future__ import annotations

from typing import Any

from .fold import Event, ev, folds
from .state import GameState


def command_submitted(seat: int, command: dict[str, Any]) -> Event:
    return ev("CommandSubmitted", seat=seat, command=command, public={"kind": command.get("kind")})


@folds("CommandSubmitted")
def _submitted(state: GameState, e: Event) -> None:
    """A command is an input, not a change: folding it only counts it."""
