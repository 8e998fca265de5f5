"""The ``ismcts`` bot: information-set Monte Carlo tree search over determinizations.

It reads its seat's view and nothing else. Each iteration draws one full state consistent with the
view from ``engine.sampler`` (a *determinization*), walks the tree in that state, expands one node,
plays the game on with a roll-out policy and backs the result up (Cowling, Powley and Whitehouse,
"Information Set Monte Carlo Tree Search", 2012: single-observer ISMCTS; OpenSpiel's ``ismcts``).

* **Tree.** A node is one of this seat's decisions; its children are keyed by the command the seat
  makes there. The other seats' commands and the chance outcomes between two of its decisions are
  not branched on (most are hidden from it anyway: sealed assignments, tiles drawn), so one node
  gathers every history the seat cannot tell apart, as single-observer ISMCTS does.
* **Simultaneous moves: decoupled UCT.** Roll for the Galaxy's decisions are sealed and
  simultaneous. Every seat that owes a decision at a node picks its command with its own UCB1
  bandit over its own candidates, stored in that node and keyed by seat (Lanctot et al.,
  "Monte Carlo Tree Search in Simultaneous Move Games with Applications to Goofspiel", 2013).
  A candidate's UCB uses its *availability* count (how often it could be chosen), since the other
  seats' candidates change from one determinization to the next.
* **Candidates.** A decision has far too many legal commands to try them all: a seat tries the
  heuristic bot's command, for Assign the heuristic's plan for each of the five phases, and a few
  random legal commands (``width``).
* **Roll-outs** play every seat with the heuristic (default) or random bot for ``horizon`` rounds
  beyond the decision, or to the end; a game that ended scores 1 for a win (shared on a tie), a
  cut-off one ``0.5 + 0.5 * tanh(margin / 6)`` where the margin is the seat's current score minus
  the best other seat's.
* **Budget**: ``iterations`` per decision (reproducible) or ``millis`` read on a ``clock`` the
  caller passes (bots read no clock themselves; e.g. ``time.process_time``; not reproducible: how
  many iterations fit depends on the machine). **Seed**: the search draws from
  the bot's rng (given by the caller, one per seat and decision in the arena and the workers) or,
  with ``seed``, from a generator named by the seed and the view's version and seat.

A decision with one candidate is answered at once; a view the sampler cannot model (the very rare
Explore shortfall) is answered by the heuristic bot.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from typing import Any

import engine
from engine.catalogue import PHASES
from engine.errors import IllegalCommand
from engine.rng import Rng
from engine.sampler import Sampler, SamplerError
from engine.scoring import score
from engine.state import GameState, canonical_json

from .base import register_bot
from .heuristic import HeuristicBot
from .random_bot import RandomBot

Command = dict[str, Any]
SamplerFactory = Callable[[dict[str, Any], Rng], Any]


def _key(cmd: Command) -> str:
    return canonical_json(cmd)


class _Arm:
    __slots__ = ("cmd", "visits", "reward", "avail")

    def __init__(self, cmd: Command) -> None:
        self.cmd = cmd
        self.visits = 0
        self.reward = 0.0
        self.avail = 0


class _Node:
    """One of the searching seat's information sets: a bandit per seat, children by our command."""

    __slots__ = ("arms", "children")

    def __init__(self) -> None:
        self.arms: dict[int, dict[str, _Arm]] = {}
        self.children: dict[str, _Node] = {}

    def select(self, seat: int, cands: list[Command], c: float) -> _Arm:
        arms = self.arms.setdefault(seat, {})
        avail: list[_Arm] = []
        for cmd in cands:
            k = _key(cmd)
            arm = arms.get(k)
            if arm is None:
                arm = arms[k] = _Arm(cmd)
            arm.cmd = cmd  # the command as legal in this determinization
            arm.avail += 1
            avail.append(arm)
        for arm in avail:
            if arm.visits == 0:
                return arm
        return max(
            avail, key=lambda a: a.reward / a.visits + c * math.sqrt(math.log(a.avail) / a.visits)
        )


