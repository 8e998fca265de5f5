"""Whether a process id names a live process, and what that process runs.

One answer for every caller that finds a pid in a file or a listing (the embedded Redis server's
pid file, ``rfg run``'s supervisor file, the processes ``rfg run`` started): a pid is live when
the process exists and has not exited (a zombie, exited but not yet reaped by its parent, is
gone), and it is *the* process meant when its command line says so (a pid reused by another
program is not). Where there is no ``/proc`` (macOS) the existence check is all there is, so
the pid is trusted.
"""

from __future__ import annotations

import os
from collections.abc import Callable
from pathlib import Path

#: whether this system describes processes under /proc (Linux)
_PROC = Path("/proc/self/stat").exists()


def alive(pid: int, runs: Callable[[list[bytes]], bool] | None = None) -> bool:
    """Whether ``pid`` is a live process (not a zombie) and, with ``runs``, whether its command
    line (the arguments as bytes) is the one meant."""
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        pass  # another user's process: it exists
    if not _PROC:
        return True
    try:
        stat = Path(f"/proc/{pid}/stat").read_text()
        args = Path(f"/proc/{pid}/cmdline").read_bytes().split(b"\0")
    except OSError:
        return False  # it exited meanwhile
    if stat.rsplit(")", 1)[-1].split()[0] == "Z":
        return False
    return runs is None or runs(args)


def redis_server(args: list[bytes]) -> bool:
    """A command line of a Redis (or Valkey) server."""
    return any(b"redis" in a or b"valkey" in a for a in args)
