"""Event streams and slow clients against the API as hosts run it, with its targets.

    python bench/streams.py [--scenario streams|many|slow|crowd|openings] [--quick]
                            [--spectators 500,5000] [--streams 5000] [--runs 5] [--settle 120]
                            [--url redis://127.0.0.1:6379/13]

Each scenario starts its own server with ``rfgcli.run.api_command`` (the command line ``rfg run``
starts: gunicorn's gevent worker, 2 workers, ``service.gunicorn_conf``) in ``rfg run``'s
environment (``RFG_DISPATCH=1``, ``PROMETHEUS_MULTIPROC_DIR``), on the real Redis (``--url``,
default database 13) under a key prefix of its own, every limit at its default. So clients come
from many source addresses, as real users do (127.0.0.2, 127.0.0.3, ... 127.0.1.1, ...: all of
127.0.0.0/8 is loopback and a client binds its address before it connects): 4 event streams per
address at most (the cap of an address without a token, and of a token), each game's commands
from an address of its own.

* ``streams``: 150 slow clients (each sends a request head one byte every 4 s; the server drops
  it after ``--head-timeout`` 5 s and it connects again) connected, then 1,000 event streams
  opened at once from 250 addresses on 5 idle 4-player games (80 of them seat streams with the
  seats' tokens, 920 public) while ``GET /games/{id}/view`` (public view, 50/s) and ``/healthz``
  (10/s) are probed, open loop, for 45 s. Targets: >= 95% of the streams have their first event
  within 40 s of connecting; the view's p99 < 250 ms; every probe answered.
* ``many``: commands at 300/s (open loop, ``bench/api.py``'s: 2-player games played by a
  random bot's script, each game from an address of its own) for 10 s alone, after 3 s of
  warm-up, as a baseline; then ``--streams`` (5,000) event streams from a quarter as many
  addresses on 20 idle games (320 seat streams), opened 256 at a time; 16.5 s with nothing but
  the streams (every stream quiet for over 15 s: its keep-alive); then the commands again,
  ``--runs`` (5) times 20 s while they are open; then the streams close and the server idles
  ``--settle`` (120) s. Targets: every stream open and given a keep-alive; the commands' p99
  < 30 ms in every run while the streams are open; the server's RSS per stream (the gunicorn
  workers' RSS after the streams opened minus before, over the streams) <= 20 KiB at 10,000
  streams (``--streams 10000``); the workers' RSS ``--settle`` 120 s after the streams closed
  within 25 % of before they opened (a verdict only with both at the target's values).
  Printed too: the server's CPU per stream opened and per keep-alive.
* ``slow``: ``/healthz`` at 20/s and commands at 300/s, open loop, for 10 s as a baseline (after
  3 s of warm-up); then 1,000 slow clients held (as above) and the same for 20 s. Targets: p99
  of each < 100 ms with the slow clients.

* ``crowd``: for each count of ``--spectators`` (default 500 and 5,000), that many public
  streams on one game (4 per address), held by two client processes (raw sockets on one epoll,
  noting when each stream first sees each ``id:``); once every one has its response head, 20
  commands to that game, one every 0.3 s; per stream and command, how long after the command's
  201 the first event it made arrived (p50/p99/max). Then the same on the anchor, a minimal
  Flask SSE app served the same way (``bench.api:sse_anchor_app``: one ``XREAD BLOCK`` reader
  per process, a condition, the same bytes written to every stream), a publish in place of
  each command. Targets: p99 < 30 ms with 500, < 100 ms with 5,000.

* ``openings``: 5,000 public streams (4 per address, on 5 idle 4-player games) opened at once
  while a game's public view (50/s) and ``/healthz`` (20/s) are probed, open loop, for 25 s:
  3 s of the probes alone (the server's CPU per second for them), then the streams all at
  once; the opening lasts until every stream has its response head, and its CPU until 1 s
  after that (their first events), the probes' own CPU taken off. Then the same on the anchor
  (``bench.api:sse_anchor_app``, served the same way: ``GET /stream`` its streams from the same
  addresses, ``GET /view`` - one stored document read from Redis - its view). Printed for both:
  the probes' p99 among those due while the streams opened, and the server's CPU per stream
  opened. Targets: on ours the view's and ``/healthz``'s p99 < 250 ms while they open (and no
  probe failed); CPU per opening <= 1.5x the anchor's.

The other scenarios' streams follow idle games (no command is sent to them), so each gets the game's events when
it opens and keep-alives after that; the commands go to games of their own.

The clients run in other processes than the server and are kept light: the streams and slow
clients in one asyncio process, the open-loop requests in ``bench/api.py``'s client processes
(threads, raw sockets, one connection per request, latency from each request's due time; one
not answered within 10 s fails - status 0 in the errors - and so does one not sent within 10 s
of its due time because every client thread was waiting - status -1 -, which keeps a scenario
within 2 minutes when the server falls behind). Their CPU time is printed next to the server's, and so is the time the server's
workers spent waiting for a CPU while runnable (``/proc/<pid>/task/*/schedstat``): the machine
is shared, and that wait is what other load cost them. ``--quick``: a fifth of the counts
(streams, addresses, slow clients), the same rates and waits. Prints a table of figures with
PASS/MISS per target; the process's exit status is 0 either way. Kills what it started and
deletes its keys.

``--baseline REV`` (a git revision): every scenario twice, on this checkout's code and on REV's,
one after the other, the order alternating from one scenario to the next (a busy machine's drift
falls on both); REV is checked out into a temporary git worktree and served as ``bench/api.py
--baseline`` serves it (REV's command line, the worktree its working directory and first on
PYTHONPATH, the ``service`` package each server imported printed). Then one table: each figure
on both codes side by side, with both verdicts.

    python bench/streams.py --baseline 32583ce --quick
"""

from __future__ import annotations

import argparse
import asyncio
import multiprocessing
import os
import re
import select
import shutil
import socket
import sys
import tempfile
import threading
import time
import uuid
from dataclasses import dataclass, field
from multiprocessing.connection import Connection
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))

from api import (  # noqa: E402  (bench/api.py: servers, addresses, games, the open loop)
    API_APP,
    SSE_ANCHOR_APP,
    Addresses,
    Code,
    Server,
    _cpu_seconds,
    _open_loop,
    command_work,
    create_game,
    free_port,
    host_env,
    open_loop_jobs,
    pct,
    prepare,
    purge,
    raw_request,
    request,
    rss_bytes,
    run_queue_seconds,
    side_by_side,
    start_command,
    stop,
    summarize,
    worker_pids,
)