class IsmctsBot:
    name = "ismcts"
    needs_view = True

    def __init__(
        self,
        iterations: int | None = 80,
        millis: float | None = None,
        seed: str | None = None,
        rollout: str = "heuristic",
        horizon: int | None = 3,
        width: int = 3,
        exploration: float = 0.7,
        sampler: SamplerFactory = Sampler,
        clock: Callable[[], float] | None = None,
    ) -> None:
        if iterations is None and millis is None:
            raise ValueError("a budget is needed: iterations or millis")
        if millis is not None and clock is None:
            raise ValueError(
                "a millis budget needs a clock (bots read no clock: pass time.process_time)"
            )
        if rollout not in ("heuristic", "random"):
            raise ValueError("rollout is 'heuristic' or 'random'")
        self.iterations = iterations
        self.millis = millis
        self.seed = seed
        self.rollout = rollout
        self.horizon = horizon
        self.width = width
        self.c = exploration
        self.sampler = sampler
        self.clock = clock
        self._heuristic = HeuristicBot()
        self._random = RandomBot()
        #: iterations of the last decision (for benchmarks)
        self.last_iterations = 0

    # --- the Bot protocol -------------------------------------------------------------------------
    def act(self, decision: Command, view: dict[str, Any] | None, rng: Rng) -> Command:
        assert view is not None, "the ismcts bot needs its seat's view"
        seat = int(view["seat"])
        r = Rng.from_seed(f"{self.seed}:{view['version']}:{seat}") if self.seed is not None else rng
        self.last_iterations = 0
        cands = self._candidates(decision, view, r)
        if len(cands) == 1:
            return cands[0]
        try:
            sampler = self.sampler(view, r)
        except SamplerError:
            return self._heuristic.act(decision, view, r)
        root = _Node()
        clock = self.clock
        deadline = clock() + self.millis / 1000 if self.millis is not None and clock else None
        n = 0
        while True:
            if self.iterations is not None and n >= self.iterations:
                break
            if deadline is not None and clock is not None and n > 0 and clock() >= deadline:
                break
            self._iterate(root, sampler.draw(), seat, cands, r)
            n += 1
        self.last_iterations = n
        arms = root.arms.get(seat, {})
        best = max(arms.values(), key=lambda a: (a.visits, a.reward))
        return best.cmd

    # --- candidates --------------------------------------------------------------------------------
    def _candidates(self, decision: Command, view: dict[str, Any], r: Rng) -> list[Command]:
        out: dict[str, Command] = {}

        def add(cmd: Command) -> None:
            out.setdefault(_key(cmd), cmd)

        add(self._heuristic.act(decision, view, r))
        if decision["kind"] == "assign":
            for ph in PHASES:
                add(self._heuristic._assign(decision, view, r, ph))
        for _ in range(self.width):
            add(self._random.act(decision, None, r))
        return list(out.values())

    def _policy(self, state: GameState, seat: int, decision: Command, r: Rng) -> Command:
        if self.rollout == "random":
            return self._random.act(decision, None, r)
        return self._heuristic.act(decision, engine.observe(state, seat), r)

    # --- one iteration ------------------------------------------------------------------------------
    def _iterate(
        self, root: _Node, s: GameState, me: int, root_cands: list[Command], r: Rng
    ) -> None:
        path: list[tuple[_Node, int, _Arm]] = []
        node: _Node | None = root
        first = True
        stop = s.round + self.horizon if self.horizon is not None else None
        while not s.over and (stop is None or s.round <= stop):
            pend = engine.pending(s)
            if not pend:  # pragma: no cover - the engine always says who acts
                break
            if node is not None and me in pend:
                # a node of ours: every seat owing a decision picks with its own bandit
                chosen: dict[int, _Arm] = {}
                for seat in sorted(pend):
                    d = engine.legal(s, seat)
                    if d is None:
                        continue
                    if seat == me and first:
                        cands = root_cands
                    else:
                        cands = self._candidates(d, engine.observe(s, seat), r)
                    chosen[seat] = node.select(seat, cands, self.c)
                for seat, arm in chosen.items():
                    path.append((node, seat, arm))
                    self._play(s, seat, arm.cmd, r)
                first = False
                k = _key(chosen[me].cmd)
                child = node.children.get(k)
                if child is None:  # expand one node per iteration, then roll out
                    node.children[k] = _Node()
                    node = None
                else:
                    node = child
                continue
            seat = min(pend)
            d = engine.legal(s, seat)
            if d is None:  # pragma: no cover
                break
            self._play(s, seat, self._policy(s, seat, d, r), r)
        rewards = self._rewards(s)
        for _node, seat, arm in path:
            arm.visits += 1
            arm.reward += rewards[seat]

    def _play(self, s: GameState, seat: int, cmd: Command, r: Rng) -> None:
        if engine.pending(s).get(seat) != cmd.get("kind"):
            d = engine.legal(s, seat)
            if d is None:
                return
            cmd = self._random.act(d, None, r)
        try:
            engine.play(s, seat, cmd)
        except IllegalCommand:
            # a command chosen in another determinization may not fit this one: play a legal one
            d = engine.legal(s, seat)
            if d is not None:
                engine.play(s, seat, self._random.act(d, None, r))

    @staticmethod
    def _rewards(s: GameState) -> list[float]:
        if s.over:
            share = 1.0 / len(s.winners)
            return [share if p.seat in s.winners else 0.0 for p in s.players]
        totals = [score(p)["total"] for p in s.players]
        out = []
        for i, t in enumerate(totals):
            best_other = max(x for j, x in enumerate(totals) if j != i)
            out.append(0.5 + 0.5 * math.tanh((t - best_other) / 6))
        return out


register_bot("ismcts", IsmctsBot)
