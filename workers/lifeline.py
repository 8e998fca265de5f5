"""Processes that die with their parent: Linux ``prctl(PR_SET_PDEATHSIG)``.

A process killed with SIGKILL runs no clean-up, so whatever it started lives on, re-parented to
init: ``rfg run``'s API, workers and embedded store, or RQ's scheduler (a fork of ``rfg worker``
that holds copies of the worker's Redis sockets, so the worker's pending blocking dequeue kept
taking jobs for a process that no longer existed). ``PR_SET_PDEATHSIG`` asks the kernel to send
a signal to a process when the thread that forked it ends, however it ends; it survives
``execve``. This module sets it two ways:

* ``command(cmd, sig)`` wraps a command line in a launcher (``python -I -S lifeline.py PARENT
  SIG -- CMD...``: stdlib only, a few milliseconds) that sets the signal and ``exec``s the
  command, so the process that runs is the command itself, with its own pid and command line
  (``rfg run`` starts its children so; ``preexec_fn`` would do the same in the forked child of a
  process that might have threads, which Python warns against);
* ``children_die_with_me(sig)`` registers an ``os.register_at_fork`` hook: every process this
  one forks from then on (RQ's scheduler, forked by ``multiprocessing``) gets the signal when
  this one dies. RQ 3.0 has no public hook around that fork, and the standard library's is
  enough: nothing of RQ is patched.

Either way the child checks, right after setting it, that its parent is still the one that
forked it, and exits if not (the parent died in between: the kernel would never send the
signal). Elsewhere than on Linux nothing is set (``supported()`` is False) and children outlive
a killed parent, as before.
"""

from __future__ import annotations

import os
import signal
import sys
from pathlib import Path

PR_SET_PDEATHSIG = 1  # <linux/prctl.h>
_installed = False


def supported() -> bool:
    return sys.platform.startswith("linux")


def die_with_parent(sig: int, parent: int) -> bool:
    """Have the kernel send ``sig`` to this process when ``parent`` (the process, and thread,
    that forked it) ends; exit at once if it already has. False where it cannot be set."""
    if not supported():
        return False
    import ctypes

    libc = ctypes.CDLL(None, use_errno=True)
    if libc.prctl(PR_SET_PDEATHSIG, int(sig), 0, 0, 0) != 0:
        return False
    if os.getppid() != parent:  # it died before the signal was set: nobody would send it
        os._exit(1)
    return True


def children_die_with_me(sig: int = signal.SIGKILL) -> None:
    """Every process this one forks from now on is sent ``sig`` when the thread that forked it
    (here: RQ's main loop, the process's main thread) ends. Installed once per process."""
    global _installed
    if _installed or not supported():
        return
    _installed = True
    parent = [os.getpid()]

    def before() -> None:
        parent[0] = os.getpid()

    def in_child() -> None:
        die_with_parent(sig, parent[0])

    os.register_at_fork(before=before, after_in_child=in_child)


def command(cmd: list[str], sig: int) -> list[str]:
    """``cmd`` started so that it is sent ``sig`` when the process that starts it (this one)
    dies: run through the launcher below (on Linux; elsewhere ``cmd`` unchanged)."""
    if not supported():
        return list(cmd)
    launcher = str(Path(__file__).resolve())
    return [sys.executable, "-I", "-S", launcher, str(os.getpid()), str(int(sig)), "--", *cmd]


def _launch(argv: list[str]) -> int:
    """``PARENT SIG -- CMD...``: set the parent-death signal, then become ``CMD``."""
    if len(argv) < 4 or argv[2] != "--":
        print("usage: lifeline.py PARENT_PID SIGNAL -- COMMAND [ARG...]", file=sys.stderr)
        return 2
    parent, sig, cmd = int(argv[0]), int(argv[1]), argv[3:]
    die_with_parent(sig, parent)
    try:
        os.execvp(cmd[0], cmd)
    except OSError as exc:
        print(f"lifeline: cannot run {cmd[0]}: {exc}", file=sys.stderr)
        return 127
    return 0  # (not reached: exec replaced this process)


if __name__ == "__main__":
    sys.exit(_launch(sys.argv[1:]))
