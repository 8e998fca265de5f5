"""API benchmark: commands per second, latency and server CPU per request, next to hello world,
both served as hosts serve them.

    python bench/api.py [--clients 32] [--seconds 10] [--players 2] [--url redis://...]

By default both servers run the command line hosts run, ``rfgcli.run.api_command`` (``python -m
rfgcli.serve``: gunicorn's gevent worker, 2 workers, ``--worker-connections 10000``,
``--keep-alive 5``, ``--config python:service.gunicorn_conf``) on 127.0.0.1, in the environment
``rfg run`` gives the API (``RFG_DISPATCH=1``, ``PROMETHEUS_MULTIPROC_DIR`` an emptied directory
of its own) and with the service's defaults: rate limits on, one JSON access-log line per request
(the servers' output goes to log files in a temp dir, removed afterwards). One is the real API
(``rfgcli.wsgi:create_app()``) on the store (``--url``; default ``$REDIS_URL``, else
redis://127.0.0.1:6379/0 if it answers, else an embedded server in a temp dir) under a fresh key
prefix; the other a one-route hello-world Flask app given as ``app=`` of the same
``api_command``: same server class, same gunicorn configuration. Each run drives one of them with
``--clients`` concurrent clients (threads spread over a few processes, prebuilt requests on raw
sockets, one connection per request) for ``--seconds`` and prints requests per second and
p50/p99 latency.

The rate limits stay on at their defaults, so the clients come from many addresses, as real users
do: every game is played (its seats claimed, its commands sent) from a source address of its own
and every hello-world or /healthz client has one (127.0.0.2, 127.0.0.3, ...: all of 127.0.0.0/8
is loopback, and a client binds its address before it connects).

Two baselines, each round: the bare hello-world app, and ``GET /healthz`` of the API itself - the
same app, request hooks (request id, access log, metrics, limits - health checks are exempt from
them) and gunicorn configuration as the commands, answering a small JSON body without touching
the store. Server CPU per request is user + system time of the gunicorn worker processes (from
/proc) over the requests answered; per command it is reported against both baselines (target:
command <= 3x hello world). The CPU of the local Redis (when the store is one on this machine) is
given apart: it is a cost of a command that hello world does not have, and on a Redis shared with
other work it includes theirs.

The command clients do nothing but submit commands: before the clock starts, every client's
games are created with an admin seed, all seats claimed, and each game's whole command script
(random bot, versions included) computed locally with the engine, which gives the same game the
server plays. Each POST carries its ``expected_version``; the client checks the answer's version.
Prints figures, asserts nothing; the key prefix (and its RQ queue's keys) is deleted afterwards.

``--rate R`` (open loop, as wrk2 does): instead of N clients each waiting for its answer before
the next request, requests are sent on a fixed schedule of R per second in all, whether or not
earlier ones came back, and each latency is counted from the moment the request was due, so
queueing shows in p50/p99/p99.9 rather than in a lower request rate.

    python bench/api.py --rate 300 --seconds 20

The configuration measured before the gevent worker stays available: ``--no-limits``
(``RFG_RATE_LIMITS=0``), ``--no-access-log`` (``RFG_LOG_LEVEL=WARNING``: no access lines are
written), ``--no-dispatch`` (no ``RFG_DISPATCH``), and ``--worker-class sync`` or ``gthread``
(``--threads`` per worker): plain ``gunicorn`` command lines without ``service.gunicorn_conf``
(so without access lines either) and without ``RFG_DISPATCH``, as this script ran them before;
e.g. the old default:

    python bench/api.py --worker-class sync --no-limits --no-access-log

``--routed``: both servers as ``rfg run --routed`` runs them - ``--workers`` servers of one
process each - behind Debian's nginx with ``deploy/nginx.conf`` (which sends each game's requests
to one process, so no command pays a catch-up); the server CPU is still the app processes',
nginx's is printed apart. Side by side with the default, it is what routing saves.

``--baseline REV`` (a git revision: the commit before a change to the command path, say): the API
served twice as above, on this checkout's code and on REV's, on the same store under key prefixes
of their own. REV is checked out into a temporary git worktree (``git worktree add --detach``,
removed afterwards); its server runs REV's own ``rfgcli.run.api_command`` with that worktree as
its working directory and first on PYTHONPATH, and this venv's packages serve both (one lock
file). Each server loads the app through a small module that first writes which ``service``
package it imported; the script prints that line for both and stops if a server runs other code
than meant. After 3 s of commands on each (not counted), every round sends commands to both
servers, one after the other, the order alternating from round to round (a busy machine's drift
falls on both); it prints each round, then both codes' median commands/s, p50/p99, errors and
server and Redis CPU per command, and the median of the rounds' ratios of server CPU per command,
current / baseline (target: at most 1.10). No hello world: the baseline is the other code.

    python bench/api.py --baseline 32583ce --url redis://127.0.0.1:6379/13

``bench/streams.py`` reuses the pieces (servers, source addresses, prepared games, the open loop,
``--baseline``).
"""

from __future__ import annotations

import argparse
import http.client
import json
import math
import multiprocessing
import os
import shutil
import signal
import socket
import statistics
import subprocess
import sys
import tempfile
import threading
import time
import uuid
from collections import Counter
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

import engine  # noqa: E402
from bots import get_bot  # noqa: E402
from engine.rng import Rng  # noqa: E402

ADMIN = "bench-admin"
#: ``--worker-class``: gevent is ``rfgcli.run.api_command`` (what hosts run); the others plain
#: gunicorn command lines (the configuration measured before the gevent worker)
WORKER_CLASSES = ("gevent", "sync", "gthread")
HELLO_APP = "bench.api:hello_app()"
API_APP = "rfgcli.wsgi:create_app()"
SSE_ANCHOR_APP = "bench.api:sse_anchor_app()"
#: the baselines: the bare hello-world app's route, the API's own /healthz (same app and hooks)
HELLO_PATHS = {"hello": "/hello", "healthz": "/healthz"}
Script = list[tuple[int, dict[str, Any], int, int]]  # (seat, command, expected, new version)
#: per command: (the request, the version the answer must carry, the source address to send from)
Prepared = list[tuple[bytes, int, str]]


def hello_app() -> Any:
    """The baseline: one Flask route answering a small JSON body."""
    from flask import Flask, jsonify

    app = Flask("hello")

    @app.get("/hello")
    def hello() -> Any:
        return jsonify(status="ok")

    return app


