"""A Gym-style environment for research: one seat against built-in bots, in-process.

    env = GalaxyEnv(players=2, seat=0, opponents=["heuristic"])
    obs, info = env.reset(seed="exp-1")        # obs: the seat's view; info["legal"]: its decision
    obs, reward, terminated, truncated, info = env.step(command)

The observation is exactly ``engine.observe(state, seat)`` (what the seat may see); the legal
choices are ``info["legal"]`` (``engine.legal``: the decision with its choices) and
``info["actions"]``, a short list of ready-made legal commands (the heuristic bot's and a few
random ones) for agents that pick from a list. ``step`` plays the command, then the other seats'
bots until this seat owes a decision again or the game ends. The reward is 0 until the end, then
1 for a win (shared on a tie: 1/number of winners) and 0 for a loss; ``truncated`` is true when
the round cap is reached. Same seed, same commands: same game.

It lives in ``bots/`` because it plays built-in bots: the engine imports no bot (layers point one
way, ``engine <- bots``). No dependency on ``gymnasium``: the methods follow its API.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from typing import Any

import engine
from engine.rng import Rng
from engine.state import GameState

from .base import Bot, get_bot
from .heuristic import HeuristicBot
from .random_bot import RandomBot

Command = dict[str, Any]


class GalaxyEnv:
    def __init__(
        self,
        players: int = 2,
        seat: int = 0,
        opponents: Sequence[str | Bot] = ("heuristic",),
        max_rounds: int = 100,
        actions: int = 4,
    ) -> None:
        if not 0 <= seat < players:
            raise ValueError(f"seat must be 0..{players - 1}")
        self.players, self.seat, self.max_rounds, self.n_actions = (
            players,
            seat,
            max_rounds,
            actions,
        )
        others = [o if not isinstance(o, str) else get_bot(o) for o in opponents]
        self.bots: dict[int, Bot] = {}
        k = 0
        for s in range(players):
            if s != seat:
                self.bots[s] = others[k % len(others)]
                k += 1
        self.state: GameState | None = None
        self._rng = Rng.from_seed("env")
        self._bot_rngs: dict[int, Rng] = {}

    def reset(self, seed: str | int = 0) -> tuple[dict[str, Any], dict[str, Any]]:
        self.state, _ = engine.new_game(f"env:{seed}", self.players)
        self._rng = Rng.for_bot(self.state.seed, f"env:{self.seat}")
        self._bot_rngs = {s: Rng.for_bot(self.state.seed, f"env:{s}") for s in self.bots}
        self._others()
        return self._observation(), self._info()

    def step(self, command: Command) -> tuple[dict[str, Any], float, bool, bool, dict[str, Any]]:
        s = self.state
        if s is None:
            raise RuntimeError("call reset() first")
        if s.over:
            raise RuntimeError("the game is over; call reset()")
        engine.play(s, self.seat, command)  # an illegal command raises engine.IllegalCommand
        self._others()
        truncated = not s.over and s.round > self.max_rounds
        reward = 0.0
        if s.over and self.seat in s.winners:
            reward = 1.0 / len(s.winners)
        return self._observation(), reward, s.over, truncated, self._info()

    def legal(self) -> Command | None:
        return engine.legal(self.state, self.seat) if self.state is not None else None

    # --- the other seats ---------------------------------------------------------------------------
    def _others(self) -> None:
        s = self.state
        assert s is not None
        while not s.over and s.round <= self.max_rounds:
            pend = engine.pending(s)
            movers = [x for x in sorted(pend) if x != self.seat]
            if not movers:
                return  # this seat owes a decision (or, never, nobody does)
            who = movers[0]
            d = engine.legal(s, who)
            assert d is not None
            bot = self.bots[who]
            view = engine.observe(s, who) if bot.needs_view else None
            engine.play(s, who, bot.act(d, view, self._bot_rngs[who]))

    def _observation(self) -> dict[str, Any]:
        assert self.state is not None
        return engine.observe(self.state, self.seat)

    def _info(self) -> dict[str, Any]:
        d = self.legal()
        info: dict[str, Any] = {"legal": d, "actions": []}
        if d is not None:
            seen: dict[str, Command] = {}
            cmds = [HeuristicBot().act(d, self._observation(), self._rng)]
            cmds += [RandomBot().act(d, None, self._rng) for _ in range(self.n_actions * 2)]
            for c in cmds:
                seen.setdefault(json.dumps(c, sort_keys=True), c)
            info["actions"] = list(seen.values())[: self.n_actions]
        return info