HEAD_TIMEOUT = 5.0  # rfg run's --head-timeout (api_command's default)
KEEPALIVE = 15.0  # the app's SSE_KEEPALIVE_SECONDS
PER_ADDRESS = 4  # streams per address: the cap without a token (and per token)
SLOW_INTERVAL = 4.0  # seconds between the bytes of a slow client's head
FIRST_EVENT_WITHIN = 40.0
WARM_UP = 3.0  # seconds of commands on a fresh server before any is counted
REQUEST_TIMEOUT = 10.0  # an open-loop request not answered by then fails (bounds a phase)
SLOW_HEAD = (
    b"GET /healthz HTTP/1.1\r\nHost: slow.example\r\nUser-Agent: slow-bench\r\nX-Padding: "
    + b"x" * 200
    + b"\r\n\r\n"
)


# --- the client process: event streams and slow clients (asyncio) -----------------------------


@dataclass
class StreamRec:
    """What one event stream saw; times from ``time.monotonic()`` (one clock for all processes)."""

    start: float = 0.0
    status: int = 0
    error: str = ""
    retry_at: float | None = None  # ``retry: 2000``, the first thing a stream sends
    event_at: float | None = None  # the first event (``data:``)
    events: int = 0
    keepalives: int = 0
    eof_at: float | None = None


@dataclass
class SlowStats:
    connects: int = 0
    connect_errors: int = 0
    dropped: int = 0  # the server hung up before the head was complete
    answered: int = 0  # the server answered something (it should not)
    open_now: int = 0
    lifetimes: list[float] = field(default_factory=list)
    samples: list[tuple[float, int]] = field(default_factory=list)  # (time, connections open)


class Holder:
    """Holds event streams and slow clients open on one asyncio loop; the parent drives it over a
    pipe: ``("slow", addresses)``, ``("open", concurrency)``, ``("report",)``, ``("stop",)``."""

    def __init__(self, port: int, streams: list[tuple[str, str, str | None]]) -> None:
        self.port = port
        self.specs = streams
        self.recs = [StreamRec() for _ in streams]
        self.slow = SlowStats()
        self.tasks: set[asyncio.Task[None]] = set()
        self.writers: set[asyncio.StreamWriter] = set()
        self.stopping = False
        self.opened_all_at: float | None = None

    def spawn(self, coro: Any) -> None:
        task = asyncio.get_running_loop().create_task(coro)
        self.tasks.add(task)
        task.add_done_callback(self.tasks.discard)

    async def connect(self, source: str) -> tuple[asyncio.StreamReader, asyncio.StreamWriter]:
        reader, writer = await asyncio.open_connection(
            "127.0.0.1", self.port, local_addr=(source, 0)
        )
        self.writers.add(writer)
        return reader, writer

    def close(self, writer: asyncio.StreamWriter) -> None:
        self.writers.discard(writer)
        writer.close()

    # event streams
    async def open_all(self, concurrency: int) -> None:
        gate = asyncio.Semaphore(concurrency or len(self.specs))
        opened = [asyncio.get_running_loop().create_future() for _ in self.specs]
        for i, spec in enumerate(self.specs):
            await gate.acquire()
            self.spawn(self.stream(i, spec, gate, opened[i]))
        await asyncio.gather(*opened)
        self.opened_all_at = time.monotonic()

    async def stream(
        self,
        i: int,
        spec: tuple[str, str, str | None],
        gate: asyncio.Semaphore,
        opened: asyncio.Future[None],
    ) -> None:
        source, path, token = spec
        rec = self.recs[i]
        rec.start = time.monotonic()
        auth = f"Authorization: Bearer {token}\r\n" if token else ""
        head = f"GET {path} HTTP/1.1\r\nHost: 127.0.0.1\r\nAccept: text/event-stream\r\n{auth}\r\n"
        writer = None
        released = False
        try:
            reader, writer = await self.connect(source)
            writer.write(head.encode())
            got = await reader.readuntil(b"\r\n\r\n")
            rec.status = int(got[9:12])
            if rec.status != 200:
                return
            gate.release()
            released = True
            opened.set_result(None)
            tail = b""
            while True:
                data = await reader.read(65536)
                now = time.monotonic()
                if not data:
                    rec.eof_at = now
                    return
                buf = tail + data
                events = buf.count(b"\ndata: ") - tail.count(b"\ndata: ")
                keepalives = buf.count(b": keep-alive") - tail.count(b": keep-alive")
                if rec.retry_at is None and b"retry:" in buf:
                    rec.retry_at = now
                if events:
                    rec.events += events
                    if rec.event_at is None:
                        rec.event_at = now
                rec.keepalives += keepalives
                tail = buf[-32:]
        except (OSError, asyncio.IncompleteReadError, asyncio.LimitOverrunError) as exc:
            rec.error = rec.error or type(exc).__name__
        except asyncio.CancelledError:
            pass
        finally:
            if not released:
                gate.release()
            if not opened.done():
                opened.set_result(None)
            if writer is not None:
                self.close(writer)

    # slow clients
    async def slow_client(self, source: str, delay: float) -> None:
        s = self.slow
        await asyncio.sleep(delay)
        while not self.stopping:
            try:
                reader, writer = await self.connect(source)
            except OSError:
                s.connect_errors += 1
                await asyncio.sleep(1.0)
                continue
            s.connects += 1
            s.open_now += 1
            since = time.monotonic()
            try:
                for i in range(len(SLOW_HEAD)):
                    writer.write(SLOW_HEAD[i : i + 1])
                    try:
                        data = await asyncio.wait_for(reader.read(4096), SLOW_INTERVAL)
                    except TimeoutError:
                        continue
                    if data:
                        s.answered += 1
                    else:
                        s.dropped += 1
                        s.lifetimes.append(time.monotonic() - since)
                    break
            except OSError:
                s.dropped += 1
                s.lifetimes.append(time.monotonic() - since)
            except asyncio.CancelledError:
                return
            finally:
                s.open_now -= 1
                self.close(writer)

    async def sample(self) -> None:
        while not self.stopping:
            self.slow.samples.append((time.monotonic(), self.slow.open_now))
            await asyncio.sleep(0.5)

    def report(self) -> dict[str, Any]:
        return {
            "recs": self.recs,
            "slow": self.slow,
            "opened_all_at": self.opened_all_at,
            "cpu": time.process_time(),
        }

    async def run(self, conn: Connection) -> None:
        loop = asyncio.get_running_loop()
        done = loop.create_future()

        def on_message() -> None:
            msg = conn.recv()
            if msg[0] == "slow":
                addresses = msg[1]
                for k, source in enumerate(addresses):
                    self.spawn(self.slow_client(source, SLOW_INTERVAL * k / len(addresses)))
                self.spawn(self.sample())
            elif msg[0] == "open":
                self.spawn(self.open_all(msg[1]))
            elif msg[0] == "report":
                conn.send(self.report())
            elif msg[0] == "stop":
                self.stopping = True
                conn.send(self.report())
                done.set_result(None)

        loop.add_reader(conn.fileno(), on_message)
        await done
        loop.remove_reader(conn.fileno())
        for task in list(self.tasks):
            task.cancel()
        for writer in list(self.writers):
            writer.close()
        await asyncio.sleep(0.2)