def sse_anchor_app() -> Any:
    """The anchor of ``bench/streams.py``'s ``crowd``: the least a Flask app does to push one
    Redis stream's entries to many event streams under the same server - one reader per process
    (``XREAD BLOCK``), a condition its streams wait on, and the same bytes written to every one.
    ``POST /publish?id=N`` appends entry N (201 once it is stored); ``GET /stream`` follows;
    ``GET /view`` answers a stored JSON document (one Redis read: what a game's view does at
    least)."""
    import threading

    import redis
    from flask import Flask, Response, request

    app, r = Flask("anchor"), redis.Redis.from_url(os.environ["REDIS_URL"])
    key, cond, latest = (
        os.environ["RFG_STORE_PREFIX"] + ":anchor",
        threading.Condition(),
        [b"$", b""],
    )

    def reader() -> None:
        while True:
            for _, entries in r.xread({key: latest[0]}, block=1000) or []:
                for eid, fields in entries:
                    with cond:
                        latest[:] = [eid, b"id: %s\ndata: {}\n\n" % fields[b"id"]]
                        cond.notify_all()

    threading.Thread(target=reader, daemon=True).start()
    r.set(key + ":view", b'{"status": "playing", "version": 1}')

    @app.get("/healthz")
    def healthz() -> Any:
        return {"status": "ok"}

    @app.get("/view")
    def view() -> Any:
        return Response(r.get(key + ":view"), mimetype="application/json")

    @app.post("/publish")
    def publish() -> Any:
        return {"id": r.xadd(key, {"id": request.args["id"]}).decode()}, 201

    @app.get("/stream")
    def stream() -> Any:
        def events() -> Any:
            yield b"retry: 2000\n\n"
            seen = [latest[0]]
            while True:
                with cond:
                    moved = cond.wait_for(lambda: latest[0] != seen[0], 15)
                    seen[0], frame = latest[0], latest[1] if moved else b": keep-alive\n\n"
                yield frame

        return Response(events(), mimetype="text/event-stream")

    return app


# --- client addresses -------------------------------------------------------------------------


def address(i: int) -> str:
    """The ``i``-th client address: 127.0.0.2 ... 127.0.0.254, 127.0.1.1 ... (every address of
    127.0.0.0/8 is loopback; a client binds one before it connects to appear as another user)."""
    i += 1  # 127.0.0.1 is the default client's
    block, last = divmod(i, 254)
    return f"127.{(block >> 8) & 255}.{block & 255}.{last + 1}"


class Addresses:
    """Hands out client addresses none handed out before has (``next(n)``), so that one run's
    groups of clients - and the rounds of a run - never share an address's limits."""

    def __init__(self, start: int = 0) -> None:
        self.i = start

    def next(self, n: int) -> list[str]:
        out = [address(self.i + k) for k in range(n)]
        self.i += n
        return out

    def one(self) -> str:
        return self.next(1)[0]


#: the addresses of games prepared without an allocator of their own
_ADDRESSES = Addresses(500_000)


# --- servers ----------------------------------------------------------------------------------


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port: int = s.getsockname()[1]
        return port


class Server(subprocess.Popen[bytes]):
    """A gunicorn master started by this script (own session), its output in ``log_path``; or
    with ``--routed`` the nginx in front of the servers in ``members``."""

    log_path: Path
    dirs: list[str]
    members: list[Server]


def host_env(
    store: str,
    prefix: str,
    limits: bool = True,
    access_log: bool = True,
    dispatch: bool = True,
) -> dict[str, str]:
    """The API's environment as ``rfg run`` gives it (``RFG_DISPATCH=1``; the metrics directory
    is added by ``start_command``), on ``store`` under ``prefix``; ``limits`` / ``access_log`` /
    ``dispatch`` False turn them off (the configuration measured before the gevent worker)."""
    env = {
        "REDIS_URL": store,
        "RFG_STORE_URL": store,
        "RFG_STORE_PREFIX": prefix,
        "RFG_ADMIN_TOKEN": ADMIN,
    }
    if dispatch:
        env["RFG_DISPATCH"] = "1"
    if not limits:
        env["RFG_RATE_LIMITS"] = "0"
    if not access_log:
        env["RFG_LOG_LEVEL"] = "WARNING"  # service.access lines are INFO
    return env


def _spawn(
    cmd: list[str], env: dict[str, str], log_dir: Path, name: str, cwd: Path = ROOT
) -> Server:
    log_path = log_dir / f"{name}.log"
    with open(log_path, "wb") as out:
        proc = Server(
            cmd,
            env={**os.environ, **env},
            cwd=cwd,
            stdin=subprocess.DEVNULL,
            stdout=out,
            stderr=subprocess.STDOUT,
            start_new_session=True,
        )
    proc.log_path = log_path
    proc.dirs = []
    proc.members = []
    return proc


# --- the code a server runs (--baseline) -----------------------------------------------------

#: the first word of the line a ``--baseline`` server writes to its log when it loads the app
PROBE_MARK = "rfg-bench-code:"
#: ``--baseline``: the API app as each server loads it, from a module (``PROBE``, in a temp dir
#: on PYTHONPATH after the code's root) that first says which ``service`` package it imported
PROBE_APP = "rfg_bench_probe:create_app()"
PROBE = f'''"""bench/api.py --baseline: rfgcli.wsgi's app, after a line saying which code serves it."""

import sys

import service
from rfgcli.wsgi import create_app as _create_app


def create_app():
    print(f"{PROBE_MARK} service from {{service.__file__}}", file=sys.stderr, flush=True)
    return _create_app()
'''


def _git(root: Path, *args: str) -> str:
    out = subprocess.run(["git", "-C", str(root), *args], capture_output=True, text=True)
    if out.returncode:
        raise SystemExit(f"git {' '.join(args)} failed: {out.stderr.strip()}")
    return out.stdout.strip()


