"""Engine benchmark: random-bot games per second, replay speed, state and log sizes.

Prints figures; asserts nothing. Usage:

    python bench/engine.py [--games N] [--players 2,3,4,5] [--rules V] [--profile]

Games per second are per CPU-second of this process (``time.process_time``), so other processes on
a shared machine do not count against the engine; the wall-clock figure is printed next to it.
The first line says which build was measured: pure Python, or the compiled extension modules
``make fast`` builds in place. ``--profile`` plays the 4-player games again under pyinstrument and
prints where their time goes, per part of the engine (each sample counted once, in the innermost
part it falls in); the compiled modules are opaque to it, so profile the pure-Python build.
``--instructions`` also counts the instructions a 4-player game takes, with valgrind's callgrind
(N games minus a run of none, which is the interpreter's start-up and imports, divided by N):
unlike seconds, the count does not depend on what else the machine is doing.
"""

from __future__ import annotations

import os
import sys

# this file is named like the package it measures: keep bench/ off the import path
_HERE = os.path.dirname(os.path.abspath(__file__))
sys.path[:] = [p for p in sys.path if os.path.abspath(p or ".") != _HERE]

import argparse
import gc
import json
import re
import shutil
import statistics
import subprocess
import time
from collections.abc import Iterator
from dataclasses import dataclass
from typing import Any

import engine
from bots import arena
from engine.canonical import canonical_json
from engine.compiled import describe


@dataclass
class Run:
    players: int
    games: int
    cpu: float
    wall: float
    events: int
    rounds: int
    kept: list[arena.GameRecord]

    @property
    def games_per_cpu_second(self) -> float:
        return self.games / self.cpu

    @property
    def games_per_wall_second(self) -> float:
        return self.games / self.wall


def play(players: int, games: int, rules: int | None = None) -> Run:
    """Games are played as `rfg simulate` plays them: nothing is kept between games while timing
    (keeping every finished game alive would make the garbage collector the bottleneck)."""
    events = rounds = 0
    gc.collect()
    gc.freeze()  # what earlier measurements left in memory must not slow this one's collections
    w0, t0 = time.perf_counter(), time.process_time()
    for i in range(games):
        rec = arena.play_game(f"bench:{players}:{i}", players, ["random"], rules=rules)
        events += len(rec.events)
        rounds += rec.state.round
    cpu, wall = time.process_time() - t0, time.perf_counter() - w0
    kept = [
        arena.play_game(f"bench:{players}:{i}", players, ["random"], rules=rules)
        for i in range(min(games, 20))
    ]
    return Run(players, games, cpu, wall, events, rounds, kept)


def replay_rate(recs: list[arena.GameRecord]) -> tuple[float, float]:
    total = sum(len(r.events) for r in recs)
    t0 = time.process_time()
    for r in recs:
        engine.replay(r.events)
    dt = time.process_time() - t0
    return total / dt, dt / total * 1e6


#: (label, function, path fragment): the parts of a game's time; a sample counts in the innermost
#: part it falls in (so "rules" is the rules code minus the folds and draws it calls)
PARTS = [
    ("arena loop (bots/arena.py)", "play_game", "bots/arena.py"),
    ("setup (engine.new_game)", "new_game", "engine/__init__.py"),
    ("pending", "pending", "engine/flow.py"),
    ("legal moves (engine.legal)", "legal", "engine/flow.py"),
    ("random bot (RandomBot.act)", "act", "bots/random_bot.py"),
    ("command record (CommandSubmitted)", "command_submitted", "engine/record.py"),
    ("rules: check + apply command", "apply_command", "engine/flow.py"),
    ("event fold (evolve, Ctx.emit)", "evolve", "engine/fold.py"),
    ("event fold (evolve, Ctx.emit)", "emit", "engine/fold.py"),
    ("state copies", "copy", "engine/state.py"),
    ("observe", "observe", "engine/observe.py"),
    ("generator (engine.rng)", "", "engine/rng.py"),
]


def _parts(frame: Any, label: str, in_bot: bool) -> Iterator[tuple[str, float]]:
    path = frame.file_path or ""
    for name, func, fragment in PARTS:
        if fragment in path and (not func or frame.function == func):
            label = name
            break
    in_bot = in_bot or label.startswith("random bot")
    if label.startswith("generator"):
        label = "generator: bots' draws" if in_bot else "generator: the game's draws"
    children = frame.children
    yield label, frame.time - sum(c.time for c in children)
    for child in children:
        yield from _parts(child, label, in_bot)


def profile(players: int, games: int, rules: int | None, cpu_per_game: float) -> None:
    """Where the time goes, as shares of the samples; the milliseconds are those shares of the
    CPU time a game took without the profiler (``cpu_per_game``), the profiler's own cost left
    out."""
    from pyinstrument import Profiler

    prof = Profiler(interval=0.0005)
    prof.start()
    for i in range(games):
        arena.play_game(f"bench:{players}:{i}", players, ["random"], rules=rules)
    prof.stop()
    session = prof.last_session
    root = session.root_frame() if session else None
    if root is None:
        return
    totals: dict[str, float] = {}
    for label, seconds in _parts(root, "other", False):
        totals[label] = totals.get(label, 0.0) + seconds
    whole = sum(totals.values())
    print(
        f"\nwhere a {players}-player game's time goes ({games} games under pyinstrument; "
        f"shares of its samples, in ms of the {cpu_per_game * 1e3:.2f} ms of CPU a game takes):"
    )
    for label, seconds in sorted(totals.items(), key=lambda kv: -kv[1]):
        share = seconds / whole
        print(f"  {label:<36} {share * cpu_per_game * 1e3:6.2f} ms {share:6.1%}")


