"""``rfg simulate``: play K games in-process with bots and report each game.

Stdout is a pure function of the arguments (the same arguments print byte-identical output);
progress goes to stderr.
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import time
from collections import Counter, defaultdict
from typing import Any

from bots import arena
from bots.base import bot_names
from engine.canonical import canonical_json
from engine.phases.setup import RULES_VERSION

from . import components


def add_parser(sub: Any) -> None:
    p = sub.add_parser(
        "simulate",
        help="play games between built-in bots in-process",
        description="Play K games in-process with bots; --json prints one JSON object per game.",
    )
    p.add_argument("--players", type=int, default=4, help="seats per game, 2-5 (default 4)")
    p.add_argument("--games", type=int, default=1, help="number of games (default 1)")
    p.add_argument(
        "--seed", default="1", help="run seed; game i uses seed '<seed>:<i>' (default 1)"
    )
    p.add_argument(
        "--bots", default="random", help="comma-separated bot per seat, cycled (default random)"
    )
    p.add_argument("--json", action="store_true", help="print one JSON object per game on stdout")
    p.add_argument(
        "--export", metavar="DIR", help="write each game's full event log as JSON Lines into DIR"
    )
    p.add_argument(
        "--first-game", action="store_true", help="use the first-game setup (lower-cost sides up)"
    )
    p.add_argument(
        "--ambition",
        action="store_true",
        help="play the Ambition expansion (needs --components or $RFG_AMBITION_COMPONENTS)",
    )
    p.add_argument(
        "--objectives", action="store_true", help="with --ambition: play with the objective tiles"
    )
    components.add_argument(p, "--ambition games play with")
    p.add_argument(
        "--rules",
        type=int,
        default=None,
        metavar="N",
        help="the rules version to play under (default: the current one); old versions "
        "exist so that old logs replay",
    )
    p.add_argument(
        "--max-rounds",
        type=int,
        default=arena.DEFAULT_MAX_ROUNDS,
        help=f"safety cap: a game still running after this many rounds is reported unfinished (default {arena.DEFAULT_MAX_ROUNDS})",
    )
    p.add_argument(
        "--progress",
        action=argparse.BooleanOptionalAction,
        default=None,
        help="progress bar on stderr (default: when stderr is a terminal)",
    )
    p.set_defaults(func=run)


def _fail(msg: str) -> int:
    print(f"rfg simulate: {msg}", file=sys.stderr)
    return 2


def run(args: argparse.Namespace) -> int:
    bots = _bots(args)
    if isinstance(bots, str):
        return _fail(bots)
    if args.export:
        os.makedirs(args.export, exist_ok=True)
    progress = sys.stderr.isatty() if args.progress is None else args.progress
    options: dict[str, Any] | None = {"first_game": True} if args.first_game else None
    if args.ambition:
        wrong = components.install(args.components)
        if wrong:
            return _fail(wrong)
        options = {**(options or {}), "ambition": True, "objectives": args.objectives}
    started = time.perf_counter()
    tally = _Tally()
    out = sys.stdout
    for i in range(args.games):
        seed = arena.game_seed(args.seed, i)
        rec = arena.play_game(
            seed, args.players, bots, options, max_rounds=args.max_rounds, rules=args.rules
        )
        summary = rec.summary()
        if args.export:
            _export(os.path.join(args.export, f"game-{i:05d}.jsonl"), rec)
        tally.add(rec, summary)
        if args.json:
            out.write(json.dumps(summary, sort_keys=True) + "\n")
        else:
            status = f"winners {summary['winners']}" if rec.finished else "UNFINISHED (round cap)"
            out.write(
                f"game {i:>5} seed {seed}: {summary['rounds']} rounds, {summary['events']} events, "
                f"scores {summary['scores']}, {status}\n"
            )
        if progress:
            _bar(i + 1, args.games, started)
    if progress:
        sys.stderr.write("\n")
    if not args.json:
        tally.write(out, args.games)
    return 1 if tally.unfinished else 0


def _bots(args: argparse.Namespace) -> list[str] | str:
    """The bots to seat in turn, or what is wrong with the arguments."""
    if not 2 <= args.players <= 5:
        return f"--players must be 2 to 5, not {args.players}"
    if args.games < 1:
        return "--games must be at least 1"
    bots = [b.strip() for b in args.bots.split(",") if b.strip()]
    unknown = [b for b in bots if b not in bot_names()]
    if not bots or unknown:
        return f"unknown bot(s) {unknown}; built-in bots: {', '.join(bot_names())}"
    if args.rules is not None and not 1 <= args.rules <= RULES_VERSION:
        return f"--rules must be 1 to {RULES_VERSION}"
    if args.ambition and not args.components:
        return (
            "--ambition needs the Ambition component file: --components FILE or "
            "RFG_AMBITION_COMPONENTS=FILE (e.g. tests/data/ambition-synthetic.yaml, made up)"
        )
    if args.objectives and not args.ambition:
        return "--objectives is an Ambition option: add --ambition"
    return bots


def _export(path: str, rec: Any) -> None:
    """One game's event log, one canonical JSON event per line."""
    with open(path, "w", encoding="utf-8") as f:
        for e in rec.events:
            f.write(canonical_json(e) + "\n")


class _Tally:
    """Seats, wins and the scores of finished games, per bot."""

    def __init__(self) -> None:
        self.wins: Counter[str] = Counter()
        self.seats_played: Counter[str] = Counter()
        self.totals: dict[str, list[int]] = defaultdict(list)
        self.unfinished = 0

    def add(self, rec: Any, summary: dict[str, Any]) -> None:
        if not rec.finished:
            self.unfinished += 1
        for seat, name in enumerate(rec.bots):
            self.seats_played[name] += 1
            if rec.finished:
                self.totals[name].append(summary["scores"][seat])
                if seat in summary["winners"]:
                    self.wins[name] += 1

    def write(self, out: Any, games: int) -> None:
        out.write(f"\n{games} games, {self.unfinished} unfinished\n")
        for name in sorted(self.seats_played):
            sc = self.totals[name]
            mean = sum(sc) / len(sc) if sc else 0.0
            wins, seats = self.wins[name], self.seats_played[name]
            out.write(
                f"  {name:<12} seats {seats:>6}  wins {wins:>6} "
                f"({100.0 * wins / seats:.1f}% of seats)  mean score {mean:.1f}\n"
            )


def _bar(done: int, total: int, started: float) -> None:
    width = 30
    filled = width * done // total
    rate = done / max(time.perf_counter() - started, 1e-9)
    sys.stderr.write(
        f"\r[{'#' * filled}{'.' * (width - filled)}] {done}/{total} games  {rate:.1f} games/s"
    )
    sys.stderr.flush()
