"""Canonical JSON: what ``engine.canonical``'s orjson path saves over the standard library.

    python bench/canonical_json.py [--players 4] [--every 5] [--rounds 5]

Plays one heuristic/random game and encodes its events, the views of its states (every
``--every``-th event: ``engine.observe_all``) and the stored projections (``render_views``, the
seats' sides spliced in as fragments) with: the standard library (the format's definition),
``canonical_bytes`` (orjson where it writes the same bytes), and orjson alone (the floor, no check).
Prints microseconds of this process's CPU per item, the fastest of ``--rounds``. Asserts nothing.
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import time
from collections.abc import Callable, Sequence
from typing import Any

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))

import orjson  # noqa: E402

import engine  # noqa: E402
from bots import arena  # noqa: E402
from engine.canonical import canonical_bytes  # noqa: E402
from events.games.projections import render_views  # noqa: E402

_STDLIB = json.JSONEncoder(
    sort_keys=True, separators=(",", ":"), ensure_ascii=False, allow_nan=False
)


def per_item(encode: Callable[[Any], Any], items: Sequence[Any], rounds: int) -> float:
    best = float("inf")
    for _ in range(rounds):
        start = time.process_time()
        for item in items:
            encode(item)
        best = min(best, time.process_time() - start)
    return best / len(items) * 1e6


def main(argv: list[str] | None = None) -> None:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--players", type=int, default=4)
    p.add_argument("--every", type=int, default=5)
    p.add_argument("--rounds", type=int, default=5)
    args = p.parse_args(argv)
    rec = arena.play_game(f"bench-canonical-{args.players}", args.players, ["heuristic", "random"])
    views: list[Any] = []
    states = []
    state = None
    for i, event in enumerate(rec.events):
        state = engine.evolve(state, event)
        if i % args.every == 0:
            views.extend(engine.observe_all(state).values())
            states.append(state)
    size = sum(len(canonical_bytes(v)) for v in views) // len(views)
    print(f"{len(rec.events)} events, {len(views)} views (average {size} bytes)")
    print(f"{'':10} {'stdlib':>9} {'canonical':>10} {'orjson':>9}   (us of CPU per item)")
    for name, items in (("events", rec.events), ("views", views)):
        figures = [
            per_item(lambda v: _STDLIB.encode(v).encode("utf-8"), items, args.rounds),
            per_item(canonical_bytes, items, args.rounds),
            per_item(lambda v: orjson.dumps(v, option=orjson.OPT_SORT_KEYS), items, args.rounds),
        ]
        print(f"{name:10} {figures[0]:9.2f} {figures[1]:10.2f} {figures[2]:9.2f}")
    start = time.process_time()
    for state in states:
        render_views("g-bench", state, "2026-01-01T00:00:00Z", None)
    each = (time.process_time() - start) / len(states) * 1e6
    print(f"render_views (public, {args.players} seats, summary; no memo): {each:.0f} us per state")


if __name__ == "__main__":
    main()
