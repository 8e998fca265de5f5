"""Scale benchmark: the whole service on a single Redis and on a 3-master Redis Cluster, side by
side, in one run on this machine.

    python bench/scale.py [--games 16] [--concurrency 8] [--api 2] [--workers 2]
                          [--setups single,cluster] [--think 0]

For each setup the bench starts its own servers (``redis-server`` without persistence: one for
``single``, which also holds the queue; for ``cluster`` three cluster masters from
``tests/rcluster.py`` plus a plain Redis for the queue, ``RFG_QUEUE_URL``), ``--api`` API
processes (gunicorn, one sync-thread worker each, dispatch on, rate limits off) and ``--workers``
``rfg worker`` processes. It plays ``--games`` 2-player games, ``--concurrency`` at a time: seat 0
is a scripted client over HTTP (random legal moves, each request to the next API process in
turn), seat 1 the heuristic bot played by the workers.

Prints, per setup: commands stored per second (client and bot commands), the scripted client's
command latency (HTTP round trip of ``POST .../commands``, p50/p99), games per hour, and CPU per
command of the Redis servers (store and queue apart, from ``INFO cpu``), the API processes and the
workers (from ``/proc``). Figures only, nothing asserted; the model built from them is in
docs/scaling.md.

Across hosts (root, iproute2)::

    sudo .venv/bin/python bench/scale.py --hosts netns [--games 16] [--concurrency 8]
                                         [--setups single,cluster] [--api-hosts 1,2]

runs the same on the test hosts of ``tests/netns`` (each Redis, API host, worker host and client
host in a network namespace of its own, talking over a bridge, as ``tests.netns.deployment``
deploys them: the cluster is 3 masters with a replica each, configured from
``deploy/redis-cluster.conf`` and answering an append once its replica has it; ``single`` is one
Redis on host ``n1`` with the same persistence, AOF fsynced on every write), two worker hosts and
the API hosts as ``rfg run`` serves. Each setup is played once with the clients using only
``api1`` and once using ``api1`` and ``api2`` (``--api-hosts``); the clients run on the client
hosts ``ca`` and ``cb``. Also prints the load average before and after each row (this machine's
other work shows there).
"""

from __future__ import annotations

import argparse
import json
import os
import random
import signal
import statistics
import subprocess
import sys
import tempfile
import threading
import time
import uuid
from collections.abc import Callable
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
sys.path.insert(1, str(ROOT / "clients" / "python" / "src"))  # rfg-client, from the checkout

from rfg_client import ApiError, Client  # noqa: E402

import events.store  # noqa: E402
from bots import get_bot  # noqa: E402
from engine.rng import Rng  # noqa: E402
from tests.rcluster import Node, RedisClusterProcs, free_ports, plain_redis  # noqa: E402

TICK = os.sysconf("SC_CLK_TCK")
ADMIN = "bench-admin"


def proc_cpu(pid: int) -> float:
    """CPU seconds of a process and its live children (gunicorn's worker, RQ's scheduler)."""
    total = 0.0
    try:
        fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
        total += (int(fields[11]) + int(fields[12])) / TICK
        children = Path(f"/proc/{pid}/task/{pid}/children").read_text().split()
    except (FileNotFoundError, ProcessLookupError):
        return total
    return total + sum(proc_cpu(int(c)) for c in children)


def redis_cpu(nodes: list[Node]) -> float:
    total = 0.0
    for n in nodes:
        info = n.client.info("cpu")
        total += float(info["used_cpu_sys"]) + float(info["used_cpu_user"])
    return total


def spawn(cmd: list[str], env: dict[str, str], log: Path) -> subprocess.Popen[bytes]:
    return subprocess.Popen(
        cmd,
        cwd=ROOT,
        env={**os.environ, **env},
        stdin=subprocess.DEVNULL,
        stdout=open(log, "wb"),
        stderr=subprocess.STDOUT,
    )  # noqa: SIM115


def wait_http(base: str, timeout: float = 30) -> None:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        try:
            if Client(base, timeout=2).ready():
                return
        except OSError:
            pass
        time.sleep(0.1)
    raise RuntimeError(f"the API at {base} did not come up")


