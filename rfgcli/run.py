"""``rfg run``: the whole server in the foreground - the store, the API under gunicorn and the
bot/timeout workers - supervised, and stopped together (``make run`` calls it).

* the store: the embedded server in ``./run/redis`` (started first if it is not running), or the
  Redis at ``$RFG_STORE_URL`` / ``$REDIS_URL``;
* the API: gunicorn's ``gevent`` worker (``--workers`` processes, each holding up to
  ``--connections`` connections: an idle, streaming or slow client costs a greenlet, not a
  thread; a request head not received within ``--head-timeout`` seconds is dropped) with
  ``service.gunicorn_conf`` (JSON logs, metrics), commands dispatching bot turns at once
  (``RFG_DISPATCH=1``), Prometheus multiprocess files in ``--metrics-dir`` (emptied at start);
  ``api_command`` is that command line (the tests and ``bench/`` run the same);
* ``--bot-workers`` ``rfg worker`` processes; one that exits (a crash, a kill, Redis gone for
  longer than it waits) is started again after 1 s, then 2, 4 ... up to 30 s while it keeps
  failing within a minute of its start.

Ctrl-C (SIGINT), SIGTERM or SIGHUP stops everything this command started: the API and the
workers (SIGTERM: running jobs and requests end first, SIGKILL after ``--grace`` seconds), then
the embedded server if this command started it (its data stay in ./run/redis; ``make clean``
removes them). An embedded server that was already running is left running, and the last line
says how to stop it (``rfg store stop``). A second Ctrl-C kills at once. If the API exits by
itself, the rest is stopped and its exit status returned.
"""

from __future__ import annotations

import argparse
import os
import shutil
import signal
import subprocess
import sys
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

#: connections one API process holds (each costs a greenlet and buffers, some tens of KB)
DEFAULT_CONNECTIONS = 10_000
#: seconds to send a request head (gunicorn's ``--keep-alive``: under the gevent worker it bounds
#: the wait for every request's head, the first included)
DEFAULT_HEAD_TIMEOUT = 5.0
RESTART_MAX_DELAY = 30.0
HEALTHY_AFTER = 60.0  # a worker that ran this long has its restart delay reset


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
        help="seconds the API and workers get to stop before they are killed (default 15)",
    )
    p.set_defaults(func=run)


def say(msg: str) -> None:
    print(f"rfg run: {msg}", file=sys.stderr, flush=True)


@dataclass
class Child:
    name: str
    cmd: list[str]
    env: dict[str, str]
    proc: subprocess.Popen[bytes] | None = None
    started: float = 0.0
    failures: int = 0
    restart_at: float = 0.0
    pids: list[int] = field(default_factory=list)

    def start(self) -> None:
        # its own process group: Ctrl-C reaches this supervisor only, which stops the children
        # in order, and a signal to the group also reaches what the child started
        self.proc = subprocess.Popen(self.cmd, env=self.env, start_new_session=True)
        self.started = time.monotonic()
        self.pids.append(self.proc.pid)
        say(f"{self.name} started (pid {self.proc.pid})")

    def signal(self, sig: int) -> None:
        if self.proc is not None and self.proc.poll() is None:
            try:
                os.killpg(self.proc.pid, sig)
            except ProcessLookupError:
                pass

    def alive(self) -> bool:
        return self.proc is not None and self.proc.poll() is None


