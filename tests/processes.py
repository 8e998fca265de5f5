"""Processes the integration tests start: free ports, a process with its log in a file, started
in its own session and killed with its whole group, and waiting for a condition."""

from __future__ import annotations

import os
import signal
import socket
import subprocess
import time
from collections.abc import Callable
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]


def worker_ports(low: int, high: int) -> range:
    """This process's share of the ports ``low..high``: all of them in a plain pytest run; under
    pytest-xdist (``make test-all`` runs the whole tier in worker processes) the worker ``gw<i>``
    of ``n`` gets the ``i``-th of ``n`` equal slices, so two workers never pick the same port of a
    fixed range - not even one a test keeps to restart its server on after killing it."""
    worker = os.environ.get("PYTEST_XDIST_WORKER", "")
    count = int(os.environ.get("PYTEST_XDIST_WORKER_COUNT", "1") or 1)
    if not worker.startswith("gw") or count <= 1:
        return range(low, high + 1)
    index = int(worker[2:]) % count
    size = (high + 1 - low) // count
    return range(low + index * size, low + (index + 1) * size)


def free_port(low: int = 0, high: int = 0) -> int:
    """A TCP port nobody listens on: any (0) or the first free one in this process's share of
    ``low..high`` (``worker_ports``)."""
    for port in worker_ports(low, high) if low else [0]:
        with socket.socket() as s:
            try:
                s.bind(("127.0.0.1", port))
            except OSError:
                continue
            return int(s.getsockname()[1])
    raise RuntimeError(f"no free port in {low}-{high}")


def wait_for(pred: Callable[[], bool], timeout: float, what: str, step: float = 0.05) -> float:
    """Wait until ``pred()``; returns the seconds it took."""
    started = time.monotonic()
    while time.monotonic() - started < timeout:
        if pred():
            return time.monotonic() - started
        time.sleep(step)
    raise AssertionError(f"timed out after {timeout}s waiting for {what}")


def wait_listening(proc: Proc, port: int, what: str, timeout: float = 30) -> float:
    """Wait until something accepts connections on 127.0.0.1:``port``; fails at once, with the
    end of its log, if ``proc`` exits meanwhile."""

    def up() -> bool:
        if proc.poll() is not None:
            raise AssertionError(f"{what} exited with {proc.returncode}:\n{proc.log()[-4000:]}")
        try:
            with socket.create_connection(("127.0.0.1", port), timeout=0.5):
                return True
        except OSError:
            return False

    return wait_for(up, timeout, f"{what} to listen")


class Proc(subprocess.Popen[bytes]):
    log_path: Path

    def log(self) -> str:
        """Everything the process wrote (stdout and stderr)."""
        return self.log_path.read_text(errors="replace")


def spawn(cmd: list[str], env: dict[str, str], log_path: Path) -> Proc:
    """Start ``cmd`` from the repository root in its own session, its output in ``log_path``."""
    out = open(log_path, "wb")  # noqa: SIM115 - closed with the process
    proc = Proc(
        cmd,
        cwd=ROOT,
        stdout=out,
        stderr=subprocess.STDOUT,
        stdin=subprocess.DEVNULL,
        env={**os.environ, **env},
        start_new_session=True,
    )
    proc.log_path = log_path
    return proc


def kill_group(proc: subprocess.Popen[bytes]) -> None:
    try:
        os.killpg(proc.pid, signal.SIGKILL)
    except ProcessLookupError:
        pass
    try:
        proc.wait(10)
    except subprocess.TimeoutExpired:
        pass
