"""Coming back to a seat: the command ``back``. A house rule: the rulebook has no clock.

* **back** (``{"kind": "back"}``, from a seat): the seat's player says they are at the table
  again. It changes nothing in the game and causes no event: its record (``CommandSubmitted``)
  is the fact. A table under time control counts the timeouts of each seat from the log, and a
  seat that timed out too often in a row is *away* (a bot plays it) until a command of its own
  player, such as this one (``events.games.time_control``). The engine takes it from any seat
  of a game under way, whether or not it owes a decision; the service sends it only for a seat
  that is away (``POST /games/<id>/seats/<n>/back``).
"""

from __future__ import annotations

from typing import Any

from .errors import refuse
from .fold import Ctx
from .state import GameState


def back(state: GameState, seat: int, cmd: dict[str, Any], ctx: Ctx) -> None:
    """The seat's player is back: nothing changes in the game."""
    if set(cmd) != {"kind"}:
        refuse("fields", "a back command is just {'kind': 'back'}", "command", cmd)


#: command kind -> its rule; any seat may send these whatever decision it owes (``flow``)
PRESENCE = {"back": back}
