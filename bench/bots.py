"""Bot strength benchmark: ismcts against the heuristic bot, win rates with 95% intervals.

Two matches, each played in-process with the arena (the seed names every game):
  * 2 players, ismcts against heuristic, seats swapped every game;
  * 4 players, ismcts in one seat (rotating) against three heuristic bots (25% is parity).
A tie counts as a share of a win. Prints the win rate with its Wilson 95% interval, the ismcts
bot's CPU seconds per decision and its iterations per decision, and games/hour on one core.
Asserts nothing. Usage: python bench/bots.py [--games N] [--iterations I | --millis MS]
"""

from __future__ import annotations

import os
import sys

_HERE = os.path.dirname(os.path.abspath(__file__))
sys.path[:] = [p for p in sys.path if os.path.abspath(p or ".") != _HERE]

import argparse
import time
from typing import Any

from bots import arena
from bots.heuristic import HeuristicBot
from bots.ismcts import IsmctsBot
from engine.rng import Rng
from ladder.stats import wilson


class Timed:
    """Wraps the ismcts bot to count its decisions, CPU time and iterations."""

    def __init__(self, bot: IsmctsBot) -> None:
        self.bot = bot
        self.name = bot.name
        self.needs_view = True
        self.decisions = 0
        self.cpu = 0.0
        self.iterations = 0
        self.slowest = 0.0

    def act(
        self, decision: dict[str, Any], view: dict[str, Any] | None, rng: Rng
    ) -> dict[str, Any]:
        t0 = time.process_time()
        out = self.bot.act(decision, view, rng)
        dt = time.process_time() - t0
        self.decisions += 1
        self.cpu += dt
        self.slowest = max(self.slowest, dt)
        self.iterations += self.bot.last_iterations
        return out


def match(players: int, games: int, make: Any, label: str) -> None:
    timed = Timed(make())
    wins = 0.0
    t0 = time.process_time()
    for g in range(games):
        me = g % players
        seats: list[Any] = [HeuristicBot() for _ in range(players)]
        seats[me] = timed
        rec = arena.play_game(f"bench-bots:{players}:{g}", players, seats)
        if me in rec.state.winners:
            wins += 1 / len(rec.state.winners)
    cpu = time.process_time() - t0
    lo, hi = wilson(wins, games)
    per = timed.cpu / max(timed.decisions, 1)
    iters = timed.iterations / max(timed.decisions, 1)
    print(
        f"{label}: {wins:g}/{games} = {wins / games:.1%} won, 95% CI [{lo:.1%}, {hi:.1%}]; "
        f"{per:.3f} s/decision (slowest {timed.slowest:.2f} s), {iters:.0f} iterations/decision, "
        f"{games / cpu * 3600:.0f} games/hour on one core",
        flush=True,
    )


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__)
    ap.add_argument("--games", type=int, default=40, help="games per match (default 40)")
    ap.add_argument("--iterations", type=int, default=None, help="ismcts iterations per decision")
    ap.add_argument("--millis", type=float, default=None, help="ismcts CPU ms per decision")
    ap.add_argument("--match", choices=("2p", "4p", "both"), default="both")
    args = ap.parse_args()
    iterations = args.iterations if args.iterations or args.millis else 80

    def make() -> IsmctsBot:
        return IsmctsBot(iterations=iterations, millis=args.millis, clock=time.process_time)

    budget = f"{iterations} iterations" if iterations else f"{args.millis} ms"
    print(
        f"bots benchmark: ismcts ({budget} a decision, heuristic roll-outs) vs heuristic, "
        f"{args.games} games per match, CPU time of this process\n",
        flush=True,
    )
    if args.match in ("2p", "both"):
        match(2, args.games, make, "2 players, seats swapped")
    if args.match in ("4p", "both"):
        match(4, args.games, make, "4 players, ismcts 1 of 4")


if __name__ == "__main__":
    main()
