"""``events.store.pids``: a pid found in a file names a live process only while it runs, not
once it exited (a zombie not reaped yet is gone too) nor when the pid now runs something else."""

from __future__ import annotations

import os
import subprocess
import sys
import time
from pathlib import Path

import pytest

from events.store import pids

linux = pytest.mark.skipif(not Path("/proc/self/stat").exists(), reason="needs /proc")


def test_a_running_process_is_alive_and_its_command_line_is_checked() -> None:
    assert pids.alive(os.getpid())
    assert pids.alive(os.getpid(), lambda args: any(b"python" in a for a in args))
    assert not pids.alive(os.getpid(), pids.redis_server)  # a reused pid: not the server meant


@linux
def test_an_exited_process_is_gone_before_and_after_it_is_reaped() -> None:
    child = subprocess.Popen([sys.executable, "-c", "pass"])
    deadline = time.monotonic() + 10
    while Path(f"/proc/{child.pid}/stat").read_text().rsplit(")", 1)[1].split()[0] != "Z":
        assert time.monotonic() < deadline, "the child did not exit"
        time.sleep(0.01)
    assert not pids.alive(child.pid)  # exited, not yet reaped by its parent (us)
    child.wait()
    assert not pids.alive(child.pid)


def test_what_counts_as_a_redis_server() -> None:
    assert pids.redis_server([b"/usr/bin/redis-server", b"127.0.0.1:6379", b""])
    assert pids.redis_server([b"valkey-server", b"*:7000"])
    assert not pids.redis_server([b"/usr/bin/python3", b"-m", b"rfgcli", b"run"])