def play_seat0(bases: list[str], gid: str, seed: int, think: float, lat: list[float]) -> None:
    """Seat 0 over HTTP until the game ends, one request per API process in turn."""
    apis = [Client(b, timeout=30) for b in bases]
    token = apis[0].claim(gid, 0)
    bot, rng, k, n = get_bot("random"), Rng(seed), 0, 0
    while True:
        k += 1
        api = apis[k % len(apis)]
        mine = api.view(gid, seat=0, token=token)
        if mine["view"].get("step") == "over":
            return
        decision = mine["view"].get("decision")
        if decision is None:
            time.sleep(0.005)
            continue
        if think:
            time.sleep(think)
        cmd = bot.act(decision, None, rng)
        t0 = time.perf_counter()
        try:
            api.submit(
                gid, 0, cmd, command_id=f"b{n}", expected_version=mine["version"], token=token
            )
        except ApiError as exc:
            if exc.status != 409:
                raise
            continue
        finally:
            n += 1
        lat.append(time.perf_counter() - t0)


def play_games(games: int, concurrency: int, play: Callable[[int], None]) -> list[str]:
    """``play(i)`` for each of ``games`` games, ``concurrency`` at a time, each in a thread of its
    own; the errors they raised (as text)."""
    sem = threading.Semaphore(concurrency)
    errors: list[str] = []

    def one(i: int) -> None:
        try:
            play(i)
        except Exception as exc:  # noqa: BLE001 - reported
            errors.append(f"{type(exc).__name__}: {exc}")
        finally:
            sem.release()

    threads = []
    for i in range(games):
        sem.acquire()
        t = threading.Thread(target=one, args=(i,), daemon=True)
        t.start()
        threads.append(t)
    for t in threads:
        t.join()
    return errors


def run_setup(kind: str, args: argparse.Namespace, tmp: Path) -> dict[str, Any]:
    cluster: RedisClusterProcs | None = None
    if kind == "cluster":
        cluster = RedisClusterProcs(tmp / "cluster", masters=3).start()
        queue = plain_redis(tmp)
        store_nodes, url = cluster.nodes, cluster.url
    else:
        queue = plain_redis(tmp)
        store_nodes, url = [], f"redis://127.0.0.1:{queue.port}/0"
    q_url = f"redis://127.0.0.1:{queue.port}/0"
    prefix = f"s{uuid.uuid4().hex[:8]}"
    env = {
        "RFG_STORE_URL": url,
        "REDIS_URL": url,
        "RFG_QUEUE_URL": q_url,
        "RFG_STORE_PREFIX": prefix,
        "RFG_DISPATCH": "1",
        "RFG_RATE_LIMITS": "0",
        "RFG_ADMIN_TOKEN": ADMIN,
    }
    procs: list[subprocess.Popen[bytes]] = []
    try:
        ports = free_ports(args.api)
        apis = [
            spawn(
                [
                    sys.executable,
                    "-m",
                    "gunicorn",
                    "--bind",
                    f"127.0.0.1:{p}",
                    "--workers",
                    "1",
                    "--worker-class",
                    "gthread",
                    "--threads",
                    "16",
                    "rfgcli.wsgi:create_app()",
                ],
                env,
                tmp / f"api-{kind}-{p}.log",
            )
            for p in ports
        ]
        workers = [
            spawn(
                [
                    sys.executable,
                    "-m",
                    "rfgcli.main",
                    "worker",
                    "--url",
                    url,
                    "--queue-url",
                    q_url,
                    "--prefix",
                    prefix,
                    "--log-level",
                    "WARNING",
                ],
                env,
                tmp / f"worker-{kind}-{i}.log",
            )
            for i in range(args.workers)
        ]
        procs = apis + workers
        bases = [f"http://127.0.0.1:{p}" for p in ports]
        for b in bases:
            wait_http(b)
        time.sleep(1.0)  # workers connected
        admin = Client(bases[0], admin_token=ADMIN, timeout=30)
        seats = [{"kind": "human"}, {"kind": "bot", "bot": "heuristic"}]
        lat: list[float] = []
        gids: list[str] = []

        def one(i: int) -> None:
            gid = admin.create_game(seats, seed=f"scale-{i}")["game_id"]
            gids.append(gid)
            play_seat0(bases, gid, i, args.think, lat)

        cpu0 = {
            "store": redis_cpu(store_nodes or [queue]),
            "queue": redis_cpu([queue]),
            "api": sum(proc_cpu(p.pid) for p in apis),
            "workers": sum(proc_cpu(p.pid) for p in workers),
        }
        started = time.monotonic()
        errors = play_games(args.games, args.concurrency, one)
        wall = time.monotonic() - started
        cpu1 = {
            "store": redis_cpu(store_nodes or [queue]),
            "queue": redis_cpu([queue]),
            "api": sum(proc_cpu(p.pid) for p in apis),
            "workers": sum(proc_cpu(p.pid) for p in workers),
        }
        client = events.store.connect(url)
        store = events.store.RedisStore(client, prefix=prefix)
        commands = events_n = 0
        for gid in gids:
            envs = store.read(gid)
            events_n += len(envs)
            commands += len({e.command_id for e in envs})
        lat.sort()
        cpu = {k: cpu1[k] - cpu0[k] for k in cpu0}
        if kind == "single":  # one server holds both: report it once, as the store
            cpu["queue"] = 0.0
        out = {
            "setup": kind,
            "games": len(gids),
            "errors": errors[:3],
            "wall_s": round(wall, 1),
            "commands": commands,
            "events": events_n,
            "commands_per_s": round(commands / wall, 1),
            "games_per_hour": round(len(gids) / wall * 3600),
            "client_latency_ms_p50": round(1000 * statistics.median(lat), 2) if lat else None,
            "client_latency_ms_p99": round(1000 * lat[int(0.99 * (len(lat) - 1))], 2)
            if lat
            else None,
            "redis_store_cpu_us_per_command": round(1e6 * cpu["store"] / max(commands, 1), 1),
            "redis_queue_cpu_us_per_command": round(1e6 * cpu["queue"] / max(commands, 1), 1),
            "api_cpu_us_per_command": round(1e6 * cpu["api"] / max(commands, 1), 1),
            "worker_cpu_us_per_command": round(1e6 * cpu["workers"] / max(commands, 1), 1),
        }
        client.close()
        return out
    finally:
        for p in procs:
            p.kill()
            p.wait(10)
        queue.stop()
        if cluster is not None:
            cluster.stop()


