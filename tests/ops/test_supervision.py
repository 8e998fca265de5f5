"""Supervision under kill -9, with real processes (issue 26, part 3): ``rfg run`` in a directory
of its own with the embedded store, 1 API process, 1 ``rfg worker``.

* the embedded server ``rfg run`` started is SIGKILLed: it is started again and ``/readyz``
  answers 200 again;
* the gunicorn master is SIGKILLed: a new one serves the API, the old one's workers go;
* ``rfg worker`` is SIGKILLed: no process of it is left (RQ's scheduler, its fork, used to stay,
  holding the worker's Redis sockets, and swallowed the next bot job), and a new bot game
  finishes without any job being rescued by the sweep;
* ``rfg run`` is SIGKILLed: the API, its workers, the bot worker, its scheduler and the embedded
  server all exit; an embedded server that was running before ``rfg run`` is left running;
* an API that never answers (its address is not this machine's) stops ``rfg run`` with an
  error; a port something else listens on stops it before it starts anything.

Every wait is bounded; whatever a test started is killed when it ends, passed or failed (every
process whose working directory is in the test's directory)."""

from __future__ import annotations

import http.client
import json
import os
import re
import signal
import socket
import subprocess
import sys
import time
import urllib.error
import urllib.request
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest

from events.store import EmbeddedServer, find_server_binary
from events.store.pids import alive
from tests.ops.test_run import free_port, wait_for

ROOT = Path(__file__).resolve().parents[2]
RFG = str(Path(sys.executable).parent / "rfg")
GONE = 30.0  # seconds a killed process's children may take to exit (they take one or two)


def _stat(pid: int) -> list[str] | None:
    """Fields of /proc/<pid>/stat after the command name (state, ppid, ...), None if gone."""
    try:
        return Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    except OSError:
        return None


def ppid(pid: int) -> int | None:
    st = _stat(pid)
    return int(st[1]) if st else None


def cmdline(pid: int) -> str:
    try:
        return Path(f"/proc/{pid}/cmdline").read_bytes().replace(b"\0", b" ").decode()
    except OSError:
        return ""


def processes_in(directory: Path) -> set[int]:
    """Live processes whose working directory is ``directory`` or below it."""
    out = set()
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit():
            continue
        try:
            cwd = Path(os.readlink(entry / "cwd"))
        except OSError:
            continue
        if (cwd == directory or directory in cwd.parents) and alive(int(entry.name)):
            out.add(int(entry.name))
    return out


def children(pid: int, directory: Path) -> set[int]:
    return {p for p in processes_in(directory) if ppid(p) == pid}


def get(base: str, path: str) -> int:
    try:
        with urllib.request.urlopen(base + path, timeout=5) as r:
            return int(r.status)
    except urllib.error.HTTPError as exc:
        return int(exc.code)
    except OSError:
        return 0


def post(base: str, path: str, body: Any) -> tuple[int, Any]:
    req = urllib.request.Request(
        base + path,
        data=json.dumps(body).encode(),
        method="POST",
        headers={"Content-Type": "application/json"},
    )
    try:
        with urllib.request.urlopen(req, timeout=10) as r:
            return r.status, json.loads(r.read())
    except urllib.error.HTTPError as exc:
        return exc.code, exc.read()


def sse_clients(base: str) -> float | None:
    """``rfg_sse_clients`` as ``/metrics`` reports it (summed over the API's processes)."""
    try:
        with urllib.request.urlopen(base + "/metrics", timeout=5) as r:
            text = r.read().decode()
    except OSError:
        return None
    found = re.search(r"^rfg_sse_clients(?:\{[^}]*\})? (\S+)$", text, re.M)
    return float(found.group(1)) if found else None


def view_step(base: str, gid: str) -> str | None:
    try:
        with urllib.request.urlopen(f"{base}/games/{gid}/view", timeout=5) as r:
            return str(json.loads(r.read())["view"]["step"])
    except (OSError, ValueError, KeyError):
        return None


@dataclass
class Run:
    proc: subprocess.Popen[bytes]
    base: str
    port: int
    log: Path
    dir: Path

    def text(self) -> str:
        return self.log.read_text(errors="replace")

    def pids(self, name: str) -> list[int]:
        return [int(p) for p in re.findall(rf"rfg run: {name} started \(pid (\d+)\)", self.text())]

    def store_pid(self) -> int | None:
        try:
            return int((self.dir / "run" / "redis" / "server.pid").read_text())
        except (OSError, ValueError):
            return None


def kill_everything_in(directory: Path) -> None:
    for _ in range(50):
        left = processes_in(directory)
        if not left:
            return
        for pid in left:
            try:
                os.kill(pid, signal.SIGKILL)
            except ProcessLookupError:
                pass
        time.sleep(0.1)


