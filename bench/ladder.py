"""Ladder benchmark (first version): bot-vs-bot games through the full service path, next to the
same games played in-process by ``bots.arena``.

    python bench/ladder.py [--url redis://127.0.0.1:6379/0] [--games 60] [--players 4]
                           [--workers 2] [--concurrency 8] [--bot heuristic] [--via-api]

Service path: the bench process creates each game through ``events.games.service.GameService`` with the
workers' dispatcher attached (``--via-api``: ``POST /games`` on the Flask app, in-process WSGI,
with ``workers.attach`` on the app's ``GameService``), so its first bot jobs are enqueued at once; then
``--workers`` real ``rfg worker`` processes (RQ SimpleWorker + scheduler + sweep) play every
decision: an RQ job takes the game's keeper lease and plays on (``workers.turns``), decision
after decision: bot -> ``GameService.submit`` (hash-chained envelopes, views, one Lua append per
command) until the game ends or the workers' play-on time is spent (``RFG_PLAY_ON``, which the
workers inherit, default 2 s; 0: a job per decision), then hands the game back to the queue.
``--concurrency`` games are kept in flight. The workers compact each finished game
``COMPACT_AFTER`` seconds after it ends.

Prints games per hour, events per second, Redis memory per finished game as played and once
compacted, and the bot decision latency two ways: from enqueue to the job's own decision
(the workers' histogram, ``events.store.job_latency``, that ``/metrics`` reports: upper bounds of
its buckets; with playing on, one job per game stretch) and from the
append that made a decision pending to the append of its command (envelope timestamps). Figures
only; nothing is asserted. Everything the run writes to Redis is deleted at the end, RQ's
queue (``Queue.delete``: its entry in ``rq:queues`` too) and its workers' keys included
(``tests/workers/test_ladder_bench.py`` checks it).
"""

from __future__ import annotations

import argparse
import os
import signal
import statistics
import subprocess
import sys
import tempfile
import time
import uuid
from datetime import datetime
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from rq import Queue, Worker  # noqa: E402
from rq.group import Group  # noqa: E402

import engine  # noqa: E402
import events.store  # noqa: E402
from bots import arena  # noqa: E402
from events.games.time_control import Clocks, batch_seat, batches  # noqa: E402
from events.store.job_latency import read_job_latency  # noqa: E402
from workers import Runtime, WorkerSettings, attach  # noqa: E402

RFG = str(Path(sys.executable).parent / "rfg")
#: seconds after a game ends before the workers compact it: long enough to measure a finished
#: game's memory before compaction, short enough to measure it after before the bench ends
COMPACT_AFTER = 5.0


def game_memory(client: Any, store: Any, game_id: str) -> int:
    """Bytes Redis holds for one game (MEMORY USAGE of each of its keys, the lobby entry aside)."""
    keys = [*store.game_keys(game_id), store.compacted_key(game_id)]
    pipe = client.pipeline(transaction=False)
    for k in keys:
        pipe.memory_usage(k)
    return sum(x or 0 for x in pipe.execute())


def pct(values: list[float], q: float) -> float:
    if not values:
        return float("nan")
    values = sorted(values)
    return values[min(len(values) - 1, int(q * len(values)))]


def spawn_workers(url: str, prefix: str, n: int, logdir: Path) -> list[subprocess.Popen[bytes]]:
    procs = []
    for i in range(n):
        log = open(logdir / f"worker-{i}.log", "wb")  # noqa: SIM115
        procs.append(
            subprocess.Popen(
                [
                    RFG,
                    "worker",
                    "--url",
                    url,
                    "--prefix",
                    prefix,
                    "--log-level",
                    "WARNING",
                    "--compact-after",
                    str(COMPACT_AFTER),
                ],
                cwd=ROOT,
                stdout=log,
                stderr=subprocess.STDOUT,
                start_new_session=True,
            )
        )
    return procs


def stop_workers(procs: list[subprocess.Popen[bytes]]) -> None:
    for p in procs:
        try:
            os.killpg(p.pid, signal.SIGTERM)
        except ProcessLookupError:
            pass
    for p in procs:
        try:
            p.wait(timeout=10)
        except subprocess.TimeoutExpired:
            os.killpg(p.pid, signal.SIGKILL)


