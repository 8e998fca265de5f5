"""Engine benchmark: random-bot games per second, replay speed, state and log sizes.

Prints figures; asserts nothing. Usage: python bench/engine.py [--games N] [--seconds S]
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
import statistics
import time

import engine
from bots import arena
from engine.state import canonical_json


def games_per_second(
    players: int, games: int, rules: int | None = None
) -> tuple[float, float, list[arena.GameRecord]]:
    """Games are played as `rfg simulate` plays them: nothing is kept between games while timing
    (keeping every finished game alive would make the garbage collector the bottleneck)."""
    events = rounds = 0
    gc.collect()
    gc.freeze()  # what earlier measurements left in memory must not slow this one's collections
    t0 = time.process_time()
    for i in range(games):
        rec = arena.play_game(f"bench:{players}:{i}", players, ["random"], rules=rules)
        events += len(rec.events)
        rounds += rec.state.round
    dt = time.process_time() - t0
    kept = [
        arena.play_game(f"bench:{players}:{i}", players, ["random"], rules=rules)
        for i in range(min(games, 20))
    ]
    return games / dt, events / dt, (events / games, rounds / games, kept)  # type: ignore[return-value]


def replay_rate(recs: list[arena.GameRecord]) -> tuple[float, float]:
    total = sum(len(r.events) for r in recs)
    t0 = time.process_time()
    for r in recs:
        engine.replay(r.events)
    dt = time.process_time() - t0
    return total / dt, dt / total * 1e6


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__)
    ap.add_argument("--games", type=int, default=200, help="games per player count (default 200)")
    ap.add_argument(
        "--rules",
        type=int,
        default=None,
        help="rules version to play (default: the current one; 2 is the last with the "
        "SplitMix64 generator, for comparing the keyed generator's cost)",
    )
    args = ap.parse_args()
    print(
        f"engine benchmark: {args.games} random-bot games per player count, rules "
        f"{args.rules or 'current'}, one core (CPU time of this process)\n"
    )
    print(f"{'players':>7} {'games/s':>9} {'events/s':>10} {'events/game':>12} {'rounds/game':>12}")
    all_recs = {}
    for n in (2, 3, 4, 5):
        gps, eps, (evg, rg, recs) = games_per_second(n, args.games, args.rules)  # type: ignore[misc]
        all_recs[n] = recs
        print(f"{n:>7} {gps:>9.1f} {eps:>10.0f} {evg:>12.0f} {rg:>12.1f}")
    rate, per_event = replay_rate(all_recs[4])
    print(
        f"\nreplay (fold from scratch, 4 players): {rate:,.0f} events/s, {per_event:.2f} us per evolve"
    )
    state = all_recs[4][0].state
    t0 = time.process_time()
    for _ in range(200):
        state.copy()
    copy_us = (time.process_time() - t0) / 200 * 1e6
    t0 = time.process_time()
    for _ in range(200):
        engine.state_hash(state)
    hash_us = (time.process_time() - t0) / 200 * 1e6
    sizes = [len(canonical_json(r.state.to_dict())) for r in all_recs[4]]
    logs = [sum(len(canonical_json(e)) + 1 for e in r.events) for r in all_recs[4]]
    print(f"state copy (pure decide): {copy_us:.1f} us; state_hash: {hash_us:.1f} us")
    print(f"serialised final state (4 players): mean {statistics.mean(sizes):,.0f} bytes")
    print(
        f"full event log as JSON Lines (4 players): mean {statistics.mean(logs):,.0f} bytes, "
        f"{statistics.mean(len(r.events) for r in all_recs[4]):.0f} events"
    )
    print(json.dumps({"note": "figures vary with machine load; run twice"}))


if __name__ == "__main__":
    main()
