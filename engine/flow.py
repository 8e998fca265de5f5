"""The round as data, and the one function that says who must act now.

A round is: Roll -> Assign -> Reveal -> the selected phases in order (Explore, Develop, Settle,
Produce, Ship) -> Manage Empire -> end of round. ``advance`` moves the game along while nobody owes
a decision, emitting the automatic events (rolls, reveal, phase starts and ends, resolutions
without a real choice, scoring). ``pending`` lists the seats that owe a decision and its kind.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from .ambition import objectives
from .catalogue import PHASE_INDEX, PHASES, phantom_id
from .errors import InvalidEvent, NotYourDecision, refuse
from .fold import Ctx, Event, ev, folds
from .leaving import LEAVING, refuse_resigned
from .phases import assign, develop_settle, explore, manage, produce, setup, ship
from .powers import registry
from .presence import PRESENCE
from .scoring import final_scores
from .state import GameState, PlayerState

#: decision kind -> (legal choices, apply). Phase modules own both.
Apply = Callable[[GameState, PlayerState, dict[str, Any], Ctx], None]
Legal = Callable[[GameState, PlayerState], dict[str, Any]]

DECISIONS: dict[str, tuple[Legal, Apply]] = {
    "start_tiles": (setup.legal, setup.apply),
    "assign": (assign.legal, assign.apply),
    "forecast": (assign.legal_forecast, assign.apply_forecast),
    "explore": (explore.legal, explore.apply),
    "place_tiles": (explore.legal, explore.apply_place),
    "abandon_one": (explore.legal, explore.apply_abandon_one),
    "develop": (lambda s, p: develop_settle.legal(s, p, "develop"), develop_settle.apply),
    "settle": (lambda s, p: develop_settle.legal(s, p, "settle"), develop_settle.apply),
    "produce": (produce.legal, produce.apply),
    "ship": (ship.legal, ship.apply),
    "buy_vp": (ship.legal_buy_vp, ship.apply_buy_vp),
    "manage": (manage.legal, manage.apply),
}


def _develop_waiting(state: GameState, p: PlayerState) -> str:
    return develop_settle.waiting_for(state, p, "develop")


def _settle_waiting(state: GameState, p: PlayerState) -> str:
    return develop_settle.waiting_for(state, p, "settle")


#: phase -> the decision a seat owes when the phase starts ("" when none)
WAITING: dict[str, Callable[[GameState, PlayerState], str]] = {
    "explore": explore.waiting_for,
    "develop": _develop_waiting,
    "settle": _settle_waiting,
    "produce": produce.waiting_for,
    "ship": ship.waiting_for,
}


PHASE_START: dict[str, Callable[[GameState, Ctx], None]] = {
    "explore": lambda s, c: None,
    "develop": develop_settle.start,
    "settle": develop_settle.start,
    "produce": produce.start,
    "ship": ship.start,
}
PHASE_FINISH: dict[str, Callable[[GameState, Ctx], None]] = {
    "explore": explore.finish,
    "develop": develop_settle.finish,
    "settle": develop_settle.finish,
    "produce": produce.finish,
    "ship": ship.finish,
}


def pending(state: GameState) -> dict[int, str]:
    """Seat -> the kind of decision it owes now (seats owing nothing are absent)."""
    if state.step == "over":
        return {}
    out = {p.seat: p.waiting for p in state.players if p.waiting}
    if state.shortfall:
        out = {s: k for s, k in out.items() if k in ("abandon_one", "place_tiles")}
    return out


def owed(state: GameState, seat: int) -> str:
    """The kind of decision one seat owes now ("" when none): ``pending(state).get(seat, "")``."""
    players = state.players
    if state.step == "over" or not (isinstance(seat, int) and 0 <= seat < len(players)):
        return ""
    kind = players[seat].waiting
    if kind and state.shortfall and kind not in ("abandon_one", "place_tiles"):
        return ""
    return kind


def legal(state: GameState, seat: int) -> dict[str, Any] | None:
    """The decision a seat owes, with its legal choices (None when it owes nothing)."""
    kind = owed(state, seat)
    if not kind:
        return None
    out = DECISIONS[kind][0](state, state.players[seat])
    out["seat"] = seat
    return out


def apply_command(state: GameState, seat: int, cmd: Any, ctx: Ctx) -> None:
    """Check and apply one seat's command, then advance through automatic steps."""
    if state.step == "over":
        refuse("game_over", "the game is over; no more commands are accepted")
    if not isinstance(seat, int) or not 0 <= seat < len(state.players):
        refuse("seat", f"seat must be 0..{len(state.players) - 1}, not {seat!r}", "seat", seat)
    if not isinstance(cmd, dict):
        refuse("command", "a command must be a JSON object with a 'kind'", None, cmd)
    kind = cmd.get("kind")
    refuse_resigned(state, seat, kind)
    if kind in LEAVING:  # resign, abandon, abort: owed decision or not (``leaving``)
        LEAVING[kind](state, seat, cmd, ctx)
        advance(state, ctx)  # a seat that resigned owes nothing: the others may play on
        return
    if kind in PRESENCE:  # back: a seat's player is at the table again (``presence``)
        PRESENCE[kind](state, seat, cmd, ctx)
        return
    owes = owed(state, seat)
    if not owes:
        raise NotYourDecision(
            "not_pending",
            f"seat {seat} owes no decision now; wait for the other players",
            "kind",
            kind,
        )
    if kind != owes:
        raise NotYourDecision(
            "wrong_kind", f"seat {seat} owes a '{owes}' decision, not {kind!r}", "kind", kind
        )
    DECISIONS[owes][1](state, state.players[seat], cmd, ctx)
    advance(state, ctx)


