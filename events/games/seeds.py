"""Seeds held back: a game of a duplicate set reveals its seed when every game of the set has ended.

A duplicate set (``ladder.service``: one seed dealt to every rotation of a table, the games played
at once) shares its seed between its games. The first game to end would reveal, in its view and
its log, the seed that deals every die and tile still to come in the others. So whoever creates
such games holds their seed first (``SeedHolds.hold``, before any of them exists; stored by
``events.store.seeds``).

While another game of its set is still running, a finished game of the set shows
``seed_withheld`` instead of ``seed`` in its public and seat views and in the feed's GameEnded
(which reveals the seed otherwise), and its log export is the viewer's redacted feed under a
first line ``{"seed_withheld": {...}}``, unsigned (``GameService.view``, ``GameService.feed``,
``GameService.export``; the admin's full log is not held back). A game of the set has ended when its
lobby summary says finished, or when it is gone (never created, deleted or expired: it runs no
more). The first reader that finds every game of the set ended deletes the set's keys; from then
on its games are ordinary finished games, whose full signed logs verify.

The set's commitments do not pair its games either: from rules version 4 each binds its game id
as well as the seed (``engine.rng.commitment``).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import orjson

from engine.canonical import canonical_json
from events.errors import GameNotFound
from events.store.port import EventStore
from events.verify.replay import WITHHELD

"""The field of a view, and the key of an export's first line, saying the seed is held back."""
REASON = "duplicate-set"
"""Why a seed is held back (the value of a view's ``seed_withheld``)."""
DETAIL = (
    "this game is over, but other games dealt the same seed (its duplicate set) are still "
    "running: its seed, full log and signature come when every game of the set has ended"
)


class SeedHolds:
    """The seeds held back on one store (``EventStore.seed_holds``)."""

    def __init__(self, store: EventStore) -> None:
        self.store = store
        self.held = store.seed_holds

    def hold(self, game_ids: Sequence[str]) -> None:
        """Hold the seed of each of ``game_ids`` (one set, dealt one seed) until all have ended.
        Call it before creating the games: from their first event on, none may reveal it."""
        self.held.hold(game_ids)

    def running(self, game_id: str) -> list[str]:
        """The other games of ``game_id``'s set still running (while there are any, its seed is
        held back); empty for a game whose seed is not held. The first call that finds every
        game of the set ended releases the set (deletes its keys)."""
        members = self.held.members(game_id)
        if members is None:
            return []
        running = [g for g in members if g != game_id and not self._ended(g)]
        if not running:
            self.held.release(members)
        return running

    def _ended(self, game_id: str) -> bool:
        """Whether a game of a set runs no more: its lobby summary says finished, or it is gone."""
        try:
            stored = self.store.get_view(game_id, "summary")
        except GameNotFound:
            return True
        return stored is not None and orjson.loads(stored[1]).get("status") == "finished"


def reveals(view: str) -> bool:
    """Whether a stored view (JSON) shows a seed (it does once its game is over)."""
    return '"seed":"' in view


def withholds(view: str) -> bool:
    """Whether a view (JSON, as ``GameService.view`` gives it) holds its seed back."""
    return '"' + WITHHELD + '":' in view


def withhold(view: str) -> str:
    """A finished game's view (JSON) with ``seed_withheld`` in place of its seed."""
    out = orjson.loads(view)
    out.pop("seed", None)
    out[WITHHELD] = REASON
    return canonical_json(out)


def withhold_item(item: dict[str, Any]) -> dict[str, Any]:
    """A feed item of GameEnded (which reveals the seed) with ``seed_withheld`` in its place."""
    event = {k: v for k, v in item["event"].items() if k != "seed"}
    event[WITHHELD] = REASON
    return {**item, "event": event}


def withheld_line(game_id: str) -> str:
    """The first line of a log export whose seed is held back."""
    return canonical_json({WITHHELD: {"game_id": game_id, "reason": REASON, "detail": DETAIL}})


def is_withheld(lines: Sequence[str]) -> bool:
    """Whether a log export (``GameService.export``'s lines) holds its seed back."""
    return bool(lines) and lines[0].startswith('{"' + WITHHELD + '"')
