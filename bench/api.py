"""API benchmark: commands per second and latency for N concurrent clients, next to hello world.

    python bench/api.py [--clients 32] [--seconds 10] [--players 2] [--url redis://...]

Starts two gunicorn servers the same way (2 workers of ``--worker-class``, 127.0.0.1; by default
the game-affine sync worker of ``service.affinity``, which serves each game on one worker and
otherwise works as gunicorn's sync worker does): the real API on the store
(``--url``; default ``$REDIS_URL``, else redis://127.0.0.1:6379/0 if it answers, else an embedded
server in a temp dir) under a fresh key prefix, and a one-route hello-world Flask app. Each run
drives one of them with ``--clients`` concurrent clients (threads spread over a few processes,
prebuilt requests on raw sockets, one connection per request as sync workers close them) for
``--seconds`` and prints
requests per second and p50/p99 latency.

Two baselines, each round: the bare hello-world app, and ``GET /healthz`` of the API itself - the
same app, request hooks (request id, access log, metrics, body checks) and gunicorn configuration
as the commands, answering a small JSON body without touching the store. Server CPU per command
is reported against both.

The command clients do nothing but submit commands: before the clock starts, every client's
games are created with an admin seed, all seats claimed, and each game's whole command script
(random bot, versions included) computed locally with the engine, which gives the same game the
server plays. Each POST carries its ``expected_version``; the client checks the answer's version.
Prints figures, asserts nothing; the key prefix is deleted afterwards.

``--rate R`` (open loop, as wrk2 does): instead of N clients each waiting for its answer before
the next request, requests are sent on a fixed schedule of R per second in all, whether or not
earlier ones came back, and each latency is counted from the moment the request was due, so
queueing shows in p50/p99/p99.9 rather than in a lower request rate.

    python bench/api.py --rate 300 --seconds 20
"""

from __future__ import annotations

import argparse
import http.client
import json
import math
import multiprocessing
import os
import shutil
import socket
import statistics
import subprocess
import sys
import tempfile
import threading
import time
import uuid
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

import engine  # noqa: E402
from bots import get_bot  # noqa: E402
from engine.rng import Rng  # noqa: E402

ADMIN = "bench-admin"
#: ``--worker-class`` short names: the game-affine workers (``service.affinity``)
WORKER_CLASSES = {
    "affine": "service.affinity.GameAffineWorker",
    "affine-gthread": "service.affinity.GameAffineThreadWorker",
}
#: the baselines: the bare hello-world app's route, the API's own /healthz (same app and hooks)
HELLO_PATHS = {"hello": "/hello", "healthz": "/healthz"}
Script = list[tuple[int, dict[str, Any], int, int]]  # (seat, command, expected, new version)
Prepared = list[tuple[bytes, int]]  # (the request, the version the answer must carry)


def hello_app() -> Any:
    """The baseline: one Flask route answering a small JSON body."""
    from flask import Flask, jsonify

    app = Flask("hello")

    @app.get("/hello")
    def hello() -> Any:
        return jsonify(status="ok")

    return app


# --- servers ----------------------------------------------------------------------------------


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port: int = s.getsockname()[1]
        return port


def start_gunicorn(
    target: str,
    port: int,
    env: dict[str, str],
    workers: int,
    worker_class: str = "sync",
    threads: int = 1,
) -> subprocess.Popen[bytes]:
    gunicorn = str(Path(sys.executable).with_name("gunicorn"))
    cmd = [
        gunicorn,
        "--bind",
        f"127.0.0.1:{port}",
        "--workers",
        str(workers),
        "--worker-class",
        worker_class,
        "--threads",
        str(threads),
        "--backlog",
        "2048",
        "--log-level",
        "warning",
        "--pythonpath",
        str(ROOT),
        target,
    ]
    proc = subprocess.Popen(cmd, env={**os.environ, **env}, cwd=ROOT)
    deadline = time.monotonic() + 30
    while time.monotonic() < deadline:
        try:
            status, _ = request(
                port, "GET", "/hello" if target.startswith("bench.api:hello") else "/healthz"
            )
            if status == 200:
                return proc
        except OSError:
            time.sleep(0.1)
    proc.terminate()
    raise SystemExit(f"gunicorn {target} did not start on port {port}")


