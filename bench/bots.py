"""Bot strength benchmark: ismcts against the heuristic bot, win rates with 95% intervals.

Two matches, each played in-process with the arena (the seed names every game):
  * 2 players, ismcts against heuristic, seats swapped every game;
  * 4 players, ismcts in one seat (rotating) against three heuristic bots (25% is parity).
A tie counts as a share of a win. Prints the win rate with its Wilson 95% interval, the ismcts
bot's CPU milliseconds per decision (all its decisions, and the searched ones alone, with the
slowest), its roll-outs per searched decision, and games/hour on one core (CPU time of the games).
``--jobs N`` plays the games in N processes (the figures are the same: every game is named by its
seed and every time is CPU time); progress goes to stderr. Asserts nothing.

Usage: python bench/bots.py [--games N] [--match 2p|4p|both] [--iterations I | --millis MS]
       [--jobs N] [--set name=value ...]   (any IsmctsBot setting, e.g. --set margin=0.05)
"""

from __future__ import annotations

import os
import sys

_HERE = os.path.dirname(os.path.abspath(__file__))
sys.path[:] = [p for p in sys.path if os.path.abspath(p or ".") != _HERE]

import argparse
import json
import time
from concurrent.futures import ProcessPoolExecutor
from typing import Any

from bots import arena
from bots.heuristic import HeuristicBot
from bots.ismcts import IsmctsBot
from engine.rng import Rng
from ladder.stats import wilson


class Timed:
    """Wraps the ismcts bot to count its decisions, CPU time and roll-outs."""

    def __init__(self, bot: IsmctsBot) -> None:
        self.bot = bot
        self.name = bot.name
        self.needs_view = True
        self.decisions = 0
        self.searched = 0
        self.cpu = 0.0
        self.searched_cpu = 0.0
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
        if self.bot.last_iterations:
            self.searched += 1
            self.searched_cpu += dt
            self.iterations += self.bot.last_iterations
        return out


def _settings(args: argparse.Namespace) -> dict[str, Any]:
    kw: dict[str, Any] = {"iterations": args.iterations, "millis": args.millis}
    if args.millis is not None:
        kw["iterations"] = None
    for item in args.set:
        name, _, value = item.partition("=")
        kw[name] = json.loads(value) if value[:1] in '-0123456789[{tfn"' else value
    return kw


def play_one(players: int, g: int, settings: dict[str, Any]) -> dict[str, float]:
    """Game ``g`` of a match: the ismcts bot in seat ``g % players``, the rest heuristic."""
    timed = Timed(IsmctsBot(**settings, clock=time.process_time))
    me = g % players
    seats: list[Any] = [HeuristicBot() for _ in range(players)]
    seats[me] = timed
    t0 = time.process_time()
    rec = arena.play_game(f"bench-bots:{players}:{g}", players, seats)
    cpu = time.process_time() - t0
    win = 1 / len(rec.state.winners) if me in rec.state.winners else 0.0
    return {
        "win": win,
        "cpu": cpu,
        "decisions": timed.decisions,
        "searched": timed.searched,
        "bot_cpu": timed.cpu,
        "searched_cpu": timed.searched_cpu,
        "iterations": timed.iterations,
        "slowest": timed.slowest,
    }


def match(
    players: int, games: int, first: int, jobs: int, settings: dict[str, Any], label: str
) -> None:
    totals: dict[str, float] = {}
    wins = 0.0
    done = 0
    with ProcessPoolExecutor(max_workers=jobs) as pool:
        futures = [pool.submit(play_one, players, g, settings) for g in range(first, first + games)]
        for fut in futures:
            r = fut.result()
            done += 1
            wins += r["win"]
            for k, v in r.items():
                totals[k] = max(totals.get(k, 0.0), v) if k == "slowest" else totals.get(k, 0) + v
            if sys.stderr.isatty() or done % max(games // 10, 1) == 0:
                lo, hi = wilson(wins, done)
                print(
                    f"  {label}: {done}/{games} games, {wins / done:.1%} won [{lo:.1%}, {hi:.1%}]",
                    file=sys.stderr,
                    flush=True,
                )
    lo, hi = wilson(wins, games)
    per = totals["bot_cpu"] / max(totals["decisions"], 1) * 1000
    per_searched = totals["searched_cpu"] / max(totals["searched"], 1) * 1000
    iters = totals["iterations"] / max(totals["searched"], 1)
    print(
        f"{label}: {wins:g}/{games} = {wins / games:.1%} won, 95% CI [{lo:.1%}, {hi:.1%}]; "
        f"{per:.0f} ms/decision, {per_searched:.0f} ms/searched decision "
        f"({totals['searched'] / games:.1f} a game, slowest {totals['slowest'] * 1000:.0f} ms, "
        f"{iters:.0f} roll-outs each), {games / totals['cpu'] * 3600:.0f} games/hour on one core",
        flush=True,
    )


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawTextHelpFormatter)
    ap.add_argument("--games", type=int, default=40, help="games per match (default 40)")
    ap.add_argument("--first", type=int, default=0, help="index of the first game (default 0)")
    ap.add_argument("--iterations", type=int, default=None, help="ismcts roll-outs per decision")
    ap.add_argument("--millis", type=float, default=None, help="ismcts CPU ms per decision")
    ap.add_argument("--match", choices=("2p", "4p", "both"), default="both")
    ap.add_argument("--jobs", type=int, default=1, help="processes playing games (default 1)")
    ap.add_argument(
        "--set", action="append", default=[], metavar="NAME=VALUE", help="an IsmctsBot setting"
    )
    args = ap.parse_args()
    if args.iterations is None and args.millis is None:
        args.iterations = IsmctsBot().iterations
    settings = _settings(args)
    budget = f"{args.iterations} roll-outs" if args.millis is None else f"{args.millis} CPU ms"
    extra = "".join(f", {s}" for s in args.set)
    print(
        f"bots benchmark: ismcts ({budget} a searched decision{extra}) vs heuristic, "
        f"{args.games} games per match from game {args.first}, {args.jobs} process(es), CPU time\n",
        flush=True,
    )
    if args.match in ("2p", "both"):
        match(2, args.games, args.first, args.jobs, settings, "2 players, seats swapped")
    if args.match in ("4p", "both"):
        match(4, args.games, args.first, args.jobs, settings, "4 players, ismcts 1 of 4")


if __name__ == "__main__":
    main()
