"""Fixtures for the hosting tests: real processes waiting as long as production waits.

* ``own_redis`` - a ``redis-server`` of this test alone (AOF on, ``appendfsync always``, a free
  port in 7100-7199, its own temp dir) that the test can SIGKILL and restart, or SIGSTOP;
* ``start_api`` - the API under gunicorn (``rfgcli.run.api_command``, as ``make run`` serves it), as a
  subprocess on a free port, with its log in a file;
* ``start_worker`` - ``rfg worker`` processes (own process group) with production settings;
* ``prefix`` - a unique store prefix / queue on the shared Redis at ``$REDIS_URL``, cleaned up.

Processes run ``python -m`` from the repository root, so they run the code of this checkout.
"""

from __future__ import annotations

import signal
import subprocess
import sys
import uuid
from collections.abc import Callable, Iterator, Sequence
from pathlib import Path
from typing import Any

import pytest
import redis

from events.store import find_server_binary
from rfgcli.run import api_command
from tests.conftest import REDIS_URL, unavailable
from tests.processes import Proc, free_port, kill_group, spawn, wait_for, wait_listening

ROOT = Path(__file__).resolve().parents[2]
ADMIN = "hosting-admin-token"


class RedisServer:
    """A redis-server process of one test, restartable on the same port and data."""

    def __init__(self, binary: str, data_dir: Path, port: int, extra: Sequence[str] = ()) -> None:
        self.binary, self.data_dir, self.port = binary, data_dir, port
        self.url = f"redis://127.0.0.1:{port}/0"
        self.proc: subprocess.Popen[bytes] | None = None
        #: more ``redis-server`` arguments (``--maxmemory 24mb``, ...), after the defaults
        self.extra = list(extra)

    def start(self) -> None:
        args = [
            self.binary,
            "--port",
            str(self.port),
            "--bind",
            "127.0.0.1",
            "--dir",
            str(self.data_dir),
            "--appendonly",
            "yes",
            "--appendfsync",
            "always",
            "--save",
            "",
            "--logfile",
            str(self.data_dir / "server.log"),
            *self.extra,
        ]
        self.proc = subprocess.Popen(args, stdin=subprocess.DEVNULL, start_new_session=True)
        probe = redis.Redis(port=self.port, socket_connect_timeout=1, socket_timeout=1)
        try:
            wait_for(lambda: self._pings(probe), 30, f"redis-server on port {self.port}")
        finally:
            probe.close()

    def _pings(self, probe: redis.Redis) -> bool:
        assert self.proc is not None
        if self.proc.poll() is not None:
            log = (self.data_dir / "server.log").read_text(errors="replace")[-2000:]
            raise AssertionError(f"redis-server exited with {self.proc.returncode}:\n{log}")
        try:
            return bool(probe.ping())
        except (redis.ConnectionError, redis.TimeoutError):
            return False

    def kill(self) -> None:
        """SIGKILL: no shutdown, no final fsync (AOF ``always`` wrote every acknowledged write)."""
        assert self.proc is not None
        self.proc.send_signal(signal.SIGKILL)
        self.proc.wait(10)

    def signal(self, sig: int) -> None:
        assert self.proc is not None
        self.proc.send_signal(sig)

    def stop(self) -> None:
        if self.proc is not None and self.proc.poll() is None:
            self.proc.send_signal(signal.SIGCONT)
            self.proc.send_signal(signal.SIGKILL)
            self.proc.wait(10)


@pytest.fixture
def own_redis(tmp_path: Path) -> Iterator[RedisServer]:
    binary = find_server_binary()
    if binary is None:
        unavailable("no redis-server binary (install redis-server, or set RFG_REDIS_SERVER)")
    data = tmp_path / "redis"
    data.mkdir()
    server = RedisServer(str(binary), data, free_port(7100, 7199))
    server.start()
    yield server
    server.stop()


@pytest.fixture
def prefix(real_redis: Any) -> Iterator[str]:
    from tests.workers.conftest import purge

    name = f"h{uuid.uuid4().hex[:10]}"
    yield name
    purge(real_redis, name)


@pytest.fixture
def start_api(tmp_path: Path) -> Iterator[Callable[..., tuple[Proc, str]]]:
    """``start_api(url, prefix, workers=1, **env)`` -> (process, base URL), once /healthz answers."""
    procs: list[Proc] = []

    def start(url: str, prefix: str, workers: int = 1, **env: str) -> tuple[Proc, str]:
        port = free_port()
        cmd = api_command(f"127.0.0.1:{port}", workers=workers)  # as rfg run serves it
        full = {
            "REDIS_URL": url,
            "RFG_STORE_URL": url,
            "RFG_STORE_PREFIX": prefix,
            "RFG_ADMIN_TOKEN": ADMIN,
            **env,
        }
        proc = spawn(cmd, full, tmp_path / f"api-{len(procs)}.log")
        procs.append(proc)
        base = f"http://127.0.0.1:{port}"

        wait_listening(proc, port, "the API")
        return proc, base

    yield start
    for proc in procs:
        kill_group(proc)


@pytest.fixture
def start_worker(tmp_path: Path) -> Iterator[Callable[..., Proc]]:
    """``start_worker(url, prefix, *args)`` -> a running ``rfg worker`` (production defaults)."""
    procs: list[Proc] = []

    def start(url: str, prefix: str, *args: str) -> Proc:
        cmd = [
            sys.executable,
            "-m",
            "rfgcli.main",
            "worker",
            "--url",
            url,
            "--prefix",
            prefix,
            *args,
        ]
        proc = spawn(cmd, {}, tmp_path / f"worker-{len(procs)}.log")
        procs.append(proc)
        return proc

    yield start
    for proc in procs:
        kill_group(proc)


@pytest.fixture
def shared_url() -> str:
    return REDIS_URL
