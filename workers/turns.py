"""Playing one pending decision: the body of every bot and timeout job.

The job names the decision (game, seat, the version at which it became pending). It loads the
game, checks that this very decision is still owed (else it does nothing: the game moved on),
derives the plan (``dispatch.plan_decision``: who plays and under which command id), lets the
bot or the timeout policy choose from the seat's own legal choices and view, and submits through
``Games.submit`` - the same command path as a person - with the version it decided on. A
``ConcurrencyConflict`` (another seat acted meanwhile) means: reload and decide again. An
``IllegalCommand`` means a bot produced an illegal move: a bug, logged loudly and never retried.
"""

from __future__ import annotations

import logging
from dataclasses import asdict, dataclass
from typing import Any

import engine
from engine.rng import Rng
from events import ConcurrencyConflict, GameNotFound

from .dispatch import plan_decision
from .policy import bot_command, timeout_command
from .runtime import Runtime

log = logging.getLogger(__name__)


class CommandRejected(Exception):
    """A bot or timeout policy produced a command the rules refuse (a bug, not retried)."""


@dataclass
class Outcome:
    """What a job did: ``played``, ``duplicate`` (already applied), ``moved_on``, ``over``,
    ``gone`` (no such game), ``early`` (deadline not reached), ``not_ours`` (a person owes it
    with no deadline) or ``contended`` (too many conflicts in a row)."""

    status: str
    game_id: str
    seat: int
    since: int
    command_id: str | None = None
    version: int | None = None
    kind: str | None = None  # the decision's kind (the command's), when one was played

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)


def play(rt: Runtime, game_id: str, seat: int, since: int, hooks: Any = None) -> Outcome:
    """Play ``seat``'s decision that became pending at version ``since``, if still owed."""
    games = rt.games
    for _ in range(max(1, rt.settings.conflict_retries)):
        try:
            state, version, clocks = games.load_clocks(game_id)
        except GameNotFound:
            return Outcome("gone", game_id, seat, since)
        if state.over:
            return Outcome("over", game_id, seat, since)
        if seat not in engine.pending(state) or clocks.seats[seat].since_version != since:
            return Outcome("moved_on", game_id, seat, since)
        plan = plan_decision(game_id, state, clocks, seat, rt.settings.default_bot)
        if plan is None:
            return Outcome("not_ours", game_id, seat, since)
        if plan.at is not None and rt.clock() < plan.at:
            return Outcome("early", game_id, seat, since, plan.command_id)
        # secret until the seed is revealed: derived from the seed, the seat and the decision
        rng = Rng.for_bot(state.seed, plan.command_id)
        try:
            if plan.kind == "timeout":
                command = timeout_command(state, seat, plan.player, rng)
            else:
                command = bot_command(state, seat, plan.player, rng)
        except ValueError as exc:  # an unknown bot name in the table: nothing to retry
            log.error("CANNOT PLAY game %s seat %d decision @%d: %s", game_id, seat, since, exc)
            raise CommandRejected(str(exc)) from exc
        if hooks is not None:
            hooks.before_append(game_id, seat)
        try:
            sub = games.submit(game_id, seat, command, plan.command_id, expected_version=version,
                               actor=plan.actor)  # fmt: skip
        except ConcurrencyConflict:
            continue
        except engine.IllegalCommand as exc:
            log.error(
                "REJECTED COMMAND (bug in %s %r): game %s seat %d decision @%d: %s\n"
                "decision: %s\ncommand: %s",
                plan.kind, plan.player, game_id, seat, since, exc,
                engine.legal(state, seat), command,
            )  # fmt: skip
            raise CommandRejected(f"{plan.kind} {plan.player!r} made an illegal command in "
                                  f"{game_id} seat {seat} @{since}: {exc}") from exc  # fmt: skip
        status = "duplicate" if sub.result.duplicate else "played"
        return Outcome(status, game_id, seat, since, plan.command_id, sub.version, command.get("kind"))
    return Outcome("contended", game_id, seat, since)