def stop(proc: subprocess.Popen[bytes]) -> None:
    proc.terminate()
    try:
        proc.wait(10)
    except subprocess.TimeoutExpired:
        proc.kill()


# --- HTTP -------------------------------------------------------------------------------------


def request(
    port: int, method: str, path: str, body: Any = None, headers: dict[str, str] | None = None
) -> tuple[int, bytes]:
    conn = http.client.HTTPConnection("127.0.0.1", port, timeout=30)
    try:
        data = None if body is None else json.dumps(body).encode()
        hdrs = dict(headers or {})
        if data is not None:
            hdrs["Content-Type"] = "application/json"
        conn.request(method, path, body=data, headers=hdrs)
        resp = conn.getresponse()
        return resp.status, resp.read()
    finally:
        conn.close()


def raw_request(port: int, payload: bytes) -> tuple[int, bytes]:
    """Send a prebuilt HTTP/1.1 request on a new connection and read the answer to EOF: the
    cheapest client there is, so the client processes leave the CPUs to the servers."""
    with socket.create_connection(("127.0.0.1", port), timeout=30) as s:
        s.sendall(payload)
        chunks = []
        while True:
            chunk = s.recv(65536)
            if not chunk:
                break
            chunks.append(chunk)
    data = b"".join(chunks)
    head, _, body = data.partition(b"\r\n\r\n")
    return int(head[9:12]), body


def build(method: str, path: str, body: Any = None, headers: dict[str, str] | None = None) -> bytes:
    data = b"" if body is None else json.dumps(body).encode()
    lines = [f"{method} {path} HTTP/1.1", "Host: 127.0.0.1", "Connection: close"]
    lines += [f"{k}: {v}" for k, v in (headers or {}).items()]
    if body is not None:
        lines += ["Content-Type: application/json", f"Content-Length: {len(data)}"]
    return ("\r\n".join(lines) + "\r\n\r\n").encode() + data


# --- command scripts --------------------------------------------------------------------------


def script_for(seed: str, players: int, rng_seed: int) -> Script:
    """The commands a random bot plays in the game this seed deals, with the versions the server
    will be at (each command appends its CommandSubmitted record plus the engine's events)."""
    events = engine.create(seed, players, {}, None)
    state = engine.replay(events)
    version = len(events)
    bot, rng = get_bot("random"), Rng(rng_seed)
    out: Script = []
    while not state.over:
        seat = min(engine.pending(state))
        cmd = bot.act(engine.legal(state, seat), None, rng)
        engine.evolve(state, engine.command_submitted(seat, cmd))
        new = version + 1 + len(engine.play(state, seat, cmd))
        out.append((seat, cmd, version, new))
        version = new
    return out


def prepare(port: int, players: int, games: int, tag: str) -> list[Prepared]:
    """Create and claim ``games`` seeded games; per game, its command requests ready to send."""
    out = []
    for i in range(games):
        seed = f"bench:{tag}:{i}"
        status, raw = request(
            port,
            "POST",
            "/games",
            {"seats": [{"kind": "human"}] * players, "seed": seed},
            {"Authorization": f"Bearer {ADMIN}"},
        )
        assert status == 201, raw
        gid = json.loads(raw)["game_id"]
        tokens = {}
        for seat in range(players):
            status, raw = request(port, "POST", f"/games/{gid}/seats/{seat}/claim")
            tokens[seat] = json.loads(raw)["token"]
        requests = []
        for n, (seat, cmd, expected, new) in enumerate(script_for(seed, players, i)):
            body = {"command_id": f"b{n}", "expected_version": expected, "command": cmd}
            requests.append(
                (
                    build(
                        "POST",
                        f"/games/{gid}/seats/{seat}/commands",
                        body,
                        {"Authorization": f"Bearer {tokens[seat]}"},
                    ),
                    new,
                )
            )
        out.append(requests)
    return out


# --- load -------------------------------------------------------------------------------------


