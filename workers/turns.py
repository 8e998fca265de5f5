"""Playing one pending decision: the body of every bot and timeout job.

The job names the decision (game, seat, the version at which it became pending). It loads the
game and plans it once (``Loaded``: ``dispatch.plans``, who plays each owed decision and under
which command id), checks that this very decision is still owed (else it does nothing: the game
moved on), lets the bot or the timeout policy choose from the seat's own legal choices and view,
and submits through ``GameService.submit`` - the same command path as a person - with the version
it decided on. A ``ConcurrencyConflict`` (another seat acted meanwhile) means: load again and
decide again. An ``IllegalCommand`` means a bot produced an illegal move: a bug, logged loudly
and never retried.

**Playing on.** When every decision the game owes is a built-in bot's (``dispatch.bots_only``),
the job keeps the game: it takes the game's keeper lease (``events.store.agenda.Leases``, for
``stale_after``), and after its own decision plays the next one and the next, each through
the same ``_play_one`` (decided on the game as this process cached it after the last append,
since the lease keeps other writers away; ``GameService.submit`` with the version it decided on
and the command id ``bot:<seat>:<decision_id>``: one append per command, views and clocks as for
a job), taking the oldest pending decision first (``dispatch.next_plan``, the order a FIFO queue of
one job per decision reaches them, so the log is the same). While it keeps the game, its
appends enqueue nothing (``Dispatcher.kept``) and the sweep leaves the game alone (the lease).
It stops when a person, an external program or a deadline is owed, after ``settings.play_on``
seconds, or when the game ends; then it releases the lease and dispatches the game again
(``fresh=None``; with the state and plans it stopped at, when it stopped for what the game owes),
so the rest goes back to the queue behind other games. A killed worker's lease
expires after ``stale_after``; the sweep then finds the game (its version moved past the one
last dispatched) and enqueues the pending decisions again.
"""

from __future__ import annotations

import logging
import time
from dataclasses import asdict, dataclass
from typing import Any

import engine
from engine.rng import Rng
from engine.state import GameState
from events.games.time_control import Clocks
from events.store import ConcurrencyConflict, GameNotFound
from events.store.agenda import Lease

from .dispatch import Plan, bots_only, next_plan, plan_decision, plans
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
    decision_id: int
    command_id: str | None = None
    version: int | None = None
    kind: str | None = None  # the decision's kind (the command's), when one was played
    played_on: int = 0  # decisions this job played after its own, keeping the game

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)


@dataclass(frozen=True)
class Loaded:
    """A game as a job loaded it (read it, never change it) and what it owes the workers
    (``dispatch.plans``): each state is loaded once and planned once."""

    state: GameState
    version: int
    clocks: Clocks
    plans: list[Plan]

    @classmethod
    def load(cls, rt: Runtime, game_id: str, *, cached: bool = False) -> Loaded:
        """The game from the store (one round trip), or, ``cached``, as this process last saw it
        when it has it (a job that keeps the game: nobody else appends). Raises
        ``GameNotFound``."""
        found = rt.games.peek(game_id) if cached else None
        state, version, clocks = found or rt.games.load_clocks(game_id)
        return cls(state, version, clocks, plans(game_id, state, clocks, rt.settings.default_bot))

    def plan(self, rt: Runtime, game_id: str, seat: int) -> Plan | None:
        """``seat``'s plan (None: a person owes the decision with no deadline)."""
        for p in self.plans:
            if p.seat == seat:
                return p
        # (a paced bot the plans hold back for another one: its own job plays it when due)
        return plan_decision(game_id, self.state, self.clocks, seat, rt.settings.default_bot)


def play(rt: Runtime, game_id: str, seat: int, decision_id: int) -> Outcome:
    """Play ``seat``'s decision that became pending at version ``decision_id``, if still owed; then,
    if the game owes only built-in bots' decisions and no other job keeps it, play on."""
    try:
        game = Loaded.load(rt, game_id)
    except GameNotFound:
        return Outcome("gone", game_id, seat, decision_id)
    if rt.settings.play_on <= 0 or game.clocks.pace_ms or not bots_only(game.state, game.plans):
        # (a paced game's next bot decision is scheduled when this one is stored: no playing on)
        return _play_one(rt, game_id, game, seat, decision_id)
    lease_ms = max(100, int(rt.settings.stale_after * 1000))
    lease = rt.leases.keeper(game_id, lease_ms)
    if not lease.take():
        # another job keeps the game: play this decision (if still owed) and nothing more
        return _play_one(rt, game_id, game, seat, decision_id)
    dispatcher = rt.dispatcher
    dispatcher.kept.add(game_id)
    released = False
    try:
        outcome = _play_one(rt, game_id, game, seat, decision_id)
        if outcome.status not in ("played", "duplicate", "moved_on"):
            return outcome
        outcome.played_on, last = _play_on(rt, game_id, lease)
        dispatcher.kept.discard(game_id)
        lease.release()
        released = True
        _hand_back(rt, game_id, last)
        return outcome
    finally:
        dispatcher.kept.discard(game_id)
        if not released:
            try:
                lease.release()
            except Exception:  # noqa: BLE001 - the lease expires by itself
                log.warning("could not release the keeper lease of %s", game_id)


