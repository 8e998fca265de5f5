"""``rfg store status`` / ``rfg store stop``: the store the API and the workers use.

``status`` says whether the store answers (exit 0) or not (exit 3), with the embedded server's
directory, pid, socket and append-only file size, or the Redis server's version, and how many
keys and connected clients it has. ``stop`` shuts the embedded server down cleanly (its AOF is
flushed; the data stay in the directory until ``make clean``). An external Redis
(``REDIS_URL=redis://...``) is not ours to stop: ``stop`` says so and exits 2.

Every process that connects to the embedded server starts it again if it is down, so ``stop``
refuses while other clients (the API, workers) are connected, unless ``--force``: stop them
first (Ctrl-C on ``make run`` stops all three). It also refuses, ``--force`` or not, while an
``rfg run`` supervises the server (its pid in ``<data dir>/supervisor.pid``): that command
would start it again within a second; stop it instead (Ctrl-C, or ``kill <pid>``).
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

import redis

from events.store import pids

NOT_RUNNING = 3
#: in the embedded server's directory: the pid of the ``rfg run`` that runs and restarts it
SUPERVISOR_FILE = "supervisor.pid"


def add_parser(sub: Any) -> None:
    p = sub.add_parser(
        "store",
        help="status of the store, stop the embedded server",
        description="The store the API and workers use: the embedded server in <data dir>/redis, or $REDIS_URL.",
    )
    common = argparse.ArgumentParser(add_help=False)
    common.add_argument(
        "--url",
        default=None,
        help="store URL (default: $RFG_STORE_URL, $REDIS_URL, else the embedded server in <data dir>/redis)",
    )
    ss = p.add_subparsers(dest="action", required=True)
    ss.add_parser("status", parents=[common], help="is the store up? (exit 0 yes, 3 no)")
    st = ss.add_parser(
        "stop", parents=[common], help="stop the embedded server (flushes its append-only file)"
    )
    st.add_argument(
        "--force",
        action="store_true",
        help="stop it even while other processes are connected (they will start it again)",
    )
    st.add_argument("--timeout", type=float, default=10.0, help="seconds to wait for it to exit")
    p.set_defaults(func=run)


def _url(args: argparse.Namespace) -> str | None:
    from workers.settings import store_url_from_env

    return args.url if args.url is not None else store_url_from_env()


def _is_embedded(url: str | None) -> bool:
    return not url or url.startswith("embedded:")


def _client(**kwargs: Any) -> redis.Redis:
    return redis.Redis(socket_connect_timeout=2, socket_timeout=5, **kwargs)


def _size(path: Path) -> int:
    if path.is_dir():
        return sum(p.stat().st_size for p in path.rglob("*") if p.is_file())
    return path.stat().st_size if path.exists() else 0


def _human(n: float) -> str:
    for unit in ("B", "KB", "MB", "GB"):
        if n < 1024 or unit == "GB":
            return f"{n:.0f} {unit}" if unit == "B" else f"{n:.1f} {unit}"
        n /= 1024
    return f"{n:.1f} GB"


def _others(client: redis.Redis) -> int:
    """Clients connected besides this one."""
    return max(0, len(client.client_list()) - 1)


def supervisor(data_dir: Path) -> int | None:
    """The pid of the ``rfg run`` supervising the embedded server in ``data_dir``, if one does
    (a file left by one that was killed names a dead or unrelated process: None)."""
    try:
        pid = int((data_dir / SUPERVISOR_FILE).read_text().strip())
    except (OSError, ValueError):
        return None
    return pid if pids.alive(pid, _rfg_run) else None


def _rfg_run(args: list[bytes]) -> bool:
    """A command line of ``rfg run`` (not a reused pid)."""
    return b"run" in args and any(b"rfg" in a for a in args)


def status(url: str | None) -> int:
    import events.store

    if _is_embedded(url):
        server = events.store.embedded_server(url)
        where = f"embedded server in {server.data_dir}"
        if not server.is_running():
            print(
                f"{where}: not running (it starts with the first command that needs it; "
                f"data: {_human(_size(server.data_dir))})"
            )
            return NOT_RUNNING
        client = _client(unix_socket_path=str(server.socket_path))
        try:
            keys, others = client.dbsize(), _others(client)
        finally:
            client.close()
        aof = _size(server.data_dir / "appendonlydir") + _size(server.data_dir / "appendonly.aof")
        sup = supervisor(server.data_dir)
        print(
            f"{where}: running (pid {server.pid()}, socket {server.socket_path}, {keys} keys, "
            f"append-only file {_human(aof)}, {others} other client(s) connected)"
            + (f"; supervised by rfg run (pid {sup}), which restarts it" if sup else "")
        )
        return 0
    assert url is not None
    scheme = urlsplit(url).scheme
    if scheme not in ("redis", "rediss", "unix"):
        print(
            f"rfg store: {url!r} is not a store URL this command knows (redis://, rediss://, "
            f"unix://, embedded://)",
            file=sys.stderr,
        )
        return 2
    client = redis.Redis.from_url(url, socket_connect_timeout=2, socket_timeout=5)
    try:
        info = client.info("server")
        keys, others = client.dbsize(), _others(client)
    except (redis.ConnectionError, redis.TimeoutError) as exc:
        print(f"Redis at {_redact(url)}: not answering ({exc})")
        return NOT_RUNNING
    finally:
        client.close()
    print(
        f"Redis at {_redact(url)}: up (version {info.get('redis_version', '?')}, {keys} keys in "
        f"this database, {others} other client(s) connected)"
    )
    return 0


def _redact(url: str) -> str:
    parts = urlsplit(url)
    if parts.password:
        return url.replace(f":{parts.password}@", ":***@")
    return url


def stop(url: str | None, force: bool, timeout: float) -> int:
    import events.store

    if not _is_embedded(url):
        print(
            f"rfg store: the store is the Redis at {_redact(url or '')}, which this project "
            f"did not start; stop it with its own service manager (e.g. systemctl stop "
            f"redis), or unset REDIS_URL to manage the embedded server",
            file=sys.stderr,
        )
        return 2
    server = events.store.embedded_server(url)
    if not server.is_running():
        print(f"the embedded server in {server.data_dir} is not running")
        return 0
    pid = server.pid()
    sup = supervisor(server.data_dir)
    if sup is not None:
        print(
            f"rfg store: the embedded server in {server.data_dir} is run by rfg run (pid "
            f"{sup}), which would start it again: stop that instead (Ctrl-C, or kill {sup}), "
            f"and it stops the server with the API and the workers",
            file=sys.stderr,
        )
        return 1
    client = _client(unix_socket_path=str(server.socket_path))
    try:
        others = _others(client)
    finally:
        client.close()
    if others and not force:
        print(
            f"rfg store: {others} other client(s) (the API, workers, a ladder run?) are "
            f"connected to the embedded server in {server.data_dir}, and would start it "
            f"again; stop them first (Ctrl-C on make run), or pass --force",
            file=sys.stderr,
        )
        return 1
    server.stop(timeout=timeout)
    if server.is_running():
        print(
            f"rfg store: the embedded server (pid {pid}) did not stop within {timeout:.0f}s; "
            f"kill {pid} stops it (its AOF is fsynced on every write)",
            file=sys.stderr,
        )
        return 1
    print(f"stopped the embedded server in {server.data_dir} (pid {pid}); its data stay there")
    return 0


def run(args: argparse.Namespace) -> int:
    url = _url(args)
    try:
        if args.action == "status":
            return status(url)
        return stop(url, args.force, args.timeout)
    except ValueError as exc:  # a malformed embedded:// URL
        print(f"rfg store: {exc}", file=sys.stderr)
        return 2