def wait_for_workers(rt: Runtime, n: int, logdir: Path) -> list[str]:
    """Wait until ``n`` workers serve the run's queue; return their keys (for ``purge``)."""
    deadline = time.monotonic() + 30
    while len(workers := Worker.all(queue=rt.queue)) < n:
        if time.monotonic() > deadline:
            raise SystemExit(f"workers did not start; see {logdir}")
        time.sleep(0.05)
    return [w.key for w in workers]


def purge(client: Any, queue: Queue, worker_keys: list[str], cleaning_lock: bool) -> None:
    """Delete everything the run wrote: the store's keys under its prefix (the queue's name); the
    queue itself and its entry in RQ's set of queues (``Queue.delete``); its registries, jobs,
    results and executions; the keys of the stopped workers that served it (RQ keeps a dead
    worker's for a minute); and RQ's group-cleaning lock when the run's workers took it
    (``cleaning_lock``: it did not exist before they started)."""
    prefix = queue.name
    queue.delete(delete_jobs=True)
    doomed = set(worker_keys)
    if cleaning_lock:
        doomed.add(Group.REDIS_GROUP_CLEANING_KEY)
    for pattern in (
        f"{prefix}:*",
        f"rq:job:{prefix}-*",
        f"rq:*:{prefix}",
        f"rq:*:{prefix}:*",
        f"rq:results:{prefix}-*",
        f"rq:execution:{prefix}-*",
        f"rq:executions:{prefix}-*",
    ):
        doomed.update(client.scan_iter(match=pattern, count=1000))
    keys = list(doomed)
    for i in range(0, len(keys), 1000):
        client.delete(*keys[i : i + 1000])


def decision_latencies(rt: Runtime, game_id: str) -> list[float]:
    """ms from the append that made each bot decision pending to the append of its command."""
    out = []
    clocks: Clocks | None = None
    state = None
    for batch in batches(rt.store.read(game_id)):
        seat = batch_seat(batch)
        if seat is not None and clocks is not None:
            since = clocks.seats[seat].since
            if since is not None:
                dt = datetime.fromisoformat(batch[0].ts) - datetime.fromisoformat(since)
                out.append(dt.total_seconds() * 1000)
        for env in batch:
            state = engine.evolve(state, env.event())
        assert state is not None
        if clocks is None:
            clocks = Clocks.for_table(state.table, len(state.players))
        clocks.apply(
            state, version=batch[-1].seq, ts=batch[-1].ts, actor=batch[-1].actor, seat=seat
        )
    return out


def run_service(args: argparse.Namespace) -> dict[str, Any]:
    prefix = f"bench{uuid.uuid4().hex[:8]}"
    settings = WorkerSettings(prefix=prefix, queue=prefix)
    client = events.store.connect(args.url)
    rt = Runtime(client, settings)
    logdir = Path(tempfile.mkdtemp(prefix="rfg-ladder-"))
    cleaning_lock = not client.exists(Group.REDIS_GROUP_CLEANING_KEY)
    procs = spawn_workers(args.url, prefix, args.workers, logdir)
    worker_keys: list[str] = []
    create = _creator(args, rt, client, prefix)
    table = {"seats": [{"kind": "bot", "bot": args.bot}] * args.players}
    try:
        worker_keys = wait_for_workers(rt, args.workers, logdir)
        started = time.perf_counter()
        created = 0
        in_flight: list[str] = []
        done: list[str] = []
        fresh_memory: list[int] = []
        while len(done) < args.games:
            while created < args.games and len(in_flight) < args.concurrency:
                in_flight.append(create(f"{args.seed}:{created}", table))
                created += 1
            time.sleep(0.02)
            pipe = client.pipeline(transaction=False)
            for g in in_flight:
                pipe.hget(rt.store.keys(g)[1], "status")
            statuses = pipe.execute()
            for g, st in zip(list(in_flight), statuses, strict=True):
                if st in (b"finished", "finished"):
                    in_flight.remove(g)
                    done.append(g)
                    if len(fresh_memory) < 10:  # just finished: not compacted yet
                        fresh_memory.append(game_memory(client, rt.store, g))
            if time.perf_counter() - started > args.max_seconds:
                raise SystemExit(f"gave up after {args.max_seconds}s; see {logdir}")
        wall = time.perf_counter() - started
        events_total = sum(rt.store.version(g) for g in done)
        deadline = time.monotonic() + COMPACT_AFTER + 60
        while time.monotonic() < deadline:  # the workers' sweep compacts every finished game
            pipe = client.pipeline(transaction=False)
            for g in done:
                pipe.hexists(rt.store.keys(g)[1], "compacted")
            if all(pipe.execute()):
                break
            time.sleep(0.5)
        compacted = [game_memory(client, rt.store, g) for g in done]
        jobs = read_job_latency(client, prefix, "bot")
        decisions: list[float] = []
        for g in done[: min(len(done), 20)]:
            decisions += decision_latencies(rt, g)
        return {
            "wall": wall,
            "games": len(done),
            "events": events_total,
            "jobs": jobs,
            "decisions": decisions,
            "logdir": str(logdir),
            "fresh_memory": fresh_memory,
            "compacted_memory": compacted,
        }
    finally:
        stop_workers(procs)
        purge(client, rt.queue, worker_keys, cleaning_lock)


