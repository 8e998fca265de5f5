"""Errors raised by the event store. Each message says what went wrong and what to do next."""

from __future__ import annotations


class StoreError(Exception):
    """Base class of every event-store error."""


class ConcurrencyConflict(StoreError):
    """The game's stream is not at the version the caller expected.

    ``actual`` is the current version: reload the events after ``expected`` (or the whole game),
    re-run the command against the new state and append again at ``actual``.
    """

    def __init__(self, game_id: str, expected: int, actual: int) -> None:
        self.game_id = game_id
        self.expected = expected
        self.actual = actual
        super().__init__(
            f"game {game_id!r} is at version {actual}, not at the expected version {expected}: "
            f"read the events after {expected}, re-run the command on the new state and append "
            f"again with expected_version={actual}"
        )


class DecisionChanged(ConcurrencyConflict):
    """A command answering a seat's decision by its id (``decision_id``) came after that seat's
    decision changed: it was answered already, or the game moved the seat to another decision.

    ``current`` is the seat's decision id now (None: the seat owes nothing now), ``kind`` its
    kind, ``actual`` the game's version. Nothing was stored.
    """

    def __init__(
        self,
        game_id: str,
        seat: int,
        decision_id: int,
        current: int | None,
        kind: str | None,
        actual: int,
    ) -> None:
        self.seat = seat
        self.decision_id = decision_id
        self.current = current
        self.kind = kind
        super().__init__(game_id, actual, actual)
        now = (
            f"it owes decision {current} ({kind}) now: read the seat view, decide on its "
            f"'decision' and send a command with decision_id {current} and a new command id"
            if current is not None
            else "it owes no decision now: wait for the other seats (follow the event stream), "
            "then read the seat view again"
        )
        self.args = (
            f"seat {seat} no longer owes decision {decision_id} of game {game_id!r} (it was "
            f"answered already, perhaps by another command id, or the game moved on to another "
            f"step): nothing was stored; {now}",
        )


class GameNotFound(StoreError):
    """The game has no stream (nothing was ever appended to it, or it was deleted)."""

    def __init__(self, game_id: str) -> None:
        self.game_id = game_id
        super().__init__(
            f"game {game_id!r} does not exist in the event store: check the id, or create the "
            f"game by appending its first events with expected_version=0"
        )


class InvalidBatch(StoreError, ValueError):
    """The envelopes handed to ``append`` do not form a valid batch; nothing was written."""


class ChainBroken(StoreError):
    """The hash chain does not verify: an envelope was altered, lost or reordered."""

    def __init__(self, game_id: str, seq: int, reason: str) -> None:
        self.game_id = game_id
        self.seq = seq
        self.reason = reason
        super().__init__(
            f"hash chain of game {game_id!r} breaks at seq {seq}: {reason}; the stored log "
            f"was changed outside the store - restore it from a backup or the AOF before "
            f"serving this game"
        )


class EmbeddedServerError(StoreError):
    """The embedded Redis-compatible server could not be found or started."""