def holder_main(conn: Connection, port: int, streams: list[tuple[str, str, str | None]]) -> None:
    asyncio.run(Holder(port, streams).run(conn))


class HolderProcess:
    """The holder in a process of its own (forked before the parent starts any thread)."""

    def __init__(self, port: int, streams: list[tuple[str, str, str | None]]) -> None:
        ctx = multiprocessing.get_context("fork")
        self.conn, child = ctx.Pipe()
        self.proc = ctx.Process(target=holder_main, args=(child, port, streams), daemon=True)
        self.proc.start()
        child.close()

    def ask(self, *msg: Any, timeout: float = 30.0) -> dict[str, Any] | None:
        self.conn.send(msg)
        if msg[0] not in ("report", "stop"):
            return None
        if not self.conn.poll(timeout):
            raise RuntimeError(f"the client process did not answer {msg[0]!r} in {timeout:g} s")
        got: dict[str, Any] = self.conn.recv()
        return got

    def finish(self) -> dict[str, Any] | None:
        got = None
        if self.proc.is_alive():
            try:
                got = self.ask("stop")
            except (OSError, RuntimeError, EOFError):
                pass
        self.proc.join(10)
        if self.proc.is_alive():
            self.proc.kill()
            self.proc.join(5)
        return got


# --- the parent: server, setup, load, figures -------------------------------------------------


class Run:
    """One scenario's server (own key prefix), its addresses, and its figures."""

    def __init__(
        self, args: argparse.Namespace, name: str, addresses: Addresses, code: Code | None = None
    ) -> None:
        self.args, self.name, self.addresses, self.code = args, name, addresses, code
        self.prefix = f"bstream{uuid.uuid4().hex[:6]}{name}"
        self.log_dir = Path(tempfile.mkdtemp(prefix=f"rfg-streams-{name}-"))
        self.port = free_port()
        self.server: Server | None = None
        self.holder: HolderProcess | None = None
        self.rows: list[tuple[str, str, str, str]] = []  # (figure, value, target, verdict)
        self.notes: list[str] = []
        self.count = 0  # event streams
        self.view_game = ""

    def start(self) -> None:
        env = host_env(self.args.url, self.prefix)
        self.server = start_command(API_APP, self.port, env, self.log_dir, 2, code=self.code)
        if self.code is not None:
            self.notes.append(self.code.served(self.server))

    def workers(self) -> list[int]:
        assert self.server is not None
        return worker_pids(self.server)

    def stream_games(self, games: int, seat_holders: int) -> list[tuple[str, str, str | None]]:
        """``games`` idle 4-player games (each created and claimed from an address of its own);
        the streams: 4 seat streams for each of ``seat_holders`` seats, with the seat's token,
        from an address of their own, then 4 public streams per address, up to ``self.count``."""
        specs: list[tuple[str, str, str | None]] = []
        gids = []
        for g in range(games):
            claimer = self.addresses.one()
            gid, tokens = create_game(self.port, 4, f"streams:{self.prefix}:{g}", claimer)
            gids.append((gid, tokens))
        seats = [(gid, seat, tok) for gid, tokens in gids for seat, tok in tokens.items()]
        for gid, seat, tok in seats[:seat_holders]:
            source = self.addresses.one()
            path = f"/games/{gid}/seats/{seat}/events/stream"
            specs += [(source, path, tok)] * PER_ADDRESS
        k = 0
        while len(specs) < self.count:
            source = self.addresses.one()
            for _ in range(min(PER_ADDRESS, self.count - len(specs))):
                gid = gids[k % len(gids)][0]
                specs.append((source, f"/games/{gid}/events/stream", None))
                k += 1
        self.view_game = gids[0][0]
        return specs

    def row(self, figure: str, value: str, target: str = "", ok: bool | None = None) -> None:
        verdict = "" if ok is None else ("PASS" if ok else "MISS")
        self.rows.append((figure, value, target, verdict))

    def close(self) -> None:
        if self.holder is not None:
            self.holder.finish()
        if self.server is not None:
            stop(self.server)
        purge(self.args.url, self.prefix)
        if not self.args.keep_logs:
            shutil.rmtree(self.log_dir, ignore_errors=True)


@dataclass
class Phase:
    """What an open-loop phase measured: per job group its figures, the server workers' CPU
    seconds, the client processes' CPU seconds and the wall time."""

    figures: list[dict[str, Any]]
    server_cpu: float
    client_cpu: float
    wall: float
    #: how long the server workers waited for a CPU while runnable (other load on the machine)
    server_wait: float = float("nan")
    #: per job group, its client processes' results (``bench/api.py``'s ``_open_loop``)
    results: list[list[Any]] = field(default_factory=list)

    def cpu_note(self, holder_cpu: float | None = None) -> str:
        holder = "" if holder_cpu is None else f", the streams' process {holder_cpu:.1f} s in all"
        return (
            f"CPU over the {self.wall:.0f} s measured: server workers {self.server_cpu:.1f} s "
            f"({self.server_cpu / self.wall / 2:.0%} of 2 cores), and {self.server_wait:.1f} s "
            f"waiting for a CPU while runnable; clients: open-loop processes "
            f"{self.client_cpu:.1f} s{holder}; load average {_load()}"
        )