def _worker(args: tuple[str, int, int, float, float, list[Any]]) -> tuple[int, int, list[float]]:
    """One client process: ``threads`` clients until ``stop_at``; returns (ok, errors, latencies)."""
    mode, port, threads, start_at, stop_at, work = args
    lat: list[list[float]] = [[] for _ in range(threads)]
    errors = [0] * threads

    def client(k: int) -> None:
        while time.time() < start_at:
            time.sleep(0.001)
        if mode in HELLO_PATHS:
            hello = build("GET", HELLO_PATHS[mode])
            while time.time() < stop_at:
                t = time.perf_counter()
                status, _ = raw_request(port, hello)
                lat[k].append(time.perf_counter() - t)
                errors[k] += status != 200
            return
        for game in work[k]:
            for payload, new in game:
                if time.time() >= stop_at:
                    return
                t = time.perf_counter()
                status, raw = raw_request(port, payload)
                lat[k].append(time.perf_counter() - t)
                if status != 201 or json.loads(raw)["version"] != new:
                    errors[k] += 1
                    break  # this game is off script; go on with the next one

    ts = [threading.Thread(target=client, args=(k,)) for k in range(threads)]
    for t in ts:
        t.start()
    for t in ts:
        t.join()
    flat = [x for xs in lat for x in xs]
    return len(flat) - sum(errors), sum(errors), flat


def _open_loop(
    args: tuple[str, int, float, float, float, float, list[Any], int],
) -> tuple[int, int, list[float], int]:
    """One client process at a constant rate: request i is due at ``first + i / rate`` and is sent
    then whether or not earlier ones came back (a thread per request in flight, up to
    ``max_threads``); its latency is counted from when it was due, so queueing anywhere - the
    server, a client thread waiting for a free game - shows in it (wrk2's correction for
    coordinated omission). A command goes to a game whose previous command has returned (each
    carries ``expected_version``). Returns (ok, errors, latencies, requests not sent in time)."""
    import queue
    from concurrent.futures import ThreadPoolExecutor

    mode, port, rate, first, stop_at, _unused, games, max_threads = args
    free: queue.Queue[Any] = queue.Queue()
    for game in games:
        free.put(iter(game))
    lat: list[float] = []
    errors = [0]
    lock = threading.Lock()
    hello = build("GET", HELLO_PATHS.get(mode, "/hello"))

    def send(due: float) -> None:
        if mode in HELLO_PATHS:
            status, _ = raw_request(port, hello)
            ok = status == 200
        else:
            while True:
                game = free.get()
                step = next(game, None)
                if step is not None:
                    break
            status, raw = raw_request(port, step[0])
            ok = status == 201 and json.loads(raw)["version"] == step[1]
            if ok:
                free.put(game)  # else the game is off script: it is dropped
        took = time.time() - due
        with lock:
            lat.append(took)
            errors[0] += not ok

    late = 0
    with ThreadPoolExecutor(max_workers=max_threads) as pool:
        i = 0
        while True:
            due = first + i / rate
            if due >= stop_at:
                break
            wait = due - time.time()
            if wait > 0:
                time.sleep(wait)
            elif wait < -0.001:
                late += 1
            pool.submit(send, due)
            i += 1
    return len(lat) - errors[0], errors[0], lat, late


def run_open_loop(
    mode: str,
    port: int,
    rate: float,
    seconds: float,
    work: list[Any],
    processes: int,
    cpu_of: list[int] | None = None,
) -> dict[str, float]:
    """``rate`` requests per second in all, spread over ``processes`` client processes."""
    start_at = time.time() + 1.0
    stop_at = start_at + seconds
    per_rate = rate / processes
    jobs = []
    for k in range(processes):
        games = [g for i, g in enumerate(work) if i % processes == k]
        jobs.append((mode, port, per_rate, start_at + k / rate, stop_at, 0.0, games, 256))
    ctx = multiprocessing.get_context("fork")
    server_before = _cpu_seconds(cpu_of or [])
    with ctx.Pool(processes) as pool:
        results = pool.map(_open_loop, jobs)
    server_after = _cpu_seconds(cpu_of or [])
    lat = sorted(x for r in results for x in r[2])
    ok = sum(r[0] for r in results)

    def pct(q: float) -> float:  # nearest rank
        return lat[min(len(lat) - 1, max(0, math.ceil(q * len(lat)) - 1))] * 1000 if lat else 0.0

    out = {
        "rps": ok / seconds,
        "ok": ok,
        "errors": sum(r[1] for r in results),
        "late": sum(r[3] for r in results),
        "p50_ms": pct(0.5),
        "p99_ms": pct(0.99),
        "p999_ms": pct(0.999),
    }
    if cpu_of and server_before is not None and server_after is not None:
        out["server_cpu_us"] = (server_after - server_before) / max(1, len(lat)) * 1e6
    return out


