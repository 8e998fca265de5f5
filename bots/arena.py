"""Plays whole games in-process with bots: the loop behind ``rfg simulate`` and the play-out tests.

Pure: the seed names the game, and each seat's bot gets its own generator derived from it, so the
same arguments always give the same games.
"""

from __future__ import annotations

import hashlib
from collections import Counter
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any

import engine
from engine import flow
from engine.canonical import canonical_bytes
from engine.rng import Rng
from engine.state import GameState

from .base import Bot, get_bot

DEFAULT_MAX_ROUNDS = 100


@dataclass
class GameRecord:
    seed: str
    players: int
    bots: list[str]
    state: GameState
    events: list[dict[str, Any]]
    finished: bool
    powers_used: dict[str, int] = field(default_factory=dict)

    def log_sha256(self) -> str:
        h = hashlib.sha256()
        for e in self.events:
            h.update(canonical_bytes(e))
            h.update(b"\n")
        return h.hexdigest()

    def summary(self) -> dict[str, Any]:
        s = self.state
        return {
            "seed": self.seed,
            "players": self.players,
            "bots": self.bots,
            "rounds": s.round,
            "events": len(self.events),
            "finished": self.finished,
            "end_reason": s.end_reason if self.finished else "round_cap",
            "scores": [x["total"] for x in s.scores] if self.finished else [],
            "winners": s.winners if self.finished else [],
            "powers_used": dict(sorted(self.powers_used.items())),
            "log_sha256": self.log_sha256(),
        }


def play_game(
    seed: str,
    players: int,
    bots: Sequence[str] | Sequence[Bot] = ("random",),
    options: dict[str, Any] | None = None,
    max_rounds: int = DEFAULT_MAX_ROUNDS,
    on_event: Callable[[GameState, dict[str, Any]], None] | None = None,
    rules: int | None = None,
) -> GameRecord:
    """Play one game to its end (or to ``max_rounds``, reported as unfinished).

    The log records every command (``CommandSubmitted``) before the events it caused, as the
    service's logs do, so ``rfg replay`` re-runs it as strictly. ``rules`` is the rules version
    (default: the current one)."""
    seat_bots: list[Bot] = []
    names: list[str] = []
    for i in range(players):
        b = bots[i % len(bots)]
        bot = get_bot(b) if isinstance(b, str) else b
        seat_bots.append(bot)
        names.append(bot.name)
    state, events = engine.new_game(seed, players, options, rules)
    shadow: GameState | None = None
    if on_event is not None:
        # a second state folded one event at a time, so the callback sees the state after each event
        for e in events:
            shadow = engine.evolve(shadow, e)
            on_event(shadow, e)
    rngs = [Rng.for_bot(state.seed, f"arena:{i}") for i in range(players)]
    powers: Counter[str] = Counter()
    pending, legal, play, evolve = flow.pending, flow.legal, engine.play, engine.evolve
    while not state.over and state.round <= max_rounds:
        pend = pending(state)
        if not pend:
            raise RuntimeError(f"game {seed}: nobody owes a decision at step {state.step}")
        for seat in sorted(pend):
            decision = legal(state, seat)
            if decision is None:
                continue
            bot = seat_bots[seat]
            view = engine.observe(state, seat) if bot.needs_view else None
            cmd = bot.act(decision, view, rngs[seat])
            record = engine.command_submitted(seat, cmd)
            evolve(state, record)
            caused = play(state, seat, cmd)
            for e in caused:  # (the record names no power)
                used = e.get("powers")
                if used:
                    for pid in used:
                        powers[pid] += 1
                if e["type"] == "AssignmentSealed":
                    for pid in e["used"]:
                        if pid != "dictate":
                            powers[pid] += 1
            events.append(record)
            events.extend(caused)
            if on_event is not None:
                for e in (record, *caused):
                    shadow = evolve(shadow, e)
                    on_event(shadow, e)
            if state.over:
                break
    return GameRecord(seed, players, names, state, events, state.over, dict(powers))


def game_seed(seed: int | str, index: int) -> str:
    """The seed of the index-th game of a simulation run."""
    return f"{seed}:{index}"