#: one process playing argv[2] random-bot games of argv[1] players, as ``play`` plays them
_PLAY = (
    "import sys; from bots import arena; p, n = int(sys.argv[1]), int(sys.argv[2]); "
    "r = int(sys.argv[3]) or None; "
    "[arena.play_game(f'bench:{p}:{i}', p, ['random'], rules=r) for i in range(n)]"
)


def _callgrind(players: int, games: int, rules: int | None) -> int:
    run = subprocess.run(
        ["valgrind", "--tool=callgrind", "--callgrind-out-file=/dev/null"]
        + [sys.executable, "-c", _PLAY, str(players), str(games), str(rules or 0)],
        cwd=os.path.dirname(_HERE),
        capture_output=True,
        text=True,
        check=True,
    )
    found = re.search(r"Collected : (\d+)", run.stderr)
    if found is None:
        raise SystemExit(f"callgrind printed no instruction count:\n{run.stderr[-2000:]}")
    return int(found.group(1))


def instructions_per_game(players: int, games: int, rules: int | None) -> float:
    """Instructions per game, callgrind's count of ``games`` games minus that of none."""
    return (_callgrind(players, games, rules) - _callgrind(players, 0, rules)) / games


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__)
    ap.add_argument("--games", type=int, default=200, help="games per player count (default 200)")
    ap.add_argument(
        "--players", default="2,3,4,5", help="player counts to measure (default 2,3,4,5)"
    )
    ap.add_argument(
        "--rules",
        type=int,
        default=None,
        help="rules version to play (default: the current one; 2 is the last with the "
        "SplitMix64 generator, for comparing the keyed generator's cost)",
    )
    ap.add_argument(
        "--profile", action="store_true", help="also print where a 4-player game's time goes"
    )
    ap.add_argument(
        "--instructions",
        type=int,
        default=0,
        metavar="N",
        help="also count the instructions of a 4-player game under callgrind, over N games "
        "(4 is enough: the count repeats; about a minute under valgrind)",
    )
    args = ap.parse_args()
    if args.instructions and shutil.which("valgrind") is None:
        ap.error("--instructions needs valgrind (Debian: apt-get install valgrind)")
    counts = [int(x) for x in args.players.split(",")]
    print(
        f"engine benchmark: {describe()}; {args.games} random-bot games per player count, rules "
        f"{args.rules or 'current'}; games/CPU-s counts this process's CPU time only\n"
    )
    print(
        f"{'players':>7} {'games/CPU-s':>12} {'games/wall-s':>13} {'events/CPU-s':>13} "
        f"{'events/game':>12} {'rounds/game':>12}"
    )
    runs = {}
    for n in counts:
        run = runs[n] = play(n, args.games, args.rules)
        print(
            f"{n:>7} {run.games_per_cpu_second:>12.1f} {run.games_per_wall_second:>13.1f} "
            f"{run.events / run.cpu:>13.0f} {run.events / run.games:>12.0f} "
            f"{run.rounds / run.games:>12.1f}"
        )
    recs = runs[4 if 4 in runs else counts[0]].kept
    n = recs[0].players
    rate, per_event = replay_rate(recs)
    print(
        f"\nreplay (fold from scratch, {n} players): {rate:,.0f} events/s, "
        f"{per_event:.2f} us per evolve"
    )
    t0 = time.process_time()
    for r in recs:
        r.log_sha256()
    sha_ms = (time.process_time() - t0) / len(recs) * 1e3
    state = recs[0].state
    t0 = time.process_time()
    for _ in range(200):
        state.copy()
    copy_us = (time.process_time() - t0) / 200 * 1e6
    t0 = time.process_time()
    for _ in range(200):
        engine.state_hash(state)
    hash_us = (time.process_time() - t0) / 200 * 1e6
    sizes = [len(canonical_json(r.state.to_dict())) for r in recs]
    logs = [sum(len(canonical_json(e)) + 1 for e in r.events) for r in recs]
    print(f"log_sha256 of a game's log (rfg simulate --json): {sha_ms:.2f} ms per game")
    print(f"state copy (pure decide): {copy_us:.1f} us; state_hash: {hash_us:.1f} us")
    print(f"serialised final state ({n} players): mean {statistics.mean(sizes):,.0f} bytes")
    print(
        f"full event log as JSON Lines ({n} players): mean {statistics.mean(logs):,.0f} bytes, "
        f"{statistics.mean(len(r.events) for r in recs):.0f} events"
    )
    if args.instructions:
        per_game = instructions_per_game(4, args.instructions, args.rules)
        print(
            f"instructions per 4-player game (callgrind, {args.instructions} games minus none): "
            f"{per_game / 1e6:.1f} M"
        )
    if args.profile:
        four = runs.get(4) or play(4, args.games, args.rules)
        profile(4, min(args.games, 100), args.rules, four.cpu / four.games)
    print(json.dumps({"note": "figures vary with machine load; run twice"}))


if __name__ == "__main__":
    main()
