"""Partition schedules against the service on namespaced test hosts, with the checker's figures.

``sudo python bench/partitions.py [--games 4] [--schedules a,b,...] [--seed 0]`` starts the test
hosts (``tests/netns``: a 3+3 Redis Cluster configured from ``deploy/redis-cluster.conf``, the RQ
Redis, two API hosts, two worker hosts, two client hosts, each in a network namespace of its
own), plays fresh games through each schedule and prints one JSON line per schedule (acknowledged
commands, lost, duplicated, two histories, unverifiable logs, answers by status) and a total.
Needs root and iproute2; cleans up its namespaces and processes when it ends or is killed.
"""

from __future__ import annotations

import argparse
import json
import signal
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from tests.netns import schedules  # noqa: E402
from tests.netns.deployment import HOSTS, Deployment  # noqa: E402
from tests.netns.harness import Net  # noqa: E402


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--games", type=int, default=4, help="games per schedule (1-40)")
    ap.add_argument("--schedules", default=",".join(schedules.SCHEDULES))
    ap.add_argument("--seed", type=int, default=0)
    args = ap.parse_args()
    if not 1 <= args.games <= 40:
        ap.error("--games must be 1-40")
    names = [n for n in args.schedules.split(",") if n]
    unknown = set(names) - set(schedules.SCHEDULES)
    if unknown:
        ap.error(f"unknown schedule(s) {sorted(unknown)}; known: {sorted(schedules.SCHEDULES)}")
    signal.signal(signal.SIGTERM, lambda *_: sys.exit(1))  # run the clean-up on a kill
    net = Net(HOSTS).start()
    total = {
        "schedules": 0,
        "acknowledged": 0,
        "lost": 0,
        "duplicated": 0,
        "two_histories": 0,
        "unverifiable": 0,
        "bad_answers": 0,
        "unfinished_games": 0,
    }
    started = time.monotonic()
    try:
        with tempfile.TemporaryDirectory(prefix="rfg-partitions-") as data:
            dep = Deployment(net, Path(data)).start()
            try:
                for name in names:
                    out = schedules.run(net, dep, name, games=args.games, seed=args.seed)
                    rep = out["report"]
                    print(json.dumps(rep), flush=True)
                    total["schedules"] += 1
                    for k in (
                        "acknowledged",
                        "lost",
                        "duplicated",
                        "two_histories",
                        "unverifiable",
                        "bad_answers",
                    ):
                        total[k] += rep[k]
                    total["unfinished_games"] += rep["games"] - rep["finished"]
            finally:
                dep.stop()
    finally:
        net.stop()
    total["seconds"] = round(time.monotonic() - started, 1)
    print(json.dumps({"total": total}), flush=True)
    bad = sum(
        total[k]
        for k in (
            "lost",
            "duplicated",
            "two_histories",
            "unverifiable",
            "bad_answers",
            "unfinished_games",
        )
    )
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
