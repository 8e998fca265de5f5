"""Replay-step benchmark: how long ``GET /games/{id}/view?at=N`` (and a seat's) takes to answer,
through the app in process on the embedded store.

    python bench/replay_steps.py [--players 2 4] [--steps 100]

For each player count, a game of random bots is played to its end through the API, then about
``--steps`` steps spread over its log are asked in a shuffled order (what a viewer scrubbing back
and forth asks), first the public view and then seat 0's; it prints the mean and the slowest
answer. The first step of a game reads its log and folds it once (``events.games.steps``); the others
fold on from the nearest state kept. Prints figures (and stops at a refused step).
"""

from __future__ import annotations

import argparse
import random
import sys
import time
import uuid
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from tests.service.conftest import make_app, new_game, play_http  # noqa: E402


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--players", type=int, nargs="+", default=[2, 4])
    ap.add_argument("--steps", type=int, default=100)
    args = ap.parse_args()
    client = make_app(f"memory://{uuid.uuid4().hex}").test_client()
    for players in args.players:
        gid, tokens = new_game(client, players)
        play_http(client, gid, tokens)
        total = client.get(f"/games/{gid}").get_json()["version"]
        steps = list(range(1, total + 1, max(1, total // args.steps)))
        random.Random(1).shuffle(steps)
        for who, path in (("public", "view"), ("seat 0", "seats/0/view")):
            times = []
            for at in steps:
                t = time.perf_counter()
                r = client.get(f"/games/{gid}/{path}?at={at}")
                times.append(time.perf_counter() - t)
                assert r.status_code == 200, r.get_json()
            print(
                f"{players} players, {total} events, {who}: {len(steps)} steps, "
                f"mean {1000 * sum(times) / len(times):.1f} ms, slowest {1000 * max(times):.1f} ms"
            )


if __name__ == "__main__":
    main()