class Supervisor:
    def __init__(self, api: Child, workers: list[Child], grace: float) -> None:
        self.api = api
        self.workers = workers
        self.grace = grace
        self.stopping = 0  # signals received

    def on_signal(self, signum: int, _frame: Any) -> None:
        self.stopping += 1
        if self.stopping == 1:
            say(f"{signal.Signals(signum).name}: stopping (Ctrl-C again kills at once)")
        else:
            for c in [self.api, *self.workers]:
                c.signal(signal.SIGKILL)

    def watch(self) -> int:
        """Restart workers that exit until a signal comes or the API exits; the exit status."""
        self.api.start()
        for w in self.workers:
            w.start()
        while not self.stopping:
            rc = self.api.proc.poll() if self.api.proc is not None else 1
            if rc is not None:
                say(
                    f"the API (gunicorn, pid {self.api.proc.pid if self.api.proc else '?'}) "
                    f"exited with status {rc}; stopping the rest"
                )
                return rc or 1
            now = time.monotonic()
            for w in self.workers:
                if w.proc is not None and w.proc.poll() is not None:
                    ran = now - w.started
                    w.failures = 1 if ran >= HEALTHY_AFTER else w.failures + 1
                    delay = min(RESTART_MAX_DELAY, 2.0 ** (w.failures - 1))
                    say(
                        f"{w.name} (pid {w.proc.pid}) exited with status {w.proc.returncode} "
                        f"after {ran:.0f}s; restarting it in {delay:.0f}s"
                    )
                    w.proc = None
                    w.restart_at = now + delay
                if w.proc is None and now >= w.restart_at:
                    w.start()
            time.sleep(0.2)
        return 0

    def stop(self) -> None:
        children = [self.api, *self.workers]
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
    from events import environment

    try:  # a bad value stops here, once, rather than in every child
        url = environment.read().store_url
    except ValueError as exc:
        say(str(exc))
        return 2
    store = _store(url)
    if store is None:
        return 2
    embedded, started_store = store
    api, workers = _children(args)
    sup = Supervisor(api, workers, args.grace)
    for sig in (signal.SIGINT, signal.SIGTERM, signal.SIGHUP):
        signal.signal(sig, sup.on_signal)
    say(
        f"API on http://{args.host}:{args.port}/ (contract: /openapi.yaml, metrics: /metrics); "
        f"Ctrl-C stops everything"
    )
    try:
        code = sup.watch()
    finally:
        sup.stop()
        if embedded is not None and started_store:
            embedded.stop()
            say(
                f"stopped the API, {len(workers)} worker(s) and the embedded server "
                f"(data kept in {embedded.data_dir}; make clean removes them)"
            )
        elif embedded is not None:
            say(
                f"stopped the API and {len(workers)} worker(s); the embedded server in "
                f"{embedded.data_dir} was running before and still is: rfg store stop stops it"
            )
        else:
            say(
                f"stopped the API and {len(workers)} worker(s); the Redis at {url} is not ours to stop"
            )
    return code


def _store(url: str | None) -> tuple[Any, bool] | None:
    """The store: the embedded server (started if it is not running) or the Redis at ``url``.

    Returns (the embedded server or None, whether this command started it); None if the
    embedded server could not be started (said why)."""
    import events

    if url and not url.startswith("embedded:"):
        say(f"store: {url}")
        return None, False
    embedded = events.embedded_server(url)
    if embedded.is_running():
        say(
            f"store: the embedded server in {embedded.data_dir} (already running, pid {embedded.pid()})"
        )
        return embedded, False
    try:
        embedded.ensure_running()
    except events.EmbeddedServerError as exc:
        say(str(exc))
        return None
    say(f"store: the embedded server in {embedded.data_dir} (started, pid {embedded.pid()})")
    return embedded, True


def _children(args: argparse.Namespace) -> tuple[Child, list[Child]]:
    """The API under gunicorn (dispatching bot turns at once) and the bot workers."""
    env = dict(os.environ)
    env.setdefault("RFG_DISPATCH", "1")
    env["PROMETHEUS_MULTIPROC_DIR"] = _metrics_dir(args.metrics_dir)
    gunicorn = api_command(
        f"{args.host}:{args.port}",
        workers=args.workers,
        connections=args.connections,
        head_timeout=args.head_timeout,
        grace=args.grace,
    )
    worker_cmd = [sys.executable, "-m", "rfgcli.main", "worker"]
    api = Child("the API (gunicorn)", gunicorn, env)
    workers = [
        Child(f"worker {i + 1}", worker_cmd, dict(os.environ)) for i in range(args.bot_workers)
    ]
    return api, workers


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
