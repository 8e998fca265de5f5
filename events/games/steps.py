"""Replay steps: a finished game's state at any event of its log, without folding the whole prefix
on every step.

``Steps.fold_at`` gives the state and clocks after the log's first N envelopes (``GameService.view_at``
renders them). A finished game never changes, so its log is read once and kept - for the ``keep``
games asked most recently - with copies of the folded state and clocks about every ``every``
envelopes, taken where a command's batch ends (the clocks fold whole batches). A step folds on
from the nearest of them at or before it: at most one interval and a batch, however long the game.
The copies are never changed (a step folds a copy of its checkpoint). A game not over is read
and folded each time and nothing of it is kept.
"""

from __future__ import annotations

import threading
from collections import OrderedDict

from engine.state import GameState
from events.envelope import Envelope
from events.games.time_control import Clocks, batches
from events.games.time_control import fold as fold_clocks
from events.store.port import EventStore

#: envelopes between two kept states of a finished game (a step folds at most about this many)
EVERY = 64
#: finished games whose log and states a process keeps (a 5-player log is a few MB in memory)
KEEP = 4


class _Log:
    __slots__ = ("envs", "marks")

    def __init__(self, envs: list[Envelope], marks: list[tuple[int, GameState, Clocks]]) -> None:
        self.envs = envs
        #: (envelopes folded, state, clocks) at the end of a batch, about every ``EVERY``
        self.marks = marks


class Steps:
    """The states of finished games at any event, for replay steps (one per ``GameService``)."""

    def __init__(self, store: EventStore, every: int = EVERY, keep: int = KEEP) -> None:
        self.store = store
        self.every = every
        self.keep = keep
        self._logs: OrderedDict[str, _Log] = OrderedDict()
        self._lock = threading.Lock()

    def fold_at(self, game_id: str, at: int) -> tuple[GameState, Clocks, list[Envelope]]:
        """(state, clocks, the first ``at`` envelopes) of the game after its ``at``-th envelope.
        Raises ``GameNotFound`` and ``ValueError`` (``at`` outside 1..version)."""
        log = self._log(game_id)
        _check(at, len(log.envs))
        start, state, clocks = 0, None, None
        for n, st, cl in reversed(log.marks):
            if n <= at:
                start, state, clocks = n, st.copy(), cl.copy()
                break
        if start < at:
            state, clocks = fold_clocks(state, clocks, log.envs[start:at])
        assert state is not None and clocks is not None
        return state, clocks, log.envs[:at]

    def _log(self, game_id: str) -> _Log:
        """The game's log and states: a finished game's read and folded on first use and kept,
        a game under way's read and folded now."""
        version = self.store.version(game_id)
        with self._lock:
            kept = self._logs.get(game_id)
            if kept is not None and len(kept.envs) == version:
                self._logs.move_to_end(game_id)
                return kept
        envs = self.store.read(game_id)
        state: GameState | None = None
        clocks: Clocks | None = None
        marks: list[tuple[int, GameState, Clocks]] = []
        folded = 0
        for batch in batches(envs):
            state, clocks = fold_clocks(state, clocks, batch)
            folded += len(batch)
            if folded - (marks[-1][0] if marks else 0) >= self.every:
                marks.append((folded, state.copy(), clocks.copy()))
        log = _Log(envs, marks)
        if state is None or not state.over:
            return log
        with self._lock:
            self._logs[game_id] = log
            self._logs.move_to_end(game_id)
            while len(self._logs) > self.keep:
                self._logs.popitem(last=False)
        return log


def _check(at: int, length: int) -> None:
    if not 1 <= at <= length:
        raise ValueError(f"the game has {length} events: give a step from 1 to {length}")