def load_phase(
    run: Run,
    groups: list[tuple[str, float, list[Any], int]],
    seconds: float,
    to: tuple[int, list[int]] | None = None,
    start_at: float | None = None,
) -> Phase:
    """Open-loop request groups - (mode, rate, work, client processes); mode a path, ``healthz``
    or ``commands`` - sent together for ``seconds`` by ``bench/api.py``'s ``_open_loop``, one
    client process per job, to ``run``'s server (or ``to``'s: (port, worker pids) of another
    served the same way, the anchor), from ``start_at`` (``time.time()``; half a second from now by default); their
    figures (``summarize``) per group, and each group's results (``Phase.results``)."""
    start_at = time.time() + 0.5 if start_at is None else start_at
    port = run.port if to is None else to[0]
    jobs: list[Any] = []
    spans = []
    for mode, rate, work, processes in groups:
        sources = [] if mode == "commands" else run.addresses.next(max(5, int(rate // 2)))
        got = open_loop_jobs(
            mode, port, rate, start_at, seconds, work, processes, sources, REQUEST_TIMEOUT
        )
        spans.append((len(jobs), len(jobs) + len(got)))
        jobs += got
    pids = run.workers() if to is None else to[1]
    cpu0, wait0 = _cpu_seconds(pids), run_queue_seconds(pids)
    t0 = time.monotonic()
    ctx = multiprocessing.get_context("fork")
    pool = ctx.Pool(len(jobs))
    client_pids = [p.pid for p in pool._pool]  # type: ignore[attr-defined]
    try:
        results = pool.map_async(_open_loop, jobs).get(seconds + 60)
        client_cpu = _cpu_seconds(client_pids)
    finally:
        pool.terminate()
        pool.join()
    wall = time.monotonic() - t0
    cpu1, wait1 = _cpu_seconds(pids), run_queue_seconds(pids)
    return Phase(
        [summarize(results[a:b], seconds) for a, b in spans],
        float("nan") if cpu0 is None or cpu1 is None else cpu1 - cpu0,
        float("nan") if client_cpu is None else client_cpu,
        wall,
        float("nan") if wait0 is None or wait1 is None else wait1 - wait0,
        [results[a:b] for a, b in spans],
    )


def streams_stats(recs: list[StreamRec]) -> dict[str, Any]:
    ok = [r for r in recs if r.status == 200]
    refused: dict[int, int] = {}
    for r in recs:
        if r.status and r.status != 200:
            refused[r.status] = refused.get(r.status, 0) + 1
    first = sorted(r.event_at - r.start for r in ok if r.event_at is not None)
    retry = sorted(r.retry_at - r.start for r in ok if r.retry_at is not None)
    return {
        "ok": len(ok),
        "refused": refused,
        "errors": sum(1 for r in recs if r.error and not r.status),
        "closed": sum(1 for r in ok if r.eof_at is not None),
        "first": first,
        "retry": retry,
        "keepalive": sum(1 for r in ok if r.keepalives),
        "keepalives": sum(r.keepalives for r in ok),
    }


def q(values: list[float], p: float) -> float:
    return values[min(len(values) - 1, int(p * len(values)))] if values else float("nan")


def slow_summary(slow: SlowStats, since: float, until: float) -> str:
    held = [n for t, n in slow.samples if since <= t <= until]
    life = sorted(slow.lifetimes)
    return (
        f"slow clients: {min(held, default=0)}-{max(held, default=0)} connected "
        f"(mean {sum(held) / max(1, len(held)):.0f}), {slow.connects} connections, "
        f"{slow.dropped} dropped by the server after {q(life, 0.5):.1f} s median "
        f"(head timeout {HEAD_TIMEOUT:g} s), {slow.answered} answered, "
        f"{slow.connect_errors} failed to connect"
    )


def latency(x: dict[str, Any]) -> str:
    return (
        f"{x['ok']}/{x['sent']} ok, p50 {x['p50_ms']:.1f} ms, p99 {x['p99_ms']:.1f} ms, p99.9 "
        f"{x['p999_ms']:.1f} ms, max {x['max_ms']:.1f} ms, late {x['late']}, errors "
        f"{x['statuses'] or 0}"
    )


def report(run: Run) -> dict[str, Any]:
    assert run.holder is not None
    return report_of(run.holder)


def report_of(holder: HolderProcess) -> dict[str, Any]:
    got = holder.ask("report")
    assert got is not None
    return got


# --- scenarios --------------------------------------------------------------------------------


def scenario_streams(run: Run) -> None:
    a = run.args
    run.count = a.scale(1000)
    n_slow = a.scale(150)
    specs = run.stream_games(5, a.scale(20))
    addresses = len({s[0] for s in specs})
    seat = sum(1 for s in specs if s[2])
    run.holder = HolderProcess(run.port, specs)
    run.holder.ask("slow", run.addresses.next(n_slow))
    time.sleep(HEAD_TIMEOUT + 1)  # every slow client connected, the first ones dropped once
    seconds = 45.0
    view = f"/games/{run.view_game}/view"
    # the streams open 2 s into the probes, all at once
    timer = threading.Timer(2.5, run.holder.ask, args=("open", 0))
    opened = time.monotonic() + 2.5
    timer.start()
    phase = load_phase(run, [(view, 50, [], 1), ("healthz", 10, [], 1)], seconds)
    timer.join()
    rep = report(run)
    st = streams_stats(rep["recs"])
    within = sum(1 for x in st["first"] if x <= FIRST_EVENT_WITHIN)
    share = within / run.count
    run.row(
        f"streams with their first event within {FIRST_EVENT_WITHIN:g} s",
        f"{share:.1%} ({within}/{run.count})",
        ">= 95%",
        share >= 0.95,
    )
    v, h = phase.figures
    run.row(
        "GET /games/{id}/view p99 (50/s, open loop)",
        f"{v['p99_ms']:.1f} ms",
        "< 250 ms",
        v["p99_ms"] < 250 and v["errors"] == 0,
    )
    expected = int(10 * seconds)
    run.row(
        "/healthz probes answered (10/s)",
        f"{h['ok']}/{h['sent']} (p99 {h['p99_ms']:.1f} ms)",
        f"all {expected}",
        h["errors"] == 0 and h["sent"] >= expected - 1,
    )
    run.notes += [
        f"{run.count} streams ({seat} seat streams, {run.count - seat} public) from {addresses} "
        f"addresses on 5 games, opened at once; opened {st['ok']}, refused {st['refused'] or 0}, "
        f"failed {st['errors']}, closed by the server {st['closed']}",
        f"time to first event: p50 {q(st['first'], 0.5):.2f} s, p95 {q(st['first'], 0.95):.2f} s, "
        f"max {q(st['first'], 1.0):.2f} s; to `retry:` p50 {q(st['retry'], 0.5):.2f} s, "
        f"max {q(st['retry'], 1.0):.2f} s",
        f"view probes: {latency(v)}",
        f"healthz probes: {latency(h)}",
        slow_summary(rep["slow"], opened, opened + seconds),
        phase.cpu_note(rep["cpu"]),
    ]


def scenario_many(run: Run) -> None:
    a = run.args
    run.count = a.scale(a.streams)
    specs = run.stream_games(20, a.scale(80))
    addresses = len({s[0] for s in specs})
    seat = sum(1 for s in specs if s[2])
    base_s, seconds = 10.0, 20.0
    work = command_work(
        run.port,
        a.rate,
        WARM_UP + base_s + a.runs * seconds,
        2,
        2,
        f"{run.prefix}:c",
        run.addresses,
    )
    pids = run.workers()
    load_phase(run, [("commands", a.rate, work, 2)], WARM_UP)  # (not counted)
    # the commands alone first, on the same server: the baseline of their latency
    first = load_phase(run, [("commands", a.rate, work, 2)], base_s)
    base = first.figures[0]
    rss0 = rss_bytes(pids)
    run.holder = HolderProcess(run.port, specs)
    cpu0, t_open = _cpu_seconds(pids), time.monotonic()
    run.holder.ask("open", 256)
    deadline = t_open + 75 * max(1, run.count // 5000)
    rep = report(run)
    while rep["opened_all_at"] is None and time.monotonic() < deadline:
        time.sleep(0.5)
        rep = report(run)
    open_s = (rep["opened_all_at"] or time.monotonic()) - t_open
    open_cpu = server_cpu(cpu0, pids)
    rss1 = rss_bytes(pids)
    st = streams_stats(rep["recs"])
    # idle: nothing but the streams for a keep-alive interval and a bit
    cpu0, t_idle, ka0 = _cpu_seconds(pids), time.monotonic(), st["keepalives"]
    time.sleep(KEEPALIVE + 1.5)
    idle_cpu, idle_s = server_cpu(cpu0, pids), time.monotonic() - t_idle
    rep = report(run)
    st = streams_stats(rep["recs"])
    idle_ka = st["keepalives"] - ka0
    # the commands while they are open, ``--runs`` times (a keep-alive wave falls in each)
    phases = [load_phase(run, [("commands", a.rate, work, 2)], seconds) for _ in range(a.runs)]
    rep = report(run)
    rss2 = rss_bytes(pids)
    st = streams_stats(rep["recs"])
    # the streams close (the client process ends); the idle server settles
    run.holder.finish()
    run.holder = None
    time.sleep(a.settle)
    rss3 = rss_bytes(pids)
    run.row(
        f"streams open ({addresses} addresses, caps at their defaults)",
        f"{st['ok']}/{run.count} in {open_s:.1f} s",
        f"all {run.count}",
        st["ok"] == run.count,
    )
    run.row(
        f"streams that got a keep-alive (quiet > {KEEPALIVE:g} s)",
        f"{st['keepalive']}/{run.count}",
        f"all {run.count}",
        st["keepalive"] == run.count,
    )
    per = (rss1 - rss0) / max(1, st["ok"]) if rss0 is not None and rss1 is not None else None
    run.row(
        f"server RSS per stream at {run.count} (after open - before)",
        "-" if per is None else f"{per / 1024:.1f} KiB",
        "<= 20 KiB",
        None if per is None or run.count < 10_000 else per <= 20 * 1024,
    )
    back = rss3 / rss0 - 1 if rss0 and rss3 is not None else None
    run.row(
        f"server RSS {a.settle:g} s after the streams closed, over before",
        "-" if back is None else f"{back:+.0%} ({_mib(rss3)})",
        "<= +25%",
        None if back is None or a.settle < 120 else back <= 0.25,
    )
    p99s = [p.figures[0]["p99_ms"] for p in phases]
    run.row(
        f"command p99 at {a.rate:g}/s while open, {a.runs} runs of {seconds:g} s",
        "/".join(f"{x:.1f}" for x in p99s) + " ms",
        "< 30 ms",
        all(p.figures[0]["p99_ms"] < 30 and p.figures[0]["errors"] == 0 for p in phases),
    )
    run.notes += [
        f"{run.count} streams ({seat} seat streams, {run.count - seat} public) from {addresses} "
        f"addresses on 20 games, 256 opening at a time; refused {st['refused'] or 0}, failed "
        f"{st['errors']}, closed by the server {st['closed']}; first event p50 "
        f"{q(st['first'], 0.5):.2f} s, max {q(st['first'], 1.0):.2f} s",
        f"RSS of the 2 workers: {_mib(rss0)} before, {_mib(rss1)} with the streams open, "
        f"{_mib(rss2)} after the commands, {_mib(rss3)} {a.settle:g} s after the streams closed",
        f"server CPU: opening {open_cpu / max(1, st['ok']) * 1e6:.0f} us per stream; idle "
        f"{idle_s:.0f} s with the streams open: {idle_cpu:.1f} s for {idle_ka} keep-alives "
        f"({idle_cpu / max(1, idle_ka) * 1e6:.0f} us each, {idle_cpu / idle_s / 2:.0%} of 2 cores)",
        f"commands without streams first (same server, {base_s:g} s): {latency(base)}; server "
        f"workers waited {first.server_wait:.1f} s for a CPU",
        *(
            f"commands with the streams open, run {i + 1}: {latency(p.figures[0])}; server "
            f"workers waited {p.server_wait:.1f} s for a CPU"
            for i, p in enumerate(phases)
        ),
        phases[-1].cpu_note(rep["cpu"]),
    ]


def scenario_slow(run: Run) -> None:
    a = run.args
    n_slow = a.scale(1000)
    base_s, seconds = 10.0, 20.0
    work = command_work(
        run.port, a.rate, WARM_UP + base_s + seconds, 2, 2, f"{run.prefix}:c", run.addresses
    )
    groups: list[tuple[str, float, list[Any], int]] = [
        ("commands", a.rate, work, 2),
        ("healthz", 20, [], 1),
    ]
    load_phase(run, groups, WARM_UP)  # (not counted)
    first = load_phase(run, groups, base_s)
    base = first.figures
    pids = run.workers()
    run.holder = HolderProcess(run.port, [])
    cpu0, t_slow = _cpu_seconds(pids), time.monotonic()
    run.holder.ask("slow", run.addresses.next(n_slow))
    time.sleep(HEAD_TIMEOUT + 1)
    alone_cpu, alone_s = server_cpu(cpu0, pids), time.monotonic() - t_slow
    t0 = time.monotonic()
    phase = load_phase(run, groups, seconds)
    rep = report(run)
    c, h = phase.figures
    run.row(
        f"/healthz p99 (20/s) with {n_slow} slow clients",
        f"{h['p99_ms']:.1f} ms",
        "< 100 ms",
        h["p99_ms"] < 100 and h["errors"] == 0,
    )
    run.row(
        f"command p99 ({a.rate:g}/s) with {n_slow} slow clients",
        f"{c['p99_ms']:.1f} ms",
        "< 100 ms",
        c["p99_ms"] < 100 and c["errors"] == 0,
    )
    run.notes += [
        slow_summary(rep["slow"], t0, t0 + phase.wall),
        f"server CPU with the slow clients alone ({alone_s:.0f} s): {alone_cpu:.1f} s "
        f"({alone_cpu / alone_s / 2:.0%} of 2 cores)",
        f"without slow clients first (same server, {base_s:g} s): commands p99 "
        f"{base[0]['p99_ms']:.1f} ms, healthz p99 {base[1]['p99_ms']:.1f} ms; server workers "
        f"waited {first.server_wait:.1f} s for a CPU",
        f"healthz: {latency(h)}",
        f"commands: {latency(c)}",
        phase.cpu_note(rep["cpu"]),
    ]


# --- crowd: one game, many spectators -----------------------------------------------------------

CROWD_COMMANDS = 20  # commands sent to the followed game, one every CROWD_GAP s
CROWD_GAP = 0.3
CROWD_CLIENTS = 2  # client processes holding the streams
_ID = re.compile(rb"id: ([0-9]+)\n")


def crowd_client(conn: Connection, port: int, specs: list[tuple[str, str]]) -> None:
    """A client process of ``crowd``: opens its streams (source address, path) and notes when
    each first sees each ``id: N`` (raw sockets on one epoll: as little client work per frame as
    Python allows, since the client shares the CPUs with the server)."""
    ep = select.epoll()
    socks: dict[int, tuple[int, socket.socket]] = {}
    seen: list[dict[int, float]] = [{} for _ in specs]
    tails = [b""] * len(specs)
    status = [0] * len(specs)
    for i, (source, path) in enumerate(specs):
        s = socket.socket()
        try:
            s.bind((source, 0))
            s.connect(("127.0.0.1", port))
            s.sendall(
                f"GET {path} HTTP/1.1\r\nHost: x\r\nAccept: text/event-stream\r\n\r\n".encode()
            )
        except OSError:
            s.close()
            continue
        s.setblocking(False)
        socks[s.fileno()] = (i, s)
        ep.register(s.fileno(), select.EPOLLIN)
    ep.register(conn.fileno(), select.EPOLLIN)
    while True:
        for fd, _ in ep.poll(1.0):
            if fd == conn.fileno():
                if conn.recv() == "opened":  # how many streams have their response head
                    conn.send(sum(1 for st in status if st))
                    continue
                conn.send({"seen": seen, "status": status, "cpu": time.process_time()})
                return
            i, s = socks[fd]
            try:
                data = s.recv(262144)
            except OSError:
                data = b""
            now = time.monotonic()
            if not data:
                ep.unregister(fd)
                continue
            if not status[i]:
                status[i] = int(data[9:12]) if data.startswith(b"HTTP/1.1 ") else -1
            buf = tails[i] + data
            for m in _ID.finditer(buf):
                seen[i].setdefault(int(m.group(1)), now)
            tails[i] = buf[-24:]


def _crowd_phase(
    port: int, specs: list[tuple[str, str]], send: Any, pids: list[int]
) -> dict[str, Any]:
    """Open ``specs`` in ``CROWD_CLIENTS`` client processes, wait until every stream has its
    response head (60 s at most) and 2 s more, then ``send(k)`` each command (-> the monotonic
    time of its 201 and the first id it made) and gather the arrivals and the CPU the server
    (its processes ``pids``) spent meanwhile."""
    ctx = multiprocessing.get_context("fork")
    procs, conns = [], []
    for k in range(CROWD_CLIENTS):
        parent, child = ctx.Pipe()
        proc = ctx.Process(target=crowd_client, args=(child, port, specs[k::CROWD_CLIENTS]))
        proc.start()
        procs.append(proc)
        conns.append(parent)
    deadline = time.monotonic() + 60
    while time.monotonic() < deadline:
        opened = 0
        for conn in conns:
            conn.send("opened")
            opened += conn.recv() if conn.poll(30) else 0
        if opened >= len(specs):
            break
        time.sleep(0.5)
    time.sleep(2.0)
    sent = []
    cpu0 = _cpu_seconds(pids)
    for k in range(CROWD_COMMANDS):
        sent.append(send(k))
        time.sleep(CROWD_GAP)
    time.sleep(2.0)
    cpu = server_cpu(cpu0, pids)
    seen: list[dict[int, float]] = []
    statuses: list[int] = []
    for conn in conns:
        conn.send("report")
        got = conn.recv() if conn.poll(60) else {"seen": [], "status": []}
        seen += got["seen"]
        statuses += got["status"]
    for proc in procs:
        proc.join(5)
        if proc.is_alive():
            proc.kill()
    lat, missing = [], 0
    for at, ident in sent:
        for stream in seen:
            if ident in stream:
                lat.append(max(0.0, stream[ident] - at))
            else:
                missing += 1
    return {
        "opened": sum(1 for st in statuses if st == 200),
        "lat": sorted(lat),
        "missing": missing,
        "cpu": cpu,
    }


def scenario_crowd(run: Run) -> None:
    """``--spectators`` public streams on one game (each count on a fresh set of streams); a
    command every 0.3 s to that game; per stream and command, how long after the command's 201
    its first event arrived. Beside it the anchor (``bench.api:sse_anchor_app``) served the same
    way, its publishes in place of the commands, in the same run."""
    args = run.args
    assert run.server is not None
    env = host_env(args.url, run.prefix)
    anchor_port = free_port()
    anchor = start_command(SSE_ANCHOR_APP, anchor_port, env, run.log_dir, 2, name="anchor")
    try:
        for n in [int(x) for x in args.spectators.split(",")]:
            n = args.scale(n)
            game = prepare(run.port, 2, 1, f"crowd{n}{run.prefix}", run.addresses)[0]
            gid = game[0][0].split(b" ")[1].split(b"/")[2].decode()
            m = re.search(rb'"expected_version": ?([0-9]+)', game[0][0])
            base = int(m.group(1)) if m else 0
            sources = run.addresses.next((n + PER_ADDRESS - 1) // PER_ADDRESS)
            specs = [(sources[i // PER_ADDRESS], f"/games/{gid}/events/stream") for i in range(n)]

            def command(k: int, game: Any = game, base: int = base) -> tuple[float, int]:
                payload, _, source = game[k]
                status, _ = raw_request(run.port, payload, source)
                at = time.monotonic()
                assert status == 201, f"command {k}: {status}"
                prev = base if k == 0 else game[k - 1][1]
                return at, prev + 1

            def publish(k: int) -> tuple[float, int]:
                status, _ = request(anchor_port, "POST", f"/publish?id={k + 1}")
                assert status == 201
                return time.monotonic(), k + 1

            anchor_specs = [(source, "/stream") for source, _ in specs]
            for label, port, send, follow, pids in (
                ("rfg", run.port, command, specs, run.workers()),
                ("anchor", anchor_port, publish, anchor_specs, worker_pids(anchor)),
            ):
                got = _crowd_phase(port, follow, send, pids)
                lat = got["lat"]
                run.row(
                    f"{n} spectators, {label}: arrival after 201 p50/p99/max",
                    f"{q(lat, 0.5) * 1e3:.0f}/{q(lat, 0.99) * 1e3:.0f}/{lat[-1] * 1e3:.0f} ms"
                    if lat
                    else "-",
                    "p99 < " + ("30" if n <= 500 else "100") + " ms" if label == "rfg" else "",
                    (q(lat, 0.99) < (0.03 if n <= 500 else 0.1))
                    if label == "rfg" and lat
                    else None,
                )
                delivered = CROWD_COMMANDS * n - got["missing"]
                run.row(
                    f"{n} spectators, {label}: server CPU per command and stream",
                    f"{got['cpu'] / max(1, delivered) * 1e6:.0f} us",
                )
                run.notes.append(
                    f"{n} spectators on {label}: {got['opened']} opened, "
                    f"{got['missing']} events missing of {CROWD_COMMANDS * n}; server workers' "
                    f"CPU {got['cpu']:.1f} s over the commands; load {_load()}"
                )
    finally:
        stop(anchor)


# --- openings: a crowd of streams opened at once -------------------------------------------------

OPENINGS_VIEW_RATE = 50.0  # GET of a view per second (open loop) while the streams open
OPENINGS_HEALTHZ_RATE = 20.0  # GET /healthz per second (open loop)
OPENINGS_ALONE = 3.0  # seconds of the probes alone before the streams open (their own CPU)
OPENINGS_SECONDS = 25.0  # the probes' phase: alone, then the opening, then the streams open
OPENINGS_SETTLE = 1.0  # seconds after the last response head still counted (first events)


def _open_crowd(
    holder: HolderProcess, pids: list[int], start_at: float, out: dict[str, Any]
) -> None:
    """One side of ``openings``, beside its probes (a thread): the server's CPU over
    ``OPENINGS_ALONE`` s of probes alone, then every stream of ``holder`` opened at once; the CPU
    until every one has its response head (or failed) and ``OPENINGS_SETTLE`` s more, and when
    the opening began and ended (``time.time()``)."""
    time.sleep(max(0.0, start_at + 0.5 - time.time()))  # the probes under way
    cpu0, t0 = _cpu_seconds(pids), time.monotonic()
    time.sleep(OPENINGS_ALONE - 0.5)
    cpu1, t1, wall1 = _cpu_seconds(pids), time.monotonic(), time.time()
    holder.ask("open", 0)
    deadline = t1 + OPENINGS_SECONDS - OPENINGS_ALONE - OPENINGS_SETTLE - 1
    rep = report_of(holder)
    while rep["opened_all_at"] is None and time.monotonic() < deadline:
        time.sleep(0.1)
        rep = report_of(holder)
    opened_at = rep["opened_all_at"] or time.monotonic()
    time.sleep(OPENINGS_SETTLE)
    cpu2, t2 = _cpu_seconds(pids), time.monotonic()
    alone = float("nan") if cpu0 is None or cpu1 is None else (cpu1 - cpu0) / (t1 - t0)
    out.update(
        began=wall1,
        ended=wall1 + (opened_at - t1),
        all_opened=rep["opened_all_at"] is not None,
        # the probes' own share (their CPU per second alone) taken off
        cpu=float("nan") if cpu1 is None or cpu2 is None else cpu2 - cpu1 - alone * (t2 - t1),
        probes_cpu=alone,
    )


def _during(results: list[Any], began: float, ended: float) -> dict[str, Any]:
    """The open-loop probes due from ``began`` to ``ended`` (``time.time()``): count, p99, max
    (ms), failures."""
    lat = sorted(
        x for r in results for x, due in zip(r[2], r[5], strict=True) if began <= due <= ended
    )
    return {"sent": len(lat), "p99_ms": pct(lat, 0.99), "max_ms": lat[-1] * 1e3 if lat else 0.0}


def scenario_openings(run: Run) -> None:
    """``--scenario openings``: described in the module's docstring."""
    args = run.args
    run.count = args.scale(5000)
    specs = run.stream_games(5, 0)
    addresses = len({s[0] for s in specs})
    anchor_specs: list[tuple[str, str, str | None]] = [(s[0], "/stream", None) for s in specs]
    env = host_env(args.url, run.prefix)
    anchor_port = free_port()
    anchor = start_command(SSE_ANCHOR_APP, anchor_port, env, run.log_dir, 2, name="anchor")
    try:
        sides = (
            ("rfg", run.port, run.workers(), specs, f"/games/{run.view_game}/view"),
            ("anchor", anchor_port, worker_pids(anchor), anchor_specs, "/view"),
        )
        per: dict[str, float] = {}
        for label, port, pids, follow, view in sides:
            holder = HolderProcess(port, follow)
            try:
                start_at, out = time.time() + 0.5, dict[str, Any]()
                driver = threading.Thread(target=_open_crowd, args=(holder, pids, start_at, out))
                driver.start()
                groups: list[tuple[str, float, list[Any], int]] = [
                    (view, OPENINGS_VIEW_RATE, [], 1),
                    ("healthz", OPENINGS_HEALTHZ_RATE, [], 1),
                ]
                phase = load_phase(run, groups, OPENINGS_SECONDS, (port, pids), start_at)
                driver.join()
                st = streams_stats(report_of(holder)["recs"])
            finally:
                holder.finish()
            took = out["ended"] - out["began"]
            v, h = (_during(r, out["began"], out["ended"]) for r in phase.results)
            target = "< 250 ms" if label == "rfg" else ""
            for name, x, whole in (
                ("view", v, phase.figures[0]),
                ("/healthz", h, phase.figures[1]),
            ):
                run.row(
                    f"{label}: {name} p99 while {run.count} streams open",
                    f"{x['p99_ms']:.1f} ms",
                    target,
                    x["p99_ms"] < 250 and whole["errors"] == 0 if label == "rfg" else None,
                )
            per[label] = out["cpu"] / max(1, st["ok"])
            run.row(f"{label}: server CPU per stream opened", f"{per[label] * 1e6:.0f} us")
            run.notes += [
                f"{label}: {st['ok']}/{run.count} streams opened at once from {addresses} "
                f"addresses in {took:.2f} s{'' if out['all_opened'] else ' (not all in time)'}; "
                f"refused {st['refused'] or 0}, failed {st['errors']}; server CPU "
                f"{out['cpu']:.2f} s for them (the probes' {out['probes_cpu']:.2f} s/s taken off)",
                f"{label}: probes while they opened: view {v['sent']} (max {v['max_ms']:.0f} ms), "
                f"/healthz {h['sent']} (max {h['max_ms']:.0f} ms); over the whole "
                f"{OPENINGS_SECONDS:g} s: view {latency(phase.figures[0])}; /healthz "
                f"{latency(phase.figures[1])}",
                f"{label}: {phase.cpu_note()}",
            ]
        ratio = per["rfg"] / per["anchor"]
        run.row("server CPU per opening, rfg / anchor", f"{ratio:.2f}x", "<= 1.5x", ratio <= 1.5)
    finally:
        stop(anchor)


SCENARIOS = {
    "streams": scenario_streams,
    "many": scenario_many,
    "slow": scenario_slow,
    "crowd": scenario_crowd,
    "openings": scenario_openings,
}


def _mib(n: int | None) -> str:
    return "-" if n is None else f"{n / 2**20:.0f} MiB"


def _load() -> str:
    return " ".join(f"{x:.1f}" for x in os.getloadavg())


def server_cpu(before: float | None, pids: list[int]) -> float:
    after = _cpu_seconds(pids)
    return (after - before) if before is not None and after is not None else float("nan")


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--scenario", choices=[*SCENARIOS, "all"], default="all")
    ap.add_argument("--quick", action="store_true", help="a fifth of the counts")
    ap.add_argument("--url", default="redis://127.0.0.1:6379/13", help="the store (real Redis)")
    ap.add_argument("--rate", type=float, default=300.0, help="commands per second (open loop)")
    ap.add_argument(
        "--spectators", default="500,5000", help="crowd: the counts of spectators, one by one"
    )
    ap.add_argument(
        "--streams", type=int, default=5000, help="many: the count of streams (target: 10000)"
    )
    ap.add_argument(
        "--runs", type=int, default=5, help="many: command phases with the streams open"
    )
    ap.add_argument(
        "--settle",
        type=float,
        default=120.0,
        help="many: seconds after the streams close before the RSS is read again (target: 120)",
    )
    ap.add_argument("--keep-logs", action="store_true", help="keep the servers' logs")
    ap.add_argument(
        "--baseline",
        metavar="REV",
        help="run each scenario on this git revision's code too (a temporary worktree), the "
        "order alternating, and print both figures side by side",
    )
    args = ap.parse_args()
    args.scale = (lambda n: max(1, n // 5)) if args.quick else (lambda n: n)
    names = list(SCENARIOS) if args.scenario == "all" else [args.scenario]
    print(
        f"bench/streams.py {time.strftime('%Y-%m-%d %H:%M:%S')}: {', '.join(names)}"
        f"{' (quick)' if args.quick else ''}; server rfgcli.run.api_command (gevent, 2 workers, "
        f"limits at their defaults, access log, RFG_DISPATCH=1) on {args.url}; cpus "
        f"{os.cpu_count()}, load {' '.join(f'{x:.1f}' for x in os.getloadavg())}",
        flush=True,
    )
    addresses = Addresses()
    if args.baseline:
        side_by_side_main(args, names, addresses)
        return
    runs = [run_scenario(args, name, addresses) for name in names]
    print(f"\n{'scenario':10}{'figure':58}{'value':>26}  {'target':>10}  verdict")
    for run in runs:
        for figure, value, target, verdict in run.rows:
            print(f"{run.name:10}{figure:58}{value:>26}  {target:>10}  {verdict}")


def run_scenario(
    args: argparse.Namespace, name: str, addresses: Addresses, code: Code | None = None
) -> Run:
    """One scenario on a server of its own (``code``'s with ``--baseline``); prints its notes."""
    run = Run(args, name, addresses, code)
    started = time.monotonic()
    try:
        run.start()
        SCENARIOS[name](run)
    except Exception as exc:  # noqa: BLE001 - report it and go on with the next scenario
        run.row("scenario failed", f"{type(exc).__name__}: {exc}", "", False)
    finally:
        run.close()
    took = time.monotonic() - started
    on = "" if code is None else f" on the {code.label} code"
    print(f"\n== {name}{on} ({took:.0f} s)", flush=True)
    for note in run.notes:
        print(f"  {note}")
    if args.keep_logs:
        print(f"  server log: {run.log_dir}")
    return run


def side_by_side_main(args: argparse.Namespace, names: list[str], addresses: Addresses) -> None:
    """``--baseline REV``: each scenario on the current code and on ``REV``'s (a temporary git
    worktree), one after the other, the order alternating from scenario to scenario; one table
    of both figures."""
    pairs = []
    with side_by_side(args.baseline) as codes:
        for i, name in enumerate(names):
            order = codes if i % 2 == 0 else codes[::-1]
            runs = {code.label: run_scenario(args, name, addresses, code) for code in order}
            pairs.append((name, runs["current"], runs["baseline"]))
    print(
        f"\n{'scenario':10}{'figure':58}{'current':>26}{'baseline ' + args.baseline:>26}  "
        f"{'target':>10}  verdicts"
    )
    for name, cur, base in pairs:
        theirs = {row[0]: row for row in base.rows}
        figures = [row[0] for row in cur.rows]
        figures += [f for f in theirs if f not in figures]
        mine = {row[0]: row for row in cur.rows}
        for figure in figures:
            a, b = mine.get(figure), theirs.get(figure)
            target = (a or b or ("", "", "", ""))[2]
            verdicts = f"{a[3] if a else '-'} / {b[3] if b else '-'}".strip(" /")
            print(
                f"{name:10}{figure:58}{a[1] if a else '-':>26}{b[1] if b else '-':>26}  "
                f"{target:>10}  {verdicts}"
            )


if __name__ == "__main__":
    main()