@dataclass
class Code:
    """The code a server runs: a checkout of the project at ``root`` (this one, or a revision in a
    temporary git worktree), started with ``root`` as its working directory and first on
    PYTHONPATH, the probe module's directory after it; this venv's packages serve both."""

    label: str  # "current" or "baseline"
    root: Path
    probe: Path

    @property
    def commit(self) -> str:
        """The short commit id, and whether tracked files differ from it."""
        head = _git(self.root, "rev-parse", "--short", "HEAD")
        dirty = _git(self.root, "status", "--porcelain", "--untracked-files=no")
        return f"{head} with uncommitted changes" if dirty else head

    def env(self) -> dict[str, str]:
        return {"PYTHONPATH": os.pathsep.join([str(self.root), str(self.probe)])}

    def app(self, app: str) -> str:
        """The API app through the probe; any other app as given."""
        return PROBE_APP if app == API_APP else app

    def api_command(self, bind: str, workers: int, app: str) -> list[str]:
        """This code's ``rfgcli.run.api_command`` (asked of a Python process in ``root``)."""
        ask = (
            "import json, sys; from rfgcli.run import api_command; "
            "print(json.dumps(api_command(sys.argv[1], workers=int(sys.argv[2]), app=sys.argv[3])))"
        )
        out = subprocess.run(
            [sys.executable, "-c", ask, bind, str(workers), app],
            cwd=self.root,
            env={**os.environ, **self.env()},
            capture_output=True,
            text=True,
        )
        if out.returncode:
            raise SystemExit(f"{self.label}: rfgcli.run.api_command failed:\n{out.stderr}")
        cmd: list[str] = json.loads(out.stdout)
        return cmd

    def served(self, server: Server) -> str:
        """What the server's log says it imported; SystemExit when it is not this code."""
        deadline = time.monotonic() + 10
        while True:
            lines = server.log_path.read_text(errors="replace").splitlines()
            paths = sorted({x.split(" from ", 1)[1] for x in lines if x.startswith(PROBE_MARK)})
            if paths or time.monotonic() > deadline:
                break
            time.sleep(0.2)
        mine = str(self.root / "service") + os.sep
        if not paths or any(not p.startswith(mine) for p in paths):
            raise SystemExit(
                f"the {self.label} server imported service from {paths or 'nowhere said'}, "
                f"not from {self.root}: its log is {server.log_path}"
            )
        return f"{self.label} ({self.commit}) serves service from {', '.join(paths)}"


@contextmanager
def side_by_side(rev: str) -> Iterator[tuple[Code, Code]]:
    """(this checkout, ``rev`` checked out in a temporary git worktree: ``git worktree add
    --detach``), each with the probe; the worktree is removed afterwards."""
    commit = _git(ROOT, "rev-parse", "--verify", "--quiet", f"{rev}^{{commit}}")
    tmp = Path(tempfile.mkdtemp(prefix="rfg-bench-baseline-"))
    probe, tree = tmp / "probe", tmp / "src"
    probe.mkdir()
    (probe / "rfg_bench_probe.py").write_text(PROBE)
    try:
        _git(ROOT, "worktree", "add", "--detach", str(tree), commit)
        yield Code("current", ROOT, probe), Code("baseline", tree, probe)
    finally:
        subprocess.run(["git", "-C", str(ROOT), "worktree", "remove", "--force", str(tree)])
        shutil.rmtree(tmp, ignore_errors=True)
        subprocess.run(["git", "-C", str(ROOT), "worktree", "prune"])


def start_command(
    app: str,
    port: int,
    env: dict[str, str],
    log_dir: Path,
    workers: int = 2,
    name: str = "api",
    code: Code | None = None,
) -> Server:
    """``app`` served by ``rfgcli.run.api_command`` - the command line hosts run, every other
    argument at ``rfg run``'s defaults - with a Prometheus multiprocess directory of its own;
    with ``code``, that code's command line, app and environment (``--baseline``)."""
    metrics = tempfile.mkdtemp(prefix=f"rfg-bench-metrics-{name}-")
    env = {**env, "PROMETHEUS_MULTIPROC_DIR": metrics}
    if code is None:
        from rfgcli.run import api_command

        cmd = api_command(f"127.0.0.1:{port}", workers=workers, app=app)
        proc = _spawn(cmd, env, log_dir, name)
    else:
        cmd = code.api_command(f"127.0.0.1:{port}", workers, code.app(app))
        proc = _spawn(cmd, {**env, **code.env()}, log_dir, name, cwd=code.root)
    proc.dirs.append(metrics)
    _wait_up(proc, port, app)
    return proc


def start_routed(app: str, env: dict[str, str], log_dir: Path, workers: int, name: str) -> int:
    """``--routed``: ``app`` as ``rfg run --routed`` serves it - ``workers`` servers of one
    process each, on ports of their own - behind Debian's nginx running ``deploy/nginx.conf``
    (its upstream lines for those ports, its listen port and paths swapped for the bench's);
    returns nginx's port and sets ``ROUTED[port]`` to the nginx process (its ``members``: the
    servers)."""
    nginx = shutil.which("nginx") or "/usr/sbin/nginx"
    if not Path(nginx).exists():
        raise SystemExit(
            "--routed runs deploy/nginx.conf: install nginx (apt-get install nginx-light)"
        )
    ports = [free_port() for _ in range(workers)]
    members = []
    try:
        for i, port in enumerate(ports):
            members.append(start_command(app, port, env, log_dir, 1, f"{name}{i}"))
        text = (ROOT / "deploy" / "nginx.conf").read_text()
        listen = free_port()
        upstream = "".join(f"        server 127.0.0.1:{port};\n" for port in ports)
        text = text.replace(
            "        server 127.0.0.1:8000;\n        server 127.0.0.1:8001;\n", upstream
        )
        text = text.replace("listen 8080;", f"listen 127.0.0.1:{listen};")
        text = text.replace("pid /run/nginx-rfg.pid;", f"pid {log_dir}/{name}-nginx.pid;")
        text = text.replace(
            "error_log /var/log/nginx/rfg-error.log warn;",
            f"error_log {log_dir}/{name}-nginx.err warn;",
        )
        conf = log_dir / f"{name}-nginx.conf"
        conf.write_text(text)
        proxy = _spawn(
            [nginx, "-p", str(log_dir), "-c", str(conf), "-g", "daemon off;"],
            {},
            log_dir,
            f"{name}-nginx",
        )
        proxy.members = members
        _wait_up(proxy, listen, app)
    except BaseException:
        for m in members:
            stop(m)
        raise
    ROUTED[listen] = proxy
    return listen


#: ``--routed``: nginx's port -> the nginx process (its ``members``: the servers behind it)
ROUTED: dict[int, Server] = {}


def start_gunicorn(
    target: str,
    port: int,
    env: dict[str, str],
    workers: int,
    worker_class: str = "sync",
    threads: int = 1,
    log_dir: Path | None = None,
    name: str = "api",
) -> Server:
    """A plain gunicorn command line (no ``service.gunicorn_conf``): the configuration this
    script measured before the gevent worker."""
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
    if log_dir is None:
        log_dir = Path(tempfile.mkdtemp(prefix="rfg-bench-logs-"))
    proc = _spawn(cmd, env, log_dir, name)
    _wait_up(proc, port, target)
    return proc