@pytest.fixture
def start_run(tmp_path: Path) -> Iterator[Callable[..., Run]]:
    """Starts ``rfg run`` in ``tmp_path`` (1 API process, 1 bot worker) and waits for /healthz;
    kills everything in ``tmp_path`` at the end."""
    if find_server_binary() is None:
        pytest.skip("no redis-server/valkey-server binary for the embedded store")
    runs: list[Run] = []

    def start(*, port: int | None = None, wait: bool = True, host: str | None = None) -> Run:
        port = port or free_port()
        log = tmp_path / f"run-{len(runs)}.log"
        env = {
            k: v
            for k, v in os.environ.items()
            if k not in ("REDIS_URL", "RFG_STORE_URL", "RFG_QUEUE_URL", "RFG_ADMIN_TOKEN")
        }
        env["PYTHONPATH"] = str(ROOT)
        env["RFG_DATA_DIR"] = str(tmp_path / "run")  # its own store and key, not the checkout's
        cmd = [RFG, "run", "--port", str(port), "--workers", "1", "--bot-workers", "1"]
        if host is not None:
            cmd += ["--host", host]
        proc = subprocess.Popen(
            [*cmd, "--grace", "5"],
            cwd=tmp_path,
            env=env,
            stdin=subprocess.DEVNULL,
            stdout=open(log, "wb"),  # noqa: SIM115 - closed with the process
            stderr=subprocess.STDOUT,
            start_new_session=True,
        )
        run = Run(proc, f"http://127.0.0.1:{port}", port, log, tmp_path)
        runs.append(run)
        if wait:  # rfg run has seen it answer too (an API that never did stops everything)
            wait_for(lambda: "rfg run: the API answers" in run.text(), 60, "the API to answer")
        return run

    try:
        yield start
    finally:
        for run in runs:
            if run.proc.poll() is None:
                run.proc.kill()
            run.proc.wait(timeout=10)
        kill_everything_in(tmp_path)