def run_netns(args: argparse.Namespace, tmp: Path) -> list[dict[str, Any]]:
    """Every setup x API-host count on the namespaced test hosts (see the module docstring)."""
    from tests.netns.deployment import APIS, HOSTS, NODES, WORKERS, Deployment
    from tests.netns.harness import Net

    net = Net(HOSTS).start()
    rows: list[dict[str, Any]] = []
    try:
        for kind in args.setups.split(","):
            d = tmp / kind
            d.mkdir()
            dep = Deployment(net, d, single=kind == "single")
            try:
                dep.start()
                store_hosts = ["n1"] if dep.single else NODES
                for n_api in [int(x) for x in args.api_hosts.split(",")]:
                    rows.append(
                        _play_netns(net, dep, kind, APIS[:n_api], store_hosts, WORKERS, args)
                    )
            finally:
                dep.stop()
    finally:
        net.stop()
    return rows


def _play_netns(
    net: Any,
    dep: Any,
    kind: str,
    apis: list[str],
    store_hosts: list[str],
    workers: list[str],
    args: argparse.Namespace,
) -> dict[str, Any]:
    """One row: ``args.games`` games through the API hosts ``apis``, clients on ``ca``/``cb``."""
    from tests.netns.deployment import ADMIN as NETNS_ADMIN

    bases = [dep.api_base(h) for h in apis]

    def redis_cpu_on(hosts: list[str]) -> float:
        def read() -> float:
            total = 0.0
            for h in hosts:
                info = dep.redis_on(h).info("cpu")
                total += float(info["used_cpu_sys"]) + float(info["used_cpu_user"])
            return total

        return float(net.call("ctl", read))

    def cpu() -> dict[str, float]:
        return {
            "store": redis_cpu_on(store_hosts),
            "queue": redis_cpu_on(["rq"]),
            "api": sum(proc_cpu(dep.procs[h].pid) for h in apis),
            "workers": sum(proc_cpu(dep.procs[h].pid) for h in workers),
        }

    admin = Client(bases[0], admin_token=NETNS_ADMIN, timeout=30)
    seats = [{"kind": "human"}, {"kind": "bot", "bot": "heuristic"}]
    lat: list[float] = []
    gids: list[str] = []
    tag = uuid.uuid4().hex[:6]

    def one(i: int) -> None:
        gid = net.call("ctl", lambda: admin.create_game(seats, seed=f"scale-{tag}-{i}")["game_id"])
        gids.append(gid)
        host = ("ca", "cb")[i % 2]
        net.call(host, lambda: play_seat0(bases, gid, i, args.think, lat), timeout=900)

    load0 = Path("/proc/loadavg").read_text().split()[:3]
    cpu0 = cpu()
    started = time.monotonic()
    errors = play_games(args.games, args.concurrency, one)
    wall = time.monotonic() - started
    cpu1 = cpu()
    load1 = Path("/proc/loadavg").read_text().split()[:3]

    def count() -> tuple[int, int]:
        client = events.store.connect(dep.store_url)
        store = events.store.RedisStore(client, prefix=dep.prefix)
        commands = events_n = 0
        for gid in gids:
            envs = store.read(gid)
            events_n += len(envs)
            commands += len({e.command_id for e in envs})
        client.close()
        return commands, events_n

    commands, events_n = net.call("ctl", count)
    lat.sort()
    used = {k: cpu1[k] - cpu0[k] for k in cpu0}
    return {
        "setup": f"{kind} {len(apis)}api",
        "games": len(gids),
        "errors": errors[:3],
        "wall_s": round(wall, 1),
        "commands": commands,
        "events": events_n,
        "commands_per_s": round(commands / wall, 1),
        "games_per_hour": round(len(gids) / wall * 3600),
        "client_latency_ms_p50": round(1000 * statistics.median(lat), 2) if lat else None,
        "client_latency_ms_p99": round(1000 * lat[int(0.99 * (len(lat) - 1))], 2) if lat else None,
        "redis_store_cpu_us_per_command": round(1e6 * used["store"] / max(commands, 1), 1),
        "redis_queue_cpu_us_per_command": round(1e6 * used["queue"] / max(commands, 1), 1),
        "api_cpu_us_per_command": round(1e6 * used["api"] / max(commands, 1), 1),
        "worker_cpu_us_per_command": round(1e6 * used["workers"] / max(commands, 1), 1),
        "load_before": " ".join(load0),
        "load_after": " ".join(load1),
    }


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--games", type=int, default=16)
    ap.add_argument("--concurrency", type=int, default=8)
    ap.add_argument("--api", type=int, default=2, help="API processes")
    ap.add_argument("--workers", type=int, default=2, help="rfg worker processes")
    ap.add_argument("--setups", default="single,cluster")
    ap.add_argument(
        "--think", type=float, default=0.0, help="seconds the client waits per decision"
    )
    ap.add_argument("--json", action="store_true")
    ap.add_argument(
        "--hosts",
        choices=("local", "netns"),
        default="local",
        help="local: every process on 127.0.0.1; netns: the namespaced test hosts (root)",
    )
    ap.add_argument(
        "--api-hosts", default="1,2", help="with --hosts netns: API host counts to play through"
    )
    args = ap.parse_args()
    random.seed(1)
    rows = []
    with tempfile.TemporaryDirectory(prefix="rfg-scale-") as tmp:
        if args.hosts == "netns":
            signal.signal(signal.SIGTERM, lambda *_: sys.exit(1))  # run the clean-up on a kill
            rows = run_netns(args, Path(tmp))
        else:
            for kind in args.setups.split(","):
                d = Path(tmp) / kind
                d.mkdir()
                rows.append(run_setup(kind, args, d))
    if args.json:
        print(json.dumps(rows, indent=1))
        return 0
    keys = [k for k in rows[0] if k not in ("setup", "errors")]
    if args.hosts == "netns":
        print(
            f"{args.games} games (2 players: HTTP client + heuristic bot), {args.concurrency} in "
            "flight, on the namespaced hosts: 2 worker hosts, clients on 2 client hosts"
        )
    else:
        print(
            f"{args.games} games (2 players: HTTP client + heuristic bot), {args.concurrency} in "
            f"flight, {args.api} API processes, {args.workers} workers"
        )
    print(
        f"{'':34}"
        + "".join(f"{r['setup']:>17}" for r in rows)
        + ("   cluster/single" if len(rows) == 2 else "")
    )
    for k in keys:
        vals = [r[k] for r in rows]
        ratio = ""
        if len(rows) == 2 and all(isinstance(v, int | float) and v for v in vals):
            ratio = f"{vals[1] / vals[0]:>14.2f}"
        print(f"{k:34}" + "".join(f"{v!s:>17}" for v in vals) + ratio)
    if args.hosts == "netns":
        for n in sorted({r["setup"].split()[1] for r in rows}):
            by = {r["setup"].split()[0]: r for r in rows if r["setup"].endswith(n)}
            if "single" in by and "cluster" in by and by["single"]["commands_per_s"]:
                ratio = by["cluster"]["commands_per_s"] / by["single"]["commands_per_s"]
                print(f"cluster/single commands/s with {n}: {ratio:.2f}")
    for r in rows:
        if r["errors"]:
            print(f"{r['setup']}: errors: {r['errors']}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