def _anyone_waiting(state: GameState) -> bool:
    for p in state.players:
        if p.waiting:
            return True
    return False


def advance(state: GameState, ctx: Ctx) -> None:
    while state.step != "over":
        if state.step == "explore":
            explore.progress(state, ctx)
        if _anyone_waiting(state):
            return
        _next(state, ctx)


def _next(state: GameState, ctx: Ctx) -> None:
    step = state.step
    if step == "start_tiles":
        assign.roll(state, ctx)
    elif step == "assign":
        # Ambition objectives "After Assign, before Reveal" and "After Reveal"; between them,
        # Psi-Crystal Forecasters' owner decides (checked once, before the screens are lifted)
        if not assign.screens_lifted(state):
            objectives.check(state, ctx, "assign")
        if assign.lift_screens(state, ctx):
            return
        assign.reveal(state, ctx)
        objectives.check(state, ctx, "reveal")
        _start_next_phase(state, ctx)
    elif step in PHASE_FINISH:
        before = state.seq
        PHASE_FINISH[step](state, ctx)
        if state.step == step and state.seq != before and _anyone_waiting(state):
            return
        objectives.check(state, ctx, step)  # Ambition: "at the end of the listed phases"
        _start_next_phase(state, ctx)
    elif step == "manage":
        _end_round(state, ctx)
    else:  # pragma: no cover - a corrupt state
        raise RuntimeError(f"unknown step {step}")


def _start_next_phase(state: GameState, ctx: Ctx) -> None:
    if state.phase_pos + 1 < len(state.phases):
        phase = PHASES[state.phases[state.phase_pos + 1]]
        phantoms: list[list[Any]] = []
        powers: list[str] = []
        for p in state.playing():
            k = 0
            for pid, h in registry.handlers(p, "virtual_workers"):
                for color in h(state, p, phase):
                    phantoms.append([p.seat, phantom_id(color, k), pid])
                    k += 1
                    if pid not in powers:
                        powers.append(pid)
        extra: dict[str, Any] = {"phantoms": phantoms, "powers": powers} if phantoms else {}
        ctx.emit(ev("PhaseStarted", phase=phase, **extra))
        PHASE_START[phase](state, ctx)
    else:
        manage.start(state, ctx)


def _end_round(state: GameState, ctx: Ctx) -> None:
    objectives.check(state, ctx, "manage")  # Ambition: at the end of the Manage Empire step
    reason = manage.game_end_reason(state)
    ctx.emit(ev("RoundEnded", round=state.round, game_over=reason is not None))
    if reason is None:
        assign.roll(state, ctx)
        return
    scores, winners = final_scores(state)
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


@folds("PhaseStarted")
def _phase_started(state: GameState, e: Event) -> None:
    state.phase_pos += 1
    phase = e["phase"]
    if PHASES[state.phases[state.phase_pos]] != phase:
        raise ValueError(f"PhaseStarted: {phase} is not the next phase of this round")
    state.step = phase
    for seat, die, _pid in e.get("phantoms", ()):
        state.players[seat].columns[PHASE_INDEX[phase]].append(die)
    waiting = WAITING[phase]
    for p in state.playing():
        p.waiting = waiting(state, p)


@folds("PhaseEnded")
def _phase_ended(state: GameState, e: Event) -> None:
    if e["phase"] != state.step:
        raise InvalidEvent(
            f"PhaseEnded: {e['phase']} ends, but the phase under way is {state.step}"
        )
    if e["phase"] == "explore":
        state.bag = sorted(state.bag + state.abandoned)
        state.abandoned = []
    for p in state.players:
        p.waiting = ""


@folds("GameEnded")
def _game_ended(state: GameState, e: Event) -> None:
    state.step = "over"
    state.end_reason = e["reason"]
    state.scores = [dict(s) for s in e["scores"]]
    state.winners = list(e["winners"])
    for p in state.players:
        p.waiting = ""
