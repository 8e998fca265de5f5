"""The event fold: ``evolve(state, event)`` and the registry of fold functions.

Each phase module registers the fold function of the events it owns with ``@folds("Type")``;
``evolve`` looks the type up and applies it in place. ``Ctx.emit`` appends an event and folds it at
once, so the rules code that decides the next event always reads the state the previous events
made, and the events a command returns are exactly what replay folds.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from .errors import InvalidEvent
from .state import GameState

Event = dict[str, Any]
FoldFn = Callable[[GameState, Event], None]

_FOLDS: dict[str, FoldFn] = {}
#: events that create a state from nothing (GameCreated)
_CREATORS: dict[str, Callable[[Event], GameState]] = {}

SCHEMA_VERSION = 1


def folds(event_type: str) -> Callable[[FoldFn], FoldFn]:
    def register(fn: FoldFn) -> FoldFn:
        if event_type in _FOLDS:
            raise RuntimeError(f"two fold functions for {event_type}")
        _FOLDS[event_type] = fn
        return fn

    return register


def creates(
    event_type: str,
) -> Callable[[Callable[[Event], GameState]], Callable[[Event], GameState]]:
    def register(fn: Callable[[Event], GameState]) -> Callable[[Event], GameState]:
        _CREATORS[event_type] = fn
        return fn

    return register


def evolve(state: GameState | None, event: Event) -> GameState:
    """Fold one event into the state, in place, and return the state.

    ``state`` is None only for the game's first event (``GameCreated``).
    """
    etype = event.get("type")
    if state is None:
        creator = _CREATORS.get(etype)  # type: ignore[arg-type]
        if creator is None:
            raise InvalidEvent(f"a game log must start with GameCreated, not {etype!r}")
        state = creator(event)
        state.seq = 1
        return state
    fn = _FOLDS.get(etype)  # type: ignore[arg-type]
    if fn is None:
        raise InvalidEvent(f"unknown event type {etype!r} at event {state.seq + 1}")
    fn(state, event)
    state.seq += 1
    return state


def ev(event_type: str, **payload: Any) -> Event:
    """Build an event dict: its type, the schema version and the payload."""
    payload["type"] = event_type
    payload["v"] = SCHEMA_VERSION
    return payload


class Ctx:
    """Collects the events of one command while folding each into the state as it is emitted.

    A context made without a state (``Ctx(None)``, at setup) gets one from its first event,
    ``GameCreated``."""

    __slots__ = ("_state", "events")

    def __init__(self, state: GameState | None) -> None:
        self._state = state
        self.events: list[Event] = []

    @property
    def state(self) -> GameState:
        if self._state is None:
            raise InvalidEvent("no game yet: a game's first event is GameCreated")
        return self._state

    def emit(self, event: Event) -> None:
        self.events.append(event)
        state = self._state
        if state is None:
            self._state = evolve(None, event)
            return
        fn = _FOLDS.get(event["type"])
        if fn is None:
            raise InvalidEvent(f"unknown event type {event['type']!r} at event {state.seq + 1}")
        fn(state, event)
        state.seq += 1