def run_ladder(args: argparse.Namespace) -> dict[str, Any]:
    """A real ladder: the workers' sweep schedules its games (Ladders.schedule), the workers play
    them and the ratings projection folds each result; counts recorded results."""
    from ladder.service import LadderConfig, Ladders

    prefix = f"bench{uuid.uuid4().hex[:8]}"
    settings = WorkerSettings(prefix=prefix, queue=prefix)
    client = events.store.connect(args.url)
    rt = Runtime(client, settings)
    ladders = Ladders(client, rt.games, prefix=prefix)
    name = "bench"
    ladders.create(LadderConfig(name, players=[args.players], concurrency=args.concurrency))
    for i in range(args.players + 1):
        ladders.add_entrant(name, f"{args.bot}-{i}", bot=args.bot)
    logdir = Path(tempfile.mkdtemp(prefix="rfg-ladder-"))
    cleaning_lock = not client.exists(Group.REDIS_GROUP_CLEANING_KEY)
    procs = spawn_workers(args.url, prefix, args.workers, logdir)
    worker_keys: list[str] = []
    try:
        worker_keys = wait_for_workers(rt, args.workers, logdir)
        started = time.perf_counter()
        while len(ladders.results(name)) < args.games:
            time.sleep(0.1)
            if time.perf_counter() - started > args.max_seconds:
                raise SystemExit(f"gave up after {args.max_seconds}s; see {logdir}")
        wall = time.perf_counter() - started
        results = ladders.results(name)[: args.games]
        events_total = sum(rt.store.version(r.game_id) for r in results)
        return {
            "wall": wall,
            "games": len(results),
            "events": events_total,
            "jobs": ([], 0.0),
            "decisions": [],
            "logdir": str(logdir),
        }
    finally:
        stop_workers(procs)
        purge(client, rt.queue, worker_keys, cleaning_lock)


def rating_updates(args: argparse.Namespace, n: int = 2000) -> tuple[float, float]:
    """Rating updates per second: the pure fold, and Ladders.record on the store (WATCH/MULTI)."""
    import random as pyrandom

    from events.games.service import GameService
    from ladder.ratings import RatingTable, Result
    from ladder.service import LadderConfig, Ladders

    r = pyrandom.Random(1)
    names = [f"e{i}" for i in range(20)]
    res = []
    for i in range(n):
        seats = r.sample(names, args.players)
        res.append(
            Result(
                f"g{i}",
                tuple(seats),
                tuple(r.randint(10, 50) for _ in seats),
                tuple(r.randint(0, 9) for _ in seats),
            )
        )
    t0 = time.perf_counter()
    table = RatingTable()
    for x in res:
        table.apply(x)
    pure = n / (time.perf_counter() - t0)
    prefix = f"bench{uuid.uuid4().hex[:8]}"
    client = events.store.connect(args.url)
    lad = Ladders(
        client, GameService(events.store.RedisStore(client, prefix=prefix)), prefix=prefix
    )
    lad.create(LadderConfig("rates", players=[args.players]))
    m = min(n, 300)
    t0 = time.perf_counter()
    for x in res[:m]:
        lad.record(
            "rates",
            x.game_id,
            list(x.entrants),
            [{"total": t, "tiebreak": b} for t, b in zip(x.totals, x.tiebreaks, strict=True)],
        )
    stored = m / (time.perf_counter() - t0)
    keys = list(client.scan_iter(match=f"{prefix}:*", count=1000))
    for i in range(0, len(keys), 1000):
        client.delete(*keys[i : i + 1000])
    return pure, stored