def _wait_up(proc: Server, port: int, app: str) -> None:
    path = "/hello" if app == HELLO_APP else "/healthz"
    deadline = time.monotonic() + 60
    while time.monotonic() < deadline:
        if proc.poll() is not None:
            break
        try:
            status, _ = request(port, "GET", path)
            if status == 200:
                return
        except OSError:
            pass
        time.sleep(0.1)
    log = proc.log_path.read_text(errors="replace")[-3000:]
    stop(proc)
    raise SystemExit(f"{app} did not start on port {port}; its log ends:\n{log}")


def stop(proc: subprocess.Popen[bytes], grace: float = 20.0) -> None:
    """SIGTERM to the server's process group (its requests end first), SIGKILL after ``grace``."""
    for sig, wait in ((signal.SIGTERM, grace), (signal.SIGKILL, 10.0)):
        try:
            os.killpg(proc.pid, sig)
        except ProcessLookupError:
            break
        try:
            proc.wait(wait)
            break
        except subprocess.TimeoutExpired:
            continue
    for d in getattr(proc, "dirs", []):
        shutil.rmtree(d, ignore_errors=True)
    for member in getattr(proc, "members", []):
        stop(member, grace)


# --- HTTP -------------------------------------------------------------------------------------


def request(
    port: int,
    method: str,
    path: str,
    body: Any = None,
    headers: dict[str, str] | None = None,
    source: str | None = None,
) -> tuple[int, bytes]:
    conn = http.client.HTTPConnection(
        "127.0.0.1", port, timeout=30, source_address=(source, 0) if source else None
    )
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


def raw_request(
    port: int, payload: bytes, source: str | None = None, timeout: float = 30.0
) -> tuple[int, bytes]:
    """Send a prebuilt HTTP/1.1 request on a new connection (from ``source``, an address of
    127.0.0.0/8) and read the answer to EOF: the cheapest client there is, so the client
    processes leave the CPUs to the servers."""
    with socket.create_connection(
        ("127.0.0.1", port), timeout=timeout, source_address=(source, 0) if source else None
    ) as s:
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


def create_game(port: int, players: int, seed: str, source: str) -> tuple[str, dict[int, str]]:
    """A seeded game (admin) with every seat claimed from ``source``: (its id, seat -> token)."""
    status, raw = request(
        port,
        "POST",
        "/games",
        {"seats": [{"kind": "human"}] * players, "seed": seed},
        {"Authorization": f"Bearer {ADMIN}"},
        source=source,
    )
    assert status == 201, raw
    gid: str = json.loads(raw)["game_id"]
    tokens = {}
    for seat in range(players):
        status, raw = request(port, "POST", f"/games/{gid}/seats/{seat}/claim", source=source)
        assert status == 201, raw
        tokens[seat] = json.loads(raw)["token"]
    return gid, tokens


def prepare(
    port: int, players: int, games: int, tag: str, addresses: Addresses | None = None
) -> list[Prepared]:
    """Create and claim ``games`` seeded games; per game, its command requests ready to send,
    each game from an address of its own (``addresses``; default: a fresh run of them)."""
    addresses = addresses or _ADDRESSES
    out = []
    for i in range(games):
        seed = f"bench:{tag}:{i}"
        source = addresses.one()
        gid, tokens = create_game(port, players, seed, source)
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
                    source,
                )
            )
        out.append(requests)
    return out


