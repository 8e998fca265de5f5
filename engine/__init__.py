"""The rules engine of Roll for the Galaxy: pure, deterministic, no I/O.

The functional core (``decide``/``evolve``), in the rulebook's terms:

    events = create(seed, players, options)       # GameCreated + setup chance outcomes
    state = replay(events)                        # fold: reduce(evolve, events, None)
    pending(state) -> {seat: decision kind}       # who must act now (play is simultaneous)
    legal(state, seat) -> decision with choices   # the single source of legal choices
    events = decide(state, seat, command)         # pure: the state is not touched
    state = evolve(state, event)                  # folds one event (in place)
    observe(state, viewer) / redact(event, viewer)
    observe_all(state) -> {viewer: view}          # public + every seat, common parts shared

``play(state, seat, command)`` is ``decide`` + ``evolve`` done in one pass on the given state (no
copy), for simulations. Every event is a JSON-ready dict with ``type`` and ``v`` (schema version).
"""

from __future__ import annotations

from typing import Any

from . import compiled as _compiled  # noqa: F401  (first: refuses stale compiled modules)
from . import flow
from . import record as _record  # noqa: F401  (registers CommandSubmitted)
from .errors import ChanceMismatch, EngineError, IllegalCommand, InvalidEvent, NotYourDecision
from .fold import Ctx, Event, evolve
from .observe import observe, observe_all, redact, visibility
from .phases import setup
from .powers import effects as _power_effects  # noqa: F401  (registers PowerPaid)
from .powers import handlers as _power_handlers  # noqa: F401  (registers every power)
from .record import command_submitted
from .scoring import final_scores, score
from .state import GameState, canonical_json, state_hash

__all__ = [
    "ChanceMismatch",
    "EngineError",
    "Event",
    "GameState",
    "IllegalCommand",
    "InvalidEvent",
    "NotYourDecision",
    "canonical_json",
    "create",
    "decide",
    "evolve",
    "final_scores",
    "from_dict",
    "legal",
    "observe",
    "observe_all",
    "pending",
    "play",
    "redact",
    "replay",
    "score",
    "state_hash",
    "to_dict",
    "visibility",
    "command_submitted",
]


def create(
    seed: str,
    players: int,
    options: dict[str, Any] | None = None,
    table: dict[str, Any] | None = None,
    rules: int | None = None,
    game: str | None = None,
) -> list[Event]:
    """The events that start a game: setup, and the first roll when no start decision is needed.

    ``table`` is the service's description of the table (who sits where, time control); the
    engine records it in GameCreated and never reads it. ``rules`` is the rules version (default
    the current one, ``setup.RULES_VERSION``); replaying an old log recreates its own. ``game``
    is the name the game is published under (the service's game id, default the seed): from
    rules version 4 the seed's commitment binds it.
    """
    ctx = setup.create(seed, players, options, table, rules, game)
    flow.advance(ctx.state, ctx)
    return ctx.events


def new_game(
    seed: str, players: int, options: dict[str, Any] | None = None, rules: int | None = None
) -> tuple[GameState, list[Event]]:
    """Create a game and return its state with the events that made it."""
    ctx = setup.create(seed, players, options, None, rules)
    flow.advance(ctx.state, ctx)
    return ctx.state, ctx.events


def replay(events: list[Event]) -> GameState:
    """Fold a whole log from nothing."""
    state: GameState | None = None
    for e in events:
        state = evolve(state, e)
    if state is None:
        raise InvalidEvent("an empty log has no game")
    return state


def decide(state: GameState, seat: int, command: dict[str, Any]) -> list[Event]:
    """The events a seat's command causes (illegal commands raise IllegalCommand). Pure."""
    work = state.copy()
    ctx = Ctx(work)
    flow.apply_command(work, seat, command, ctx)
    return ctx.events


def play(state: GameState, seat: int, command: dict[str, Any]) -> list[Event]:
    """Like ``decide`` but folds the events into ``state`` itself (no copy).

    Every command is fully checked before its first event, so an illegal command leaves the state
    untouched.
    """
    ctx = Ctx(state)
    flow.apply_command(state, seat, command, ctx)
    return ctx.events


def pending(state: GameState) -> dict[int, str]:
    return flow.pending(state)


def legal(state: GameState, seat: int) -> dict[str, Any] | None:
    return flow.legal(state, seat)


def to_dict(state: GameState) -> dict[str, Any]:
    return state.to_dict()


def from_dict(d: dict[str, Any]) -> GameState:
    return GameState.from_dict(d)