def _creator(args: argparse.Namespace, rt: Runtime, client: Any, prefix: str) -> Any:
    if not args.via_api:
        return lambda seed, table: rt.games.create(args.players, seed=seed, table=table)[0]
    from rfgcli.wsgi import create_app

    app = create_app({"STORE_URL": args.url, "STORE_PREFIX": prefix, "TESTING": True})
    attach(app.extensions["rfg"].games, client, rt.settings)
    api = app.test_client()

    def create(seed: str, table: dict[str, Any]) -> str:
        r = api.post("/games", json={"seats": table["seats"]})
        assert r.status_code == 201, r.get_json()
        return str(r.get_json()["game_id"])

    return create


def run_arena(args: argparse.Namespace) -> dict[str, Any]:
    started = time.perf_counter()
    n_events = 0
    for i in range(args.games):
        rec = arena.play_game(f"{args.seed}:{i}", args.players, [args.bot])
        n_events += len(rec.events)
    return {"wall": time.perf_counter() - started, "games": args.games, "events": n_events}


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--url", default=os.environ.get("REDIS_URL", "redis://127.0.0.1:6379/0"))
    p.add_argument("--games", type=int, default=60)
    p.add_argument("--players", type=int, default=4)
    p.add_argument("--workers", type=int, default=2)
    p.add_argument("--concurrency", type=int, default=8, help="games in flight")
    p.add_argument("--bot", default="heuristic")
    p.add_argument("--seed", default="ladder-bench")
    p.add_argument("--via-api", action="store_true", help="create games with POST /games")
    p.add_argument(
        "--ladder",
        action="store_true",
        help="run a real ladder (workers schedule its games, ratings fold each result)",
    )
    p.add_argument("--max-seconds", type=float, default=1800)
    args = p.parse_args()

    svc = run_ladder(args) if args.ladder else run_service(args)
    local = run_arena(args)
    path = "REST API (POST /games, in-process WSGI) + " if args.via_api else ""
    if args.ladder:
        path = "a ladder scheduled by the workers' sweep (Ladders.schedule, results + ratings) + "
    print(
        f"ladder bench: {args.games} x {args.players}-player {args.bot}-bot games, "
        f"{args.workers} worker process(es), {args.concurrency} in flight, store {args.url}"
    )
    print(
        f"path measured: {path}GameService + Redis + RQ workers (one job plays a game's bot decisions "
        f"on for up to RFG_PLAY_ON seconds; every command appended with the lobby summary, the "
        f"other views rendered at the end and when read)"
    )
    for name, r in (("service (workers)", svc), ("in-process arena", local)):
        gph = r["games"] / r["wall"] * 3600
        print(
            f"  {name:18s} {r['wall']:8.1f} s  {gph:10,.0f} games/h  "
            f"{r['events'] / r['wall']:10,.0f} events/s  ({r['events'] / r['games']:.0f} events/game)"
        )
    fresh, packed = svc.get("fresh_memory") or [], svc.get("compacted_memory") or []
    if fresh and packed:
        print(
            f"  Redis memory per finished game: {statistics.fmean(fresh) / 1024:,.1f} KB as played "
            f"(n={len(fresh)}), {statistics.fmean(packed) / 1024:,.1f} KB compacted "
            f"(n={len(packed)}, max {max(packed) / 1024:,.1f} KB; MEMORY USAGE of the game's keys)"
        )
    (buckets, seconds), dec = svc["jobs"], svc["decisions"]
    if buckets and buckets[-1][1]:
        n = buckets[-1][1]
        bound = {q: next(le for le, count in buckets if count >= q * n) for q in (0.5, 0.9, 0.99)}
        print(
            f"  bot job, enqueue -> its own decision applied (n={n}, mean "
            f"{seconds / n * 1000:.1f} ms): p50 <= {bound[0.5]} s, p90 <= {bound[0.9]} s, "
            f"p99 <= {bound[0.99]} s"
        )
    if dec:
        print(
            f"  decision, pending -> applied (n={len(dec)}, first 20 games): p50 {pct(dec, 0.5):.1f} ms, "
            f"p90 {pct(dec, 0.9):.1f} ms, mean {statistics.fmean(dec):.1f} ms"
        )
    print("  (service events include each command's CommandSubmitted record; arena events do not)")
    print(f"  worker logs: {svc['logdir']}")
    pure, stored = rating_updates(args)
    print(
        f"rating updates: {pure:,.0f}/s pure OpenSkill fold, {stored:,.0f}/s recorded on the store "
        f"(WATCH/MULTI, live table rewritten) - per finished game, so not the bottleneck"
    )


if __name__ == "__main__":
    main()