def test_a_killed_embedded_store_is_started_again(start_run: Callable[..., Run]) -> None:
    run = start_run()
    old = run.store_pid()
    assert old is not None and alive(old)
    assert ppid(old) == run.proc.pid, "the embedded server runs as a child of rfg run"
    wait_for(lambda: get(run.base, "/readyz") == 200, 30, "/readyz to answer 200")

    # rfg store stop will not stop a server rfg run would start again at once
    env = {k: v for k, v in os.environ.items() if k not in ("REDIS_URL", "RFG_STORE_URL")}
    stop = subprocess.run(
        [RFG, "store", "stop", "--force"],
        cwd=run.dir,
        env={**env, "PYTHONPATH": str(ROOT), "RFG_DATA_DIR": str(run.dir / "run")},
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert stop.returncode == 1 and f"rfg run (pid {run.proc.pid})" in stop.stderr, stop
    assert alive(old)
    status = subprocess.run(
        [RFG, "store", "status"],
        cwd=run.dir,
        env={**env, "PYTHONPATH": str(ROOT), "RFG_DATA_DIR": str(run.dir / "run")},
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert status.returncode == 0 and f"supervised by rfg run (pid {run.proc.pid})" in status.stdout

    os.kill(old, signal.SIGKILL)
    wait_for(
        lambda: run.store_pid() not in (None, old) and get(run.base, "/readyz") == 200,
        40,
        "a new embedded server and /readyz 200",
    )
    new = run.store_pid()
    assert new is not None and alive(new) and ppid(new) == run.proc.pid
    text = run.text()
    assert f"the embedded server (pid {old}) exited with status -9" in text, text[-3000:]
    assert "restarting it in 1s" in text
    code, game = post(run.base, "/games", {"seats": [{"kind": "human"}] * 2})
    assert code == 201, game
    assert run.proc.poll() is None


def test_a_killed_api_master_is_started_again(start_run: Callable[..., Run]) -> None:
    run = start_run()
    [master] = run.pids(r"the API \(gunicorn\)")
    old_workers = wait_for(lambda: children(master, run.dir), 30, "gunicorn's worker")
    code, game = post(run.base, "/games", {"seats": [{"kind": "human"}] * 2})
    assert code == 201, game
    sse = http.client.HTTPConnection("127.0.0.1", run.port, timeout=10)
    sse.request("GET", f"/games/{game['game_id']}/events/stream")
    assert sse.getresponse().status == 200
    wait_for(lambda: sse_clients(run.base) == 1, 20, "the open stream to be counted")
    os.kill(master, signal.SIGKILL)
    wait_for(
        lambda: len(run.pids(r"the API \(gunicorn\)")) == 2 and get(run.base, "/healthz") == 200,
        60,
        "a new gunicorn master serving the API",
    )
    new = run.pids(r"the API \(gunicorn\)")[1]
    assert alive(new) and ppid(new) == run.proc.pid
    assert f"the API (gunicorn) (pid {master}) exited with status -9" in run.text()
    wait_for(
        lambda: not any(alive(p) for p in old_workers), GONE, "the old master's workers to exit"
    )
    assert get(run.base, "/readyz") == 200
    # the dead master could not mark its workers dead in the metrics: rfg run did
    wait_for(lambda: sse_clients(run.base) == 0, 20, "the closed stream to be forgotten")
    sse.close()
    assert run.proc.poll() is None


def test_a_killed_worker_leaves_nothing_behind_and_bot_games_finish(
    start_run: Callable[..., Run],
) -> None:
    run = start_run()
    [worker] = run.pids("worker 1")
    kids = wait_for(lambda: children(worker, run.dir), 30, "rfg worker's scheduler process")
    assert all("rfgcli.main worker" in cmdline(k) for k in kids)  # a fork: the same command line

    os.kill(worker, signal.SIGKILL)  # the worker only, not its process group
    wait_for(lambda: not any(alive(k) for k in kids), GONE, f"rfg worker's children {kids} to exit")
    wait_for(lambda: len(run.pids("worker 1")) == 2, 30, "the worker to be started again")
    restarted = run.pids("worker 1")[1]
    for pid in processes_in(run.dir):  # every worker process is rfg run's worker or its child
        if "rfgcli.main worker" in cmdline(pid):
            assert ppid(pid) in (run.proc.pid, restarted), (pid, cmdline(pid))

    code, game = post(run.base, "/games", {"seats": [{"kind": "bot", "bot": "random"}] * 2})
    assert code == 201, game
    gid = game["game_id"]
    wait_for(lambda: view_step(run.base, gid) == "over", 120, "the bot game to finish")
    rescued = [line for line in run.text().splitlines() if "enqueuing it again" in line]
    assert not rescued, f"a job of the new game was taken by a dead process: {rescued}"


def test_killing_rfg_run_stops_everything_it_started(start_run: Callable[..., Run]) -> None:
    run = start_run()
    [worker] = run.pids("worker 1")
    wait_for(lambda: children(worker, run.dir), 30, "rfg worker's scheduler process")
    [master] = run.pids(r"the API \(gunicorn\)")
    wait_for(lambda: children(master, run.dir), 30, "gunicorn's worker")
    store = run.store_pid()
    started = processes_in(run.dir) - {run.proc.pid}
    # the store, the gunicorn master and its worker, rfg worker and its scheduler
    assert store in started and master in started and worker in started and len(started) >= 5

    os.kill(run.proc.pid, signal.SIGKILL)
    run.proc.wait(timeout=10)
    wait_for(
        lambda: not processes_in(run.dir),
        GONE,
        "everything rfg run started to exit",
    )


def test_killing_rfg_run_leaves_a_store_it_did_not_start(
    start_run: Callable[..., Run], tmp_path: Path
) -> None:
    if find_server_binary() is None:
        pytest.skip("no redis-server/valkey-server binary for the embedded store")
    server = EmbeddedServer(tmp_path / "run" / "redis")
    server.ensure_running()
    store = server.pid()
    assert store is not None
    try:
        run = start_run()
        assert "already running" in run.text()
        [master] = run.pids(r"the API \(gunicorn\)")
        [worker] = run.pids("worker 1")
        os.kill(run.proc.pid, signal.SIGKILL)
        run.proc.wait(timeout=10)
        wait_for(
            lambda: not alive(master) and not alive(worker),
            GONE,
            "the API and the worker to exit",
        )
        assert alive(store) and server.is_running()
    finally:
        server.stop()


def test_an_api_that_never_answers_stops_rfg_run(
    start_run: Callable[..., Run], tmp_path: Path
) -> None:
    run = start_run(host="192.0.2.1", wait=False)  # TEST-NET-1: no address of this machine
    assert run.proc.wait(timeout=90) != 0
    assert "before it answered" in run.text(), run.text()[-3000:]
    assert "and the embedded server" in run.text()
    wait_for(lambda: not processes_in(tmp_path), GONE, "everything rfg run started to exit")


def test_a_busy_port_stops_rfg_run_before_it_starts_anything(
    start_run: Callable[..., Run], tmp_path: Path
) -> None:
    with socket.socket() as taken:  # something else listens on the port
        taken.bind(("127.0.0.1", 0))
        taken.listen()
        port = taken.getsockname()[1]
        run = start_run(port=port, wait=False)
        assert run.proc.wait(timeout=30) == 1
    assert run.text().strip().splitlines() == [
        f"rfg run: port {port} on 127.0.0.1 is in use: another server (another rfg run?) "
        "listens there; stop it or pick another --port. Nothing was started"
    ]
    assert not processes_in(tmp_path)