def command_work(
    port: int,
    rate: float,
    seconds: float,
    players: int,
    processes: int,
    tag: str,
    addresses: Addresses,
) -> list[Prepared]:
    """Games for ``rate`` commands per second over ``seconds`` in the open loop: enough chains
    of games that each is rarely busy (a command per game about every 50 ms at most), each
    chain several games long (one after the other)."""
    n_games = max(4 * processes, int(rate * 0.05) + 4 * processes)
    per_game = int(seconds * rate / n_games) + 2
    work = [
        game
        for k in range(n_games)
        for game in prepare(port, players, max(1, per_game // 100 + 1), f"{tag}:{k}", addresses)
    ]
    return [[step for game in work[i::n_games] for step in game] for i in range(n_games)]


# --- load -------------------------------------------------------------------------------------


def _send(
    port: int, payload: bytes, source: str | None, timeout: float = 30.0
) -> tuple[int, bytes]:
    """``raw_request``, with a connection that fails or times out counted as status 0."""
    try:
        return raw_request(port, payload, source, timeout)
    except (OSError, ValueError):
        return 0, b""


def _get_path(mode: str) -> str | None:
    """The path a GET mode requests (``hello``, ``healthz`` or a path); None for commands."""
    if mode in HELLO_PATHS:
        return HELLO_PATHS[mode]
    return mode if mode.startswith("/") else None


def _worker(
    args: tuple[str, int, int, float, float, list[Any], list[str]],
) -> tuple[int, int, list[float], Counter[int]]:
    """One client process: ``threads`` clients until ``stop_at``; returns (ok, errors,
    latencies, the statuses of the errors)."""
    mode, port, threads, start_at, stop_at, work, sources = args
    lat: list[list[float]] = [[] for _ in range(threads)]
    errors = [0] * threads
    bad: list[Counter[int]] = [Counter() for _ in range(threads)]

    def client(k: int) -> None:
        while time.time() < start_at:
            time.sleep(0.001)
        path = _get_path(mode)
        if path is not None:
            hello = build("GET", path)
            source = sources[k % len(sources)] if sources else None
            while time.time() < stop_at:
                t = time.perf_counter()
                status, _ = _send(port, hello, source)
                lat[k].append(time.perf_counter() - t)
                if status != 200:
                    errors[k] += 1
                    bad[k][status] += 1
            return
        for game in work[k]:
            for payload, new, source in game:
                if time.time() >= stop_at:
                    return
                t = time.perf_counter()
                status, raw = _send(port, payload, source)
                lat[k].append(time.perf_counter() - t)
                if status != 201 or json.loads(raw)["version"] != new:
                    errors[k] += 1
                    bad[k][status] += 1
                    break  # this game is off script; go on with the next one

    ts = [threading.Thread(target=client, args=(k,)) for k in range(threads)]
    for t in ts:
        t.start()
    for t in ts:
        t.join()
    flat = [x for xs in lat for x in xs]
    return len(flat) - sum(errors), sum(errors), flat, sum(bad, Counter())


OpenLoopJob = tuple[str, int, float, float, float, list[str], list[Any], int, float]
OpenLoopResult = tuple[int, int, list[float], int, Counter[int], list[float]]


def _open_loop(args: OpenLoopJob) -> OpenLoopResult:
    """One client process at a constant rate: request i is due at ``first + i / rate`` and is sent
    then whether or not earlier ones came back (a thread per request in flight, up to
    ``max_threads``); its latency is counted from when it was due, so queueing anywhere - the
    server, a client thread waiting for a free game - shows in it (wrk2's correction for
    coordinated omission). A command goes to a game whose previous command has returned (each
    carries ``expected_version``); a GET mode sends from each of ``sources`` in turn. A request
    not answered within ``timeout`` seconds fails, and so does one still waiting for a client
    thread ``timeout`` seconds after it was due (not sent). Returns (ok, errors, latencies,
    requests not sent in time, the statuses of the errors: 0 for a connection that failed or
    timed out, -1 for a request not sent, the due time (``time.time()``) of each latency)."""
    import queue
    from concurrent.futures import ThreadPoolExecutor

    mode, port, rate, first, stop_at, sources, games, max_threads, timeout = args
    free: queue.Queue[Any] = queue.Queue()
    for game in games:
        free.put(iter(game))
    lat: list[float] = []
    dues: list[float] = []
    errors = [0]
    bad: Counter[int] = Counter()
    lock = threading.Lock()
    path = _get_path(mode)
    get = build("GET", path or "/hello")

    def send(due: float, i: int) -> None:
        if time.time() - due > timeout:  # every client thread was busy for that long: not sent
            with lock:
                lat.append(time.time() - due)
                dues.append(due)
                errors[0] += 1
                bad[-1] += 1
            return
        if path is not None:
            source = sources[i % len(sources)] if sources else None
            status, _ = _send(port, get, source, timeout)
            ok = status == 200
        else:
            while True:
                game = free.get()
                step = next(game, None)
                if step is not None:
                    break
            status, raw = _send(port, step[0], step[2], timeout)
            ok = status == 201 and json.loads(raw)["version"] == step[1]
            if ok:
                free.put(game)  # else the game is off script: it is dropped
        took = time.time() - due
        with lock:
            lat.append(took)
            dues.append(due)
            if not ok:
                errors[0] += 1
                bad[status] += 1

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
            pool.submit(send, due, i)
            i += 1
    return len(lat) - errors[0], errors[0], lat, late, bad, dues


def open_loop_jobs(
    mode: str,
    port: int,
    rate: float,
    start_at: float,
    seconds: float,
    work: list[Any],
    processes: int,
    sources: list[str] | None = None,
    timeout: float = 30.0,
) -> list[OpenLoopJob]:
    """``rate`` requests per second in all from ``start_at`` for ``seconds``, as ``processes``
    client processes' jobs (``_open_loop``); commands: ``work``'s game chains dealt out."""
    stop_at = start_at + seconds
    jobs = []
    for k in range(processes):
        games = [g for i, g in enumerate(work) if i % processes == k]
        mine = (sources or [])[k::processes] or list(sources or [])
        first = start_at + k / rate
        jobs.append((mode, port, rate / processes, first, stop_at, mine, games, 256, timeout))
    return jobs


def pct(lat: list[float], q: float) -> float:
    """The ``q`` quantile (nearest rank) of sorted latencies in seconds, in ms."""
    return lat[min(len(lat) - 1, max(0, math.ceil(q * len(lat)) - 1))] * 1000 if lat else 0.0


def summarize(results: list[OpenLoopResult], seconds: float) -> dict[str, Any]:
    """The figures of an open loop's client processes."""
    lat = sorted(x for r in results for x in r[2])
    ok = sum(r[0] for r in results)
    return {
        "rps": ok / seconds,
        "sent": len(lat),
        "ok": ok,
        "errors": sum(r[1] for r in results),
        "late": sum(r[3] for r in results),
        "statuses": dict(sum((r[4] for r in results), Counter())),
        "p50_ms": pct(lat, 0.5),
        "p99_ms": pct(lat, 0.99),
        "p999_ms": pct(lat, 0.999),
        "max_ms": lat[-1] * 1000 if lat else 0.0,
    }


def run_open_loop(
    mode: str,
    port: int,
    rate: float,
    seconds: float,
    work: list[Any],
    processes: int,
    cpu_of: list[int] | None = None,
    sources: list[str] | None = None,
    store_pids: list[int] | None = None,
) -> dict[str, Any]:
    """``rate`` requests per second in all, spread over ``processes`` client processes."""
    jobs = open_loop_jobs(mode, port, rate, time.time() + 1.0, seconds, work, processes, sources)
    ctx = multiprocessing.get_context("fork")
    server_before = _cpu_seconds(cpu_of or [])
    store_before = _cpu_seconds(store_pids or [])
    with ctx.Pool(processes) as pool:
        results = pool.map(_open_loop, jobs)
    server_after = _cpu_seconds(cpu_of or [])
    store_after = _cpu_seconds(store_pids or [])
    out = summarize(results, seconds)
    done = max(1, out["sent"])
    if cpu_of and server_before is not None and server_after is not None:
        out["server_cpu_us"] = (server_after - server_before) / done * 1e6
    if store_pids and store_before is not None and store_after is not None:
        out["store_cpu_us"] = (store_after - store_before) / done * 1e6
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
    addresses: Addresses,
) -> None:
    """``--rate``: hello world and commands each at the same constant rate, one round each."""
    print(
        f"open loop: {args.rate:g} requests/s for {args.seconds:g} s each, latency from the "
        f"time each request was due"
    )
    sources = addresses.next(64)
    h = run_open_loop(
        "hello",
        hello_port,
        args.rate,
        args.seconds,
        [],
        processes,
        cpu_of=worker_pids(hello),
        sources=sources,
    )
    hz = run_open_loop(
        "healthz",
        api_port,
        args.rate,
        args.seconds,
        [],
        processes,
        cpu_of=worker_pids(api),
        sources=sources,
    )
    work = command_work(
        api_port, args.rate, args.seconds, args.players, processes, f"{prefix}:o", addresses
    )
    c = run_open_loop(
        "commands",
        api_port,
        args.rate,
        args.seconds,
        work,
        processes,
        cpu_of=worker_pids(api),
        store_pids=redis_pids(store),
    )
    print(
        f"{'':22}{'sent/s':>10}{'p50 ms':>10}{'p99 ms':>10}{'p99.9 ms':>10}{'errors':>8}"
        f"{'late':>8}{'server CPU/req':>16}{'Redis CPU/req':>15}"
    )
    for name, x in (("hello world GET", h), ("API GET /healthz", hz), ("command POST", c)):
        print(
            f"{name:22}{x['rps']:10.0f}{x['p50_ms']:10.2f}{x['p99_ms']:10.2f}"
            f"{x['p999_ms']:10.2f}{x['errors']:8.0f}{x['late']:8.0f}"
            f"{_us(x.get('server_cpu_us')):>16}{_us(x.get('store_cpu_us')):>15}"
        )
        if x["statuses"]:
            print(f"{'':22}errors by status (0: no answer, -1: not sent in time): {x['statuses']}")
    print(
        f"server CPU per command at {args.rate:g}/s: {_ratio(c, h)} hello world (target <= 3x), "
        f"{_ratio(c, hz)} /healthz; command p99 {c['p99_ms']:.2f} ms (target < 30 ms)"
    )
    print(
        "(late: requests the client itself sent more than 1 ms after they were due - a client "
        "too slow for the rate; server CPU: the gunicorn worker processes; Redis CPU: the local "
        "redis-server, shared with whatever else uses it)"
    )


def baseline_main(
    args: argparse.Namespace, processes: int, store: str, prefix: str, log_dir: Path
) -> None:
    """``--baseline REV``: the API on this checkout's code and on ``REV``'s, side by side, each
    in the configuration asked (by default the production one), on the same store under key
    prefixes of their own; ``--rounds`` rounds of commands, each round on both servers, the
    order alternating; prints both and the ratio of their server CPU per command."""
    with side_by_side(args.baseline) as codes:
        servers: list[tuple[Code, int, Server]] = []
        try:
            for code in codes:
                env = host_env(
                    store,
                    f"{prefix}{code.label[0]}",
                    limits=args.limits,
                    access_log=args.access_log,
                    dispatch=args.dispatch,
                )
                port = free_port()
                server = start_command(API_APP, port, env, log_dir, args.workers, code.label, code)
                servers.append((code, port, server))
                print(code.served(server), flush=True)
            rounds = baseline_rounds(args, processes, store, prefix, servers)
        finally:
            for _code, _port, server in servers:
                stop(server)
            for code in codes:
                purge(store, f"{prefix}{code.label[0]}")
    print_baseline(args, rounds)


#: seconds of commands each server answers, not counted, before the rounds
WARM_UP = 3.0


def baseline_rounds(
    args: argparse.Namespace,
    processes: int,
    store: str,
    prefix: str,
    servers: list[tuple[Code, int, Server]],
) -> list[dict[str, dict[str, Any]]]:
    """Each round, commands on both servers one after the other (current first in odd rounds,
    the baseline first in even ones), after a warm-up on each; per round, each code's figures."""
    addresses = Addresses()

    def commands(code: Code, port: int, server: Server, seconds: float, tag: str) -> Any:
        games = max(1, int(seconds * 1500 / args.clients / 150) + 1)
        work = [
            prepare(port, args.players, games, f"{prefix}{code.label[0]}:{tag}:{k}", addresses)
            for k in range(args.clients)
        ]
        return run_load(
            "commands",
            port,
            args.clients,
            seconds,
            work,
            processes,
            cpu_of=worker_pids(server),
            store_pids=redis_pids(store),
        )

    for code, port, server in servers:
        commands(code, port, server, min(WARM_UP, args.seconds), "w")
    rounds: list[dict[str, dict[str, Any]]] = []
    for r in range(args.rounds):
        got: dict[str, dict[str, Any]] = {}
        for code, port, server in servers if r % 2 == 0 else servers[::-1]:
            got[code.label] = commands(code, port, server, args.seconds, str(r))
        rounds.append(got)
        cur, base = got["current"], got["baseline"]
        print(
            f"round {r + 1} ({' then '.join(got)}): "
            + "; ".join(
                f"{label} {x['rps']:.0f} commands/s, p99 {x['p99_ms']:.1f} ms, server CPU "
                f"{_us(x.get('server_cpu_us'))} per command"
                + (f", errors {x['statuses']}" if x["errors"] else "")
                for label, x in got.items()
            )
            + f"; current / baseline {_cpu_ratio(cur, base):.2f}",
            flush=True,
        )
    return rounds


def print_baseline(args: argparse.Namespace, rounds: list[dict[str, dict[str, Any]]]) -> None:
    """Both codes' figures (the median over the rounds of each) and the CPU ratio."""

    def median(label: str, key: str) -> float | None:
        xs = sorted(x[label][key] for x in rounds if key in x[label])
        return xs[len(xs) // 2] if xs else None

    print(
        f"median of {len(rounds)} rounds:\n{'':12}{'commands/s':>12}{'p50 ms':>10}{'p99 ms':>10}"
        f"{'errors':>8}{'server CPU/cmd':>16}{'Redis CPU/cmd':>15}"
    )
    for label in ("current", "baseline"):
        print(
            f"{label:12}{median(label, 'rps') or 0:12.0f}{median(label, 'p50_ms') or 0:10.2f}"
            f"{median(label, 'p99_ms') or 0:10.2f}{sum(x[label]['errors'] for x in rounds):8.0f}"
            f"{_us(median(label, 'server_cpu_us')):>16}{_us(median(label, 'store_cpu_us')):>15}"
        )
    ratios = sorted(_cpu_ratio(x["current"], x["baseline"]) for x in rounds)
    verdict = ratios[len(ratios) // 2]
    print(
        f"server CPU per command, current / baseline {args.baseline}: {verdict:.2f} (median of "
        f"the rounds: {', '.join(f'{x:.2f}' for x in ratios)}) - target <= 1.10: "
        f"{'PASS' if verdict <= 1.10 else 'MISS'}; requests/s current / baseline "
        f"{(median('current', 'rps') or 0) / (median('baseline', 'rps') or 1):.2f}"
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
    sources: list[str] | None = None,
) -> dict[str, Any]:
    per = [clients // processes + (1 if i < clients % processes else 0) for i in range(processes)]
    start_at = time.time() + 1.0
    stop_at = start_at + seconds
    jobs = []
    k = 0
    for n in per:
        mine = (sources or [])[k : k + n]
        jobs.append((mode, port, n, start_at, stop_at, work[k : k + n] if work else [], mine))
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
    out: dict[str, Any] = {
        "rps": ok / elapsed,
        "ok": ok,
        "errors": errors,
        "statuses": dict(sum((r[3] for r in results), Counter())),
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


def start_servers(
    args: argparse.Namespace, env: dict[str, str], log_dir: Path
) -> tuple[int, int, Server, Server]:
    """(hello port, API port, hello world, the API), served alike."""
    hello_port, api_port = free_port(), free_port()
    if args.routed:
        env = {**env, "RFG_PROXY_HOPS": "1"}  # the client's address from nginx's X-Forwarded-For
        hello_port = start_routed(HELLO_APP, env, log_dir, args.workers, "hello")
        try:
            api_port = start_routed(API_APP, env, log_dir, args.workers, "api")
        except BaseException:
            stop(ROUTED[hello_port])
            raise
        return hello_port, api_port, ROUTED[hello_port], ROUTED[api_port]
    if args.worker_class == "gevent":
        hello = start_command(HELLO_APP, hello_port, env, log_dir, args.workers, "hello")
        try:
            api = start_command(API_APP, api_port, env, log_dir, args.workers, "api")
        except BaseException:
            stop(hello)
            raise
        return hello_port, api_port, hello, api
    server = (args.workers, args.worker_class, args.threads, log_dir)
    old = {k: v for k, v in env.items() if k != "RFG_DISPATCH"}
    hello = start_gunicorn(HELLO_APP, hello_port, {}, *server, name="hello")
    try:
        api = start_gunicorn(API_APP, api_port, old, *server, name="api")
    except BaseException:
        stop(hello)
        raise
    return hello_port, api_port, hello, api


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
        default="gevent",
        choices=WORKER_CLASSES,
        help="gevent (default): both servers by rfgcli.run.api_command, as hosts run them; "
        "sync, gthread: plain gunicorn command lines, as this script ran them before",
    )
    ap.add_argument("--threads", type=int, default=1, help="threads per gthread worker")
    ap.add_argument(
        "--routed",
        action="store_true",
        help="both servers as rfg run --routed serves them (--workers servers of one process "
        "each) behind nginx with deploy/nginx.conf, which routes each game to one process; "
        "server CPU is the app processes', nginx's is printed apart",
    )
    ap.add_argument(
        "--limits",
        action=argparse.BooleanOptionalAction,
        default=True,
        help="the API's rate limits at their defaults (default on; --no-limits: RFG_RATE_LIMITS=0)",
    )
    ap.add_argument(
        "--access-log",
        action=argparse.BooleanOptionalAction,
        default=True,
        help="the API's access line per request (default on; --no-access-log: "
        "RFG_LOG_LEVEL=WARNING)",
    )
    ap.add_argument(
        "--dispatch",
        action=argparse.BooleanOptionalAction,
        default=True,
        help="RFG_DISPATCH=1 as rfg run sets it (default on; gevent only)",
    )
    ap.add_argument("--processes", type=int, default=4, help="client processes")
    ap.add_argument(
        "--keep-logs", action="store_true", help="keep the servers' logs (access lines included)"
    )
    ap.add_argument("--url", help="store URL (default: $REDIS_URL, local Redis, or embedded)")
    ap.add_argument(
        "--rate",
        type=float,
        default=0.0,
        help="open loop: send this many requests per second on a fixed schedule "
        "(whether or not earlier ones returned) and report p50/p99/p99.9 "
        "from each request's due time; default: closed loop with --clients",
    )
    ap.add_argument(
        "--baseline",
        metavar="REV",
        help="also serve the API on this git revision's code (checked out in a temporary "
        "worktree) and measure its commands side by side with the current code's, rounds "
        "alternating; prints both and the ratio of their server CPU per command",
    )
    args = ap.parse_args()
    if args.baseline and (args.rate or args.routed or args.worker_class != "gevent"):
        ap.error(
            "--baseline measures commands as hosts serve them: not with --rate, --routed "
            "or --worker-class sync/gthread"
        )
    processes = max(1, min(args.processes, args.clients))

    store, tmp = pick_store(args.url)
    prefix = f"bench{uuid.uuid4().hex[:8]}"
    env = host_env(
        store, prefix, limits=args.limits, access_log=args.access_log, dispatch=args.dispatch
    )
    log_dir = Path(tempfile.mkdtemp(prefix="rfg-bench-logs-"))
    threads = f" x {args.threads} threads" if args.worker_class == "gthread" else ""
    how = (
        f"rfgcli.run.api_command (gevent, service.gunicorn_conf"
        f"{', RFG_DISPATCH=1' if args.dispatch else ''})"
        + (
            ", --routed: one process per server, behind nginx (deploy/nginx.conf)"
            if args.routed
            else ""
        )
        if args.worker_class == "gevent"
        else f"plain gunicorn {args.worker_class}{threads}"
    )
    print(
        f"store {store.split('?')[0]}  clients {args.clients} ({processes} processes)  "
        f"{args.workers} workers, {how}  rate limits {'on' if args.limits else 'off'}  "
        f"access log {'on' if args.access_log and args.worker_class == 'gevent' else 'off'}  "
        f"{args.rounds} rounds of {args.seconds:g} s each  cpus {os.cpu_count()}  "
        f"load {' '.join(f'{x:.1f}' for x in os.getloadavg())}"
    )

    if args.baseline:
        try:
            baseline_main(args, processes, store, prefix, log_dir)
        finally:
            clean_up(args, log_dir, tmp)
        return
    addresses = Addresses()
    hello_port, api_port, hello, api = start_servers(args, env, log_dir)
    rounds: list[tuple[dict[str, Any], dict[str, Any], dict[str, Any]]] = []
    try:
        if args.rate:
            open_loop_main(
                args, processes, hello_port, api_port, hello, api, store, prefix, addresses
            )
            return
        # enough games that no client runs out of commands (random 2-seat games: ~150 commands)
        per_client = max(1, int(args.seconds * 1500 / args.clients / 150) + 1)
        for r in range(args.rounds):
            sources = addresses.next(args.clients)
            h = run_load(
                "hello",
                hello_port,
                args.clients,
                args.seconds,
                [],
                processes,
                cpu_of=worker_pids(hello),
                sources=sources,
            )
            hz = run_load(
                "healthz",
                api_port,
                args.clients,
                args.seconds,
                [],
                processes,
                cpu_of=worker_pids(api),
                sources=sources,
            )
            work = [
                prepare(api_port, args.players, per_client, f"{prefix}:{r}:{k}", addresses)
                for k in range(args.clients)
            ]
            proxy_before = _cpu_seconds(proxy_pids(api)) if args.routed else None
            c = run_load(
                "commands",
                api_port,
                args.clients,
                args.seconds,
                work,
                processes,
                cpu_of=worker_pids(api),
                store_pids=redis_pids(store),
            )
            proxy_after = _cpu_seconds(proxy_pids(api)) if args.routed else None
            if proxy_before is not None and proxy_after is not None:
                print(
                    f"round {r + 1}: nginx CPU per command {(proxy_after - proxy_before) / max(1, c['ok']) * 1e6:.0f} us "
                    f"(not in the server CPU below)"
                )
            rounds.append((h, hz, c))
            print(
                f"round {r + 1}: hello {h['rps']:.0f}/s, /healthz {hz['rps']:.0f}/s, commands "
                f"{c['rps']:.0f}/s ({c['rps'] / h['rps']:.0%}), command p99 {c['p99_ms']:.1f} ms, "
                f"server CPU per command {_ratio(c, h)} hello, {_ratio(c, hz)} /healthz"
                + (
                    f" (+ {c['store_cpu_us']:.0f} us of Redis's per command)"
                    if "store_cpu_us" in c
                    else ""
                )
                + (f"; errors {c['statuses']}" if c["errors"] else ""),
                flush=True,
            )
    finally:
        stop(hello)
        stop(api)
        purge(store, prefix)
        clean_up(args, log_dir, tmp)

    h, hz, c = sorted(rounds, key=lambda r: r[2]["rps"] / r[0]["rps"])[len(rounds) // 2]
    print(
        f"median round:\n{'':22}{'req/s':>10}{'p50 ms':>10}{'p99 ms':>10}{'errors':>8}"
        f"{'server CPU/req':>16}{'Redis CPU/req':>15}{'client CPU/req':>16}"
    )
    for name, x in (("hello world GET", h), ("API GET /healthz", hz), ("command POST", c)):
        print(
            f"{name:22}{x['rps']:10.0f}{x['p50_ms']:10.2f}{x['p99_ms']:10.2f}{x['errors']:8.0f}"
            f"{_us(x.get('server_cpu_us')):>16}{_us(x.get('store_cpu_us')):>15}"
            f"{_us(x.get('client_cpu_us')):>16}"
        )
    print(
        f"commands/s = {c['rps'] / h['rps']:.0%} of hello world (target >= 40%); "
        f"command p99 {c['p99_ms']:.1f} ms (target < 50 ms)"
    )
    cpu = sorted(_cpu_ratio(c, h) for h, _hz, c in rounds)
    cpu_hz = sorted(_cpu_ratio(c, hz) for _h, hz, c in rounds)
    with_redis = sorted(_cpu_ratio(c, h, with_store=True) for h, _hz, c in rounds)
    verdict = cpu[len(cpu) // 2]
    print(
        f"server CPU per command, median of the rounds: {verdict:.2f}x hello world (bare Flask, "
        f"same command line; rounds {', '.join(f'{x:.2f}' for x in cpu)}) - target <= 3x: "
        f"{'PASS' if verdict <= 3 else 'MISS'}; {cpu_hz[len(cpu_hz) // 2]:.2f}x the API's "
        f"/healthz (same app and hooks); with Redis's CPU added to the command's: "
        f"{with_redis[len(with_redis) // 2]:.2f}x hello world"
    )
    print(
        "(server CPU: the gunicorn worker processes, user + system time per request; Redis CPU: "
        "the local redis-server, shared with whatever else uses it; client CPU: the load "
        "processes)"
    )


def clean_up(args: argparse.Namespace, log_dir: Path, tmp: str | None) -> None:
    """Remove the servers' logs (unless ``--keep-logs``) and the embedded store (if started)."""
    if args.keep_logs:
        print(f"servers' logs: {log_dir}")
    else:
        shutil.rmtree(log_dir, ignore_errors=True)
    if tmp:
        from events.store import EmbeddedServer

        EmbeddedServer(tmp).stop()
        shutil.rmtree(tmp, ignore_errors=True)


def _us(value: float | None) -> str:
    return "-" if value is None else f"{value:.0f} us"


def _cpu_ratio(c: dict[str, Any], base: dict[str, Any], with_store: bool = False) -> float:
    if not c.get("server_cpu_us") or not base.get("server_cpu_us"):
        return float("nan")
    extra = c.get("store_cpu_us", 0.0) if with_store else 0.0
    return float((c["server_cpu_us"] + extra) / base["server_cpu_us"])


def _ratio(c: dict[str, Any], base: dict[str, Any]) -> str:
    return f"{_cpu_ratio(c, base):.2f}x"


# --- CPU and memory accounting (Linux /proc; figures are left out elsewhere) ------------------


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


def run_queue_seconds(pids: list[int]) -> float | None:
    """How long these processes' threads have waited for a CPU while runnable (the second field
    of /proc/<pid>/task/<tid>/schedstat): what other load on the machine cost them."""
    total = 0
    try:
        for pid in pids:
            for tid in os.listdir(f"/proc/{pid}/task"):
                with open(f"/proc/{pid}/task/{tid}/schedstat") as f:
                    total += int(f.read().split()[1])
    except (OSError, ValueError, IndexError):
        return None
    return total / 1e9


def rss_bytes(pids: list[int]) -> int | None:
    """The resident set of these processes, summed (VmRSS)."""
    total = 0
    try:
        for pid in pids:
            with open(f"/proc/{pid}/status") as f:
                for line in f:
                    if line.startswith("VmRSS:"):
                        total += int(line.split()[1]) * 1024
                        break
    except (OSError, ValueError, IndexError):
        return None
    return total


def worker_pids(master: subprocess.Popen[bytes]) -> list[int]:
    """The server's worker processes (``--routed``: those of the servers behind the proxy; the
    proxy's own are ``proxy_pids``)."""
    members = getattr(master, "members", [])
    if members:
        return [pid for m in members for pid in worker_pids(m)]
    return proxy_pids(master)


def proxy_pids(master: subprocess.Popen[bytes]) -> list[int]:
    """The children of ``master`` (gunicorn's workers; nginx's worker processes)."""
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


def purge(store: str, prefix: str) -> None:
    """Delete what a run under ``prefix`` left in the store: its keys (games, limits, streams'
    slots), the keys of its RQ queue (``RFG_DISPATCH``: the queue is named by the prefix), of
    the jobs enqueued on it and of the RQ workers that served it."""
    import events.store

    client = events.store.connect(store)
    patterns = [
        f"{prefix}:*",
        f"rq:job:{prefix}-*",
        f"rq:*:{prefix}",
        f"rq:*:{prefix}:*",
        f"rq:results:{prefix}-*",
        f"rq:execution:{prefix}-*",
        f"rq:executions:{prefix}-*",
    ]
    keys: list[Any] = []
    for pattern in patterns:
        keys.extend(client.scan_iter(match=pattern, count=1000))
    for key in client.scan_iter(match="rq:worker:*", count=1000):  # an rfg worker on the queue
        name = key.decode() if isinstance(key, bytes) else str(key)
        if name.count(":") != 2 or client.type(key) not in (b"hash", "hash"):
            continue
        queues = client.hget(key, "queues")
        queues = queues.decode() if isinstance(queues, bytes) else queues
        if queues is not None and prefix in queues.split(","):
            keys += [key, f"{name}:executions"]
            client.srem("rq:workers", key)
    for i in range(0, len(keys), 1000):
        client.delete(*keys[i : i + 1000])
    client.srem("rq:queues", f"rq:queue:{prefix}")


if __name__ == "__main__":
    main()
