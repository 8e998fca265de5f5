"""Scale across test hosts: commands/s with one and two API hosts, on a single Redis and on the
3+3 Redis Cluster, in one run, every server on a host (network namespace) of its own.

``sudo python bench/scale_hosts.py [--games 8] [--setups single,cluster]`` starts the hosts of
``tests/netns`` (``deploy/redis-cluster.conf`` with the store URL's ``wait=1``; the single Redis
with the same persistence, AOF fsynced on every write, and no replica), and for each setup plays
``--games`` 2-player games at once (every fourth with a bot on seat 1, played by the two worker
hosts) from the two client hosts, first through ``api1`` alone, then through both API hosts. It
prints per run: commands stored per second (every command of every game, clients' and bots'),
the clients' command latency p50/p99 and games per hour. Figures only; docs/scaling.md reads
them. Every host shares this machine's CPUs: the figures show what the network hops, the
replica wait and the cluster client cost, not what more machines would add.
"""

from __future__ import annotations

import argparse
import json
import signal
import statistics
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

import events  # noqa: E402
from events.games import Games  # noqa: E402
from tests.netns import checker  # noqa: E402
from tests.netns.deployment import HOSTS, Deployment  # noqa: E402
from tests.netns.harness import Net  # noqa: E402


def stored_commands(dep: Deployment, gids: list[str]) -> int:
    client = events.connect(dep.store_url)
    store = Games(events.RedisStore(client, prefix=dep.prefix)).store
    try:
        return sum(len({e.command_id for e in store.read(g)}) for g in gids)
    finally:
        client.close()


def one_run(net: Net, dep: Deployment, apis: list[str], games: int, seed: int) -> dict[str, Any]:
    created = net.call("ctl", lambda: checker.create_games(dep, games))
    players = [
        checker.Player(dep, ("ca", "cb")[i % 2], gid, seats, apis, seed * 1000 + i)
        for i, (gid, seats) in enumerate(created)
    ]
    started = time.monotonic()
    for p in players:
        p.thread.start()
    for p in players:
        p.thread.join(600)
    elapsed = time.monotonic() - started
    for p in players:
        p.stop.set()
    commands = net.call("ctl", lambda: stored_commands(dep, [g for g, _ in created]))
    lat = sorted(x for p in players for x in p.latencies)
    return {
        "api_hosts": len(apis),
        "games": games,
        "finished": sum(p.finished for p in players),
        "commands": commands,
        "seconds": round(elapsed, 1),
        "commands_per_s": round(commands / elapsed, 1),
        "games_per_hour": round(3600 * games / elapsed),
        "latency_p50_ms": round(1000 * statistics.median(lat), 1) if lat else None,
        "latency_p99_ms": round(1000 * lat[int(0.99 * (len(lat) - 1))], 1) if lat else None,
        "errors": sum(len(p.errors) + len(p.bad) for p in players),
    }


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--games", type=int, default=8, help="games played at once (1-40)")
    ap.add_argument("--setups", default="single,cluster")
    args = ap.parse_args()
    if not 1 <= args.games <= 40:
        ap.error("--games must be 1-40")
    setups = [s for s in args.setups.split(",") if s]
    if not setups or set(setups) - {"single", "cluster"}:
        ap.error("--setups is a comma-separated list of single and cluster")
    signal.signal(signal.SIGTERM, lambda *_: sys.exit(1))  # run the clean-up on a kill
    net = Net(HOSTS).start()
    out: dict[str, list[dict[str, Any]]] = {}
    try:
        for setup in setups:
            with tempfile.TemporaryDirectory(prefix=f"rfg-scale-{setup}-") as data:
                dep = Deployment(net, Path(data), single=setup == "single").start()
                try:
                    out[setup] = []
                    for n, apis in enumerate((["api1"], ["api1", "api2"])):
                        run = one_run(net, dep, apis, args.games, n)
                        run["setup"] = setup
                        print(json.dumps(run), flush=True)
                        out[setup].append(run)
                finally:
                    dep.stop()
    finally:
        net.stop()
    if "single" in out and "cluster" in out:
        for i in range(2):
            s, c = out["single"][i], out["cluster"][i]
            ratio = round(c["commands_per_s"] / s["commands_per_s"], 2)
            print(json.dumps({"api_hosts": i + 1, "cluster_over_single": ratio}))
    return 0


if __name__ == "__main__":
    sys.exit(main())
