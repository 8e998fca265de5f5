"""A real Redis Cluster for the tests, started from the ``redis-server`` binary.

``RedisClusterProcs(masters=3, replicas=0).start()`` starts ``masters * (1 + replicas)``
``redis-server --cluster-enabled yes`` processes on free ports in 7300-7399 (each with its own
``nodes-<port>.conf`` in a temp dir, no persistence), joins them with ``redis-cli --cluster
create`` and waits until every node says ``cluster_state:ok``. ``cluster-node-timeout`` is 1 s so
a killed master's replica takes over within a few seconds. ``url`` is the
``redis+cluster://host:port,...`` the store connects to.

``plain_redis(dir)`` starts a plain ``redis-server`` (no persistence) in the same port range: the
queue's own Redis.

The session fixtures ``redis_cluster`` (3 masters, no replicas: shared by every test of a
session) and ``queue_redis`` live in ``tests/conftest.py``; the failover test starts its own
cluster with replicas because it kills a master.
"""

from __future__ import annotations

import shutil
import signal
import socket
import subprocess
import time
from pathlib import Path
from typing import Any

import redis

from tests.processes import worker_ports

PORTS = range(7300, 7400)
NODE_TIMEOUT_MS = 1000
_taken: set[int] = set()


def _free(port: int) -> bool:
    for p in (port, port + 10000):  # the cluster bus listens on port + 10000
        with socket.socket() as s:
            try:
                s.bind(("127.0.0.1", p))
            except OSError:
                return False
    return True


def free_ports(n: int) -> list[int]:
    """``n`` ports in 7300-7399 free now (and their bus ports), not handed out before, in this
    process's share of them (``tests.processes.worker_ports``: one slice per pytest-xdist
    worker)."""
    out = [p for p in worker_ports(PORTS[0], PORTS[-1]) if p not in _taken and _free(p)][:n]
    if len(out) < n:
        raise RuntimeError(f"only {len(out)} free ports in 7300-7399, {n} needed")
    _taken.update(out)
    return out


def binaries() -> tuple[str, str] | None:
    server, cli = shutil.which("redis-server"), shutil.which("redis-cli")
    return (server, cli) if server and cli else None


def _wait(pred: Any, timeout: float, what: str) -> None:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        try:
            if pred():
                return
        except (redis.ConnectionError, redis.TimeoutError, redis.ResponseError):
            pass
        time.sleep(0.05)
    raise RuntimeError(f"timed out after {timeout}s waiting for {what}")


class PortTaken(RuntimeError):
    """A server could not keep its port (a concurrent test session started on it first)."""


class Node:
    def __init__(self, server: str, port: int, data: Path, cluster: bool) -> None:
        self.port = port
        self.data = data
        args = [
            server,
            "--port",
            str(port),
            "--bind",
            "127.0.0.1",
            "--dir",
            str(data),
            "--save",
            "",
            "--appendonly",
            "no",
            "--logfile",
            str(data / f"{port}.log"),
        ]
        if cluster:
            args += [
                "--cluster-enabled",
                "yes",
                "--cluster-config-file",
                str(data / f"nodes-{port}.conf"),
                "--cluster-node-timeout",
                str(NODE_TIMEOUT_MS),
            ]
        self.proc = subprocess.Popen(args, stdin=subprocess.DEVNULL, start_new_session=True)
        self.client = redis.Redis(port=port, socket_connect_timeout=1, socket_timeout=5)

        def up() -> bool:
            if self.proc.poll() is not None:  # e.g. another test session took the port meanwhile
                raise PortTaken(f"redis-server on port {port} exited:\n{self.log()[-1000:]}")
            return bool(self.client.ping())

        _wait(up, 20, f"redis-server on port {port}")

    def alive(self) -> bool:
        return self.proc.poll() is None

    def kill(self) -> None:
        self.proc.send_signal(signal.SIGKILL)
        self.proc.wait(10)

    def stop(self) -> None:
        if self.alive():
            self.proc.send_signal(signal.SIGCONT)
            self.proc.send_signal(signal.SIGKILL)
            self.proc.wait(10)
        self.client.close()

    def log(self) -> str:
        return (self.data / f"{self.port}.log").read_text(errors="replace")