def open_loop_main(
    args: argparse.Namespace,
    processes: int,
    hello_port: int,
    api_port: int,
    hello: subprocess.Popen[bytes],
    api: subprocess.Popen[bytes],
    store: str,
    prefix: str,
) -> None:
    """``--rate``: hello world and commands each at the same constant rate, one round each."""
    print(
        f"open loop: {args.rate:g} requests/s for {args.seconds:g} s each, latency from the "
        f"time each request was due"
    )
    h = run_open_loop(
        "hello", hello_port, args.rate, args.seconds, [], processes, cpu_of=worker_pids(hello)
    )
    hz = run_open_loop(
        "healthz", api_port, args.rate, args.seconds, [], processes, cpu_of=worker_pids(api)
    )
    # enough games that each is rarely busy: a command per game about every 50 ms at most
    n_games = max(4 * processes, int(args.rate * 0.05) + 4 * processes)
    per_game = int(args.seconds * args.rate / n_games) + 2
    work = [
        game
        for k in range(n_games)
        for game in prepare(api_port, args.players, max(1, per_game // 100 + 1), f"{prefix}:o:{k}")
    ]
    work = [[step for game in work[i::n_games] for step in game] for i in range(n_games)]
    c = run_open_loop(
        "commands",
        api_port,
        args.rate,
        args.seconds,
        work,
        processes,
        cpu_of=worker_pids(api) + redis_pids(store),
    )
    print(
        f"{'':22}{'sent/s':>10}{'p50 ms':>10}{'p99 ms':>10}{'p99.9 ms':>10}{'errors':>8}"
        f"{'late':>8}{'server CPU/req':>16}"
    )
    for name, x in (("hello world GET", h), ("API GET /healthz", hz), ("command POST", c)):
        print(
            f"{name:22}{x['rps']:10.0f}{x['p50_ms']:10.2f}{x['p99_ms']:10.2f}"
            f"{x['p999_ms']:10.2f}{x['errors']:8.0f}{x['late']:8.0f}"
            f"{_us(x.get('server_cpu_us')):>16}"
        )
    print(
        "(late: requests the client itself sent more than 1 ms after they were due - a client "
        "too slow for the rate; server CPU: gunicorn workers, plus Redis for commands)"
    )


def run_load(
    mode: str,
    port: int,
    clients: int,
    seconds: float,
    work: list[Any],
    processes: int,
    cpu_of: list[int] | None = None,
    store_pids: list[int] | None = None,
) -> dict[str, float]:
    per = [clients // processes + (1 if i < clients % processes else 0) for i in range(processes)]
    start_at = time.time() + 1.0
    stop_at = start_at + seconds
    jobs = []
    k = 0
    for n in per:
        jobs.append((mode, port, n, start_at, stop_at, work[k : k + n] if work else []))
        k += n
    ctx = multiprocessing.get_context("fork")
    server_before = _cpu_seconds(cpu_of or [])
    store_before = _cpu_seconds(store_pids or [])
    with ctx.Pool(processes) as pool:
        clients_cpu = [p.pid for p in pool._pool]  # type: ignore[attr-defined]
        client_before = _cpu_seconds(clients_cpu)
        results = pool.map(_worker, jobs)
        client_after = _cpu_seconds(clients_cpu)
    server_after = _cpu_seconds(cpu_of or [])
    store_after = _cpu_seconds(store_pids or [])
    ok = sum(r[0] for r in results)
    errors = sum(r[1] for r in results)
    lat = sorted(x for r in results for x in r[2])
    elapsed = seconds
    q = statistics.quantiles(lat, n=100) if len(lat) >= 100 else [max(lat or [0])] * 99
    out = {
        "rps": ok / elapsed,
        "ok": ok,
        "errors": errors,
        "p50_ms": q[49] * 1000,
        "p99_ms": q[98] * 1000,
    }
    done = max(1, len(lat))
    if cpu_of and server_before is not None and server_after is not None:
        out["server_cpu_us"] = (server_after - server_before) / done * 1e6
    if store_pids and store_before is not None and store_after is not None:
        out["store_cpu_us"] = (store_after - store_before) / done * 1e6
    if client_before is not None and client_after is not None:
        out["client_cpu_us"] = (client_after - client_before) / done * 1e6
    return out


# --- main -------------------------------------------------------------------------------------


def pick_store(url: str | None) -> tuple[str, str | None]:
    """(store URL, temp dir to remove) - the given URL, REDIS_URL, local Redis, or embedded."""
    url = url or os.environ.get("REDIS_URL")
    if url:
        return url, None
    import redis

    try:
        redis.Redis(socket_connect_timeout=1).ping()
        return "redis://127.0.0.1:6379/0", None
    except redis.RedisError:
        tmp = tempfile.mkdtemp(prefix="rfg-bench-")
        return f"embedded://{tmp}?fsync=everysec", tmp


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--clients", type=int, default=32)
    ap.add_argument("--seconds", type=float, default=10.0)
    ap.add_argument(
        "--rounds",
        type=int,
        default=3,
        help="hello/commands runs, alternating; the median round is the verdict",
    )
    ap.add_argument("--players", type=int, default=2)
    ap.add_argument("--workers", type=int, default=2, help="gunicorn workers")
    ap.add_argument(
        "--worker-class",
        default="affine",
        help="gunicorn worker class of both servers (default affine): sync, gthread, affine (sync, each game's "
        "requests on one worker: service.affinity), affine-gthread (as rfg run serves)",
    )
    ap.add_argument("--threads", type=int, default=1, help="threads per gthread worker")
    ap.add_argument("--processes", type=int, default=4, help="client processes")
    ap.add_argument("--url", help="store URL (default: $REDIS_URL, local Redis, or embedded)")
    ap.add_argument(
        "--rate",
        type=float,
        default=0.0,
        help="open loop: send this many requests per second on a fixed schedule "
        "(whether or not earlier ones returned) and report p50/p99/p99.9 "
        "from each request's due time; default: closed loop with --clients",
    )
    args = ap.parse_args()
    processes = max(1, min(args.processes, args.clients))

    store, tmp = pick_store(args.url)
    prefix = f"bench{uuid.uuid4().hex[:8]}"
    # limits off: one client drives the benchmark far past any per-address limit
    env = {
        "REDIS_URL": store,
        "RFG_STORE_PREFIX": prefix,
        "RFG_ADMIN_TOKEN": ADMIN,
        "RFG_RATE_LIMITS": "0",
    }
    args.worker_class = WORKER_CLASSES.get(args.worker_class, args.worker_class)
    threads = f" x {args.threads} threads" if "hread" in args.worker_class else ""
    print(
        f"store {store.split('?')[0]}  clients {args.clients} ({processes} processes)  "
        f"gunicorn {args.workers} {args.worker_class} workers{threads}  {args.rounds} rounds of "
        f"{args.seconds:g} s each  cpus {os.cpu_count()}"
    )

    hello_port, api_port = free_port(), free_port()
    server = (args.workers, args.worker_class, args.threads)
    hello = start_gunicorn("bench.api:hello_app()", hello_port, {}, *server)
    api = start_gunicorn("rfgcli.wsgi:create_app()", api_port, env, *server)
    rounds: list[tuple[dict[str, float], dict[str, float], dict[str, float]]] = []
    if args.rate:
        try:
            open_loop_main(args, processes, hello_port, api_port, hello, api, store, prefix)
        finally:
            stop(hello)
            stop(api)
            cleanup(store, prefix)
        return
    try:
        # enough games that no client runs out of commands (random 2-seat games: ~150 commands)
        per_client = max(1, int(args.seconds * 1500 / args.clients / 150) + 1)
        for r in range(args.rounds):
            h = run_load(
                "hello",
                hello_port,
                args.clients,
                args.seconds,
                [],
                processes,
                cpu_of=worker_pids(hello),
            )
            hz = run_load(
                "healthz",
                api_port,
                args.clients,
                args.seconds,
                [],
                processes,
                cpu_of=worker_pids(api),
            )
            work = [
                prepare(api_port, args.players, per_client, f"{prefix}:{r}:{k}")
                for k in range(args.clients)
            ]
            c = run_load(
                "commands",
                api_port,
                args.clients,
                args.seconds,
                work,
                processes,
                cpu_of=worker_pids(api) + redis_pids(store),
                store_pids=redis_pids(store),
            )
            rounds.append((h, hz, c))
            print(
                f"round {r + 1}: hello {h['rps']:.0f}/s, /healthz {hz['rps']:.0f}/s, commands "
                f"{c['rps']:.0f}/s ({c['rps'] / h['rps']:.0%}), command p99 {c['p99_ms']:.1f} ms, "
                f"server CPU per command {_ratio(c, h)} hello, {_ratio(c, hz)} /healthz"
                + (f" ({c['store_cpu_us']:.0f} us of it Redis's)" if "store_cpu_us" in c else "")
            )
    finally:
        stop(hello)
        stop(api)
        cleanup(store, prefix)
        if tmp:
            from events import EmbeddedServer

            EmbeddedServer(tmp).stop()
            shutil.rmtree(tmp, ignore_errors=True)

    h, hz, c = sorted(rounds, key=lambda r: r[2]["rps"] / r[0]["rps"])[len(rounds) // 2]
    print(
        f"median round:\n{'':22}{'req/s':>10}{'p50 ms':>10}{'p99 ms':>10}{'errors':>8}"
        f"{'server CPU/req':>16}{'client CPU/req':>16}"
    )
    for name, x in (("hello world GET", h), ("API GET /healthz", hz), ("command POST", c)):
        print(
            f"{name:22}{x['rps']:10.0f}{x['p50_ms']:10.2f}{x['p99_ms']:10.2f}{x['errors']:8.0f}"
            f"{_us(x.get('server_cpu_us')):>16}{_us(x.get('client_cpu_us')):>16}"
        )
    print(
        f"commands/s = {c['rps'] / h['rps']:.0%} of hello world (target >= 40%); "
        f"command p99 {c['p99_ms']:.1f} ms (target < 50 ms)"
    )
    cpu = sorted(((_cpu_ratio(c, h), _cpu_ratio(c, hz)) for h, hz, c in rounds), key=lambda x: x[0])
    print(
        "server CPU per command, median of the rounds: "
        f"{cpu[len(cpu) // 2][0]:.2f}x hello world (bare Flask), "
        f"{sorted(x[1] for x in cpu)[len(cpu) // 2]:.2f}x the API's /healthz "
        "(same app and hooks; target <= 3x)"
    )
    print(
        "(server CPU: the gunicorn workers, plus Redis for commands when it runs on this "
        "machine; client CPU: the load processes; user + system time per request)"
    )


def _us(value: float | None) -> str:
    return "-" if value is None else f"{value:.0f} us"


def _cpu_ratio(c: dict[str, float], base: dict[str, float]) -> float:
    if not c.get("server_cpu_us") or not base.get("server_cpu_us"):
        return float("nan")
    return c["server_cpu_us"] / base["server_cpu_us"]


def _ratio(c: dict[str, float], base: dict[str, float]) -> str:
    return f"{_cpu_ratio(c, base):.2f}x"


# --- CPU accounting (Linux /proc; figures are left out elsewhere) -----------------------------


def _cpu_seconds(pids: list[int]) -> float | None:
    total = 0.0
    try:
        for pid in pids:
            with open(f"/proc/{pid}/stat") as f:
                fields = f.read().rsplit(")", 1)[1].split()
            total += (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")
    except (OSError, ValueError, IndexError):
        return None
    return total


def worker_pids(master: subprocess.Popen[bytes]) -> list[int]:
    try:
        with open(f"/proc/{master.pid}/task/{master.pid}/children") as f:
            return [int(x) for x in f.read().split()]
    except OSError:
        return []


def redis_pids(store: str) -> list[int]:
    """The local redis-server serving the store URL's port, if any (its CPU is part of the cost)."""
    if not store.startswith("redis://"):
        return []
    port = store.split("//", 1)[1].split("/", 1)[0].rpartition(":")[2] or "6379"
    out = []
    for entry in os.listdir("/proc") if os.path.isdir("/proc") else []:
        if entry.isdigit():
            try:
                with open(f"/proc/{entry}/cmdline", "rb") as f:
                    cmd = f.read().replace(b"\0", b" ").decode(errors="replace")
            except OSError:
                continue
            if "redis-server" in cmd and (f":{port}" in cmd or (port == "6379" and ":" not in cmd)):
                out.append(int(entry))
    return out


def cleanup(store: str, prefix: str) -> None:
    import events

    client = events.connect(store)
    keys = list(client.scan_iter(match=f"{prefix}:*", count=1000))
    for i in range(0, len(keys), 1000):
        client.delete(*keys[i : i + 1000])


if __name__ == "__main__":
    main()