def _play_on(rt: Runtime, game_id: str, lease: Lease) -> tuple[int, Loaded | None]:
    """Play the game's next bot decision until it owes something else or the budget is spent;
    returns how many were played, and the game it stopped at when it loaded that one."""
    started = time.monotonic()
    stop_at = started + rt.settings.play_on
    renew_every = lease.ms / 3000.0
    renewed = started
    played = 0
    while True:
        now = time.monotonic()
        if now >= stop_at:
            return played, None
        if now - renewed >= renew_every:
            if not lease.renew():
                log.warning(
                    "lost the keeper lease of %s (paused longer than %d ms?): handing "
                    "the game back",
                    game_id,
                    lease.ms,
                )
                return played, None
            renewed = now
        try:
            # the lease keeps other writers away: the cached game is the stored one
            game = Loaded.load(rt, game_id, cached=True)
        except GameNotFound:
            return played, None
        if game.state.over or not bots_only(game.state, game.plans):
            return played, game
        nxt = next_plan(game.plans)
        outcome = _play_one(rt, game_id, game, nxt.seat, nxt.decision_id)
        if outcome.status not in ("played", "duplicate", "moved_on"):
            return played, None
        played += outcome.status == "played"


def _hand_back(rt: Runtime, game_id: str, last: Loaded | None) -> None:
    """Dispatch the game as it is now (``last``: as playing on left it, else loaded): what is
    still owed goes back to the queue (or to its deadline), and the agenda learns the version."""
    try:
        game = last or Loaded.load(rt, game_id)
    except GameNotFound:
        return
    rt.dispatcher.dispatch(game_id, game.state, game.clocks, game.version, game_plans=game.plans)


def _play_one(rt: Runtime, game_id: str, game: Loaded, seat: int, decision_id: int) -> Outcome:
    """Play ``seat``'s decision that became pending at version ``decision_id``, if still owed,
    deciding on ``game`` (the append checks the version; a conflict loads the game again)."""
    games = rt.games
    for attempt in range(max(1, rt.settings.conflict_retries)):
        if attempt:  # (another seat acted meanwhile)
            try:
                game = Loaded.load(rt, game_id)
            except GameNotFound:
                return Outcome("gone", game_id, seat, decision_id)
        state, version, clocks = game.state, game.version, game.clocks
        if state.over:
            return Outcome("over", game_id, seat, decision_id)
        if seat not in engine.pending(state) or clocks.seats[seat].decision_id != decision_id:
            return Outcome("moved_on", game_id, seat, decision_id)
        plan = game.plan(rt, game_id, seat)
        if plan is None:
            return Outcome("not_ours", game_id, seat, decision_id)
        if plan.at is not None and rt.clock() < plan.at:
            return Outcome("early", game_id, seat, decision_id, plan.command_id)
        command = _decide(rt, game_id, state, version, seat, decision_id, plan)
        try:
            sub = games.submit(
                game_id, seat, command, plan.command_id, expected_version=version, actor=plan.actor
            )
        except ConcurrencyConflict:
            continue
        except engine.IllegalCommand as exc:
            raise _rejected(game_id, state, seat, decision_id, plan, command, exc) from exc
        status = "duplicate" if sub.result.duplicate else "played"
        if status == "played":  # every move, whether its own job played it or a job playing on
            _log_played(game_id, seat, plan, command, sub.version)
        return Outcome(
            status, game_id, seat, decision_id, plan.command_id, sub.version, command.get("kind")
        )
    return Outcome("contended", game_id, seat, decision_id)


def _decide(
    rt: Runtime,
    game_id: str,
    state: GameState,
    version: int,
    seat: int,
    decision_id: int,
    plan: Plan,
) -> dict[str, Any]:
    """The bot's command, or the time control's default one for a seat out of time."""
    # secret until the seed is revealed: derived from the seed, the seat and the decision
    rng = Rng.for_bot(state.seed, plan.command_id)
    try:
        if plan.kind == "timeout":
            return timeout_command(state, seat, plan.player, rng)
        return bot_command(state, seat, plan.player, rng, rt.games.observed(game_id, version, seat))
    except ValueError as exc:  # an unknown bot name in the table: nothing to retry
        log.error("CANNOT PLAY game %s seat %d decision @%d: %s", game_id, seat, decision_id, exc)
        raise CommandRejected(str(exc)) from exc


def _rejected(
    game_id: str,
    state: GameState,
    seat: int,
    decision_id: int,
    plan: Plan,
    command: dict[str, Any],
    exc: engine.IllegalCommand,
) -> CommandRejected:
    """An illegal command from a bot or the time control is a bug: logged with the decision."""
    log.error(
        "REJECTED COMMAND (bug in %s %r): game %s seat %d decision @%d: %s\n"
        "decision: %s\ncommand: %s",
        plan.kind,
        plan.player,
        game_id,
        seat,
        decision_id,
        exc,
        engine.legal(state, seat),
        command,
    )
    return CommandRejected(
        f"{plan.kind} {plan.player!r} made an illegal command in "
        f"{game_id} seat {seat} @{decision_id}: {exc}"
    )


def _log_played(game_id: str, seat: int, plan: Plan, command: dict[str, Any], version: int) -> None:
    log.info(
        "played %s seat %d: %s (command %s, version %s)",
        game_id,
        seat,
        command.get("kind"),
        plan.command_id,
        version,
        extra={
            "game_id": game_id,
            "seat": seat,
            "decision": command.get("kind"),
            "command_id": plan.command_id,
            "version": version,
            "player": plan.kind,
        },
    )