class RedisClusterProcs:
    def __init__(self, data: Path, masters: int = 3, replicas: int = 0) -> None:
        self.data, self.masters, self.replicas = data, masters, replicas
        self.nodes: list[Node] = []

    @property
    def url(self) -> str:
        return "redis+cluster://" + ",".join(f"127.0.0.1:{n.port}" for n in self.nodes)

    def start(self) -> RedisClusterProcs:
        found = binaries()
        if found is None:
            raise RuntimeError("redis-server and redis-cli are needed (apt install redis-server)")
        server, cli = found
        self.data.mkdir(parents=True, exist_ok=True)
        for attempt in range(3):  # ports raced away by a concurrent session: take others
            ports = free_ports(self.masters * (1 + self.replicas))
            self.nodes = []
            try:
                for port in ports:  # one by one, so a failure stops those already started
                    self.nodes.append(Node(server, port, self.data, cluster=True))
                break
            except PortTaken:
                self.stop()
                if attempt == 2:
                    raise
        try:
            out = subprocess.run(
                [
                    cli,
                    "--cluster",
                    "create",
                    *(f"127.0.0.1:{p}" for p in ports),
                    "--cluster-replicas",
                    str(self.replicas),
                    "--cluster-yes",
                ],
                capture_output=True,
                text=True,
                timeout=60,
                stdin=subprocess.DEVNULL,
            )
            if out.returncode != 0:
                raise RuntimeError(
                    f"redis-cli --cluster create failed:\n{out.stdout}\n{out.stderr}"
                )
            _wait(self._ok, 30, "cluster_state:ok on every node")
            if self.replicas:
                _wait(self._replicas_linked, 30, "every replica linked to its master")
        except BaseException:
            self.stop()
            raise
        return self

    def _ok(self) -> bool:
        return all(
            b"cluster_state:ok" in n.client.execute_command("CLUSTER", "INFO")
            for n in self.nodes
            if n.alive()
        )

    def _replicas_linked(self) -> bool:
        for n in self.nodes:
            info = n.client.info("replication")
            if info["role"] == "slave" and info.get("master_link_status") != "up":
                return False
        return True

    def master_of(self, key: str) -> Node:
        """The node now serving ``key``'s slot as master."""
        live = next(n for n in self.nodes if n.alive())
        slot = int(live.client.execute_command("CLUSTER", "KEYSLOT", key))
        for n in self.nodes:
            if not n.alive():
                continue
            for first, last, *holders in n.client.execute_command("CLUSTER", "SLOTS"):
                if first <= slot <= last:
                    port = int(holders[0][1])
                    return next(x for x in self.nodes if x.port == port)
        raise RuntimeError(f"no live node knows slot {slot}")

    def wait_until_served(self, key: str, dead: Node, timeout: float = 30) -> Node:
        """Wait until a node other than ``dead`` serves ``key``'s slot as master (a replica was
        promoted) and the cluster is ok again; returns the new master."""
        found: list[Node] = []

        def promoted() -> bool:
            m = self.master_of(key)
            if m is dead or m.client.info("replication")["role"] != "master" or not self._ok():
                return False
            found.append(m)
            return True

        _wait(promoted, timeout, f"a replica to take over the slot of {key!r}")
        return found[-1]

    def stop(self) -> None:
        for n in self.nodes:
            n.stop()


def plain_redis(data: Path) -> Node:
    found = binaries()
    if found is None:
        raise RuntimeError("redis-server is needed (apt install redis-server)")
    data.mkdir(parents=True, exist_ok=True)
    for _ in range(2):
        try:
            return Node(found[0], free_ports(1)[0], data, cluster=False)
        except PortTaken:
            continue
    return Node(found[0], free_ports(1)[0], data, cluster=False)


def purge_cluster(client: Any, prefix: str) -> None:
    """Delete every key under ``prefix:`` on every master of a ``RedisCluster``."""
    for node in client.get_primaries():
        conn = client.get_redis_connection(node)
        for key in conn.scan_iter(match=f"{prefix}:*", count=1000):
            conn.delete(key)
