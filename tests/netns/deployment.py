"""The whole service on test hosts (``tests.netns.harness.Net``): a 3-master Redis Cluster with
one replica each (``n1``..``n6``, configured from ``deploy/redis-cluster.conf``), the RQ Redis
(``rq``), two API hosts (``api1``, ``api2``: gunicorn as ``rfg run`` serves), two worker hosts
(``w1``, ``w2``: ``rfg worker``), client hosts ``ca`` and ``cb`` and the checker's host ``ctl``.

Every server listens on its host's own address (``10.77.0.x``), never on loopback, and is started
with ``ip netns exec`` in its own process group; ``Deployment.stop()`` (and ``Net.stop``) kill
them all.
"""

from __future__ import annotations

import json
import subprocess
import sys
import time
import urllib.request
from pathlib import Path
from typing import Any

import redis

from rfgcli.run import api_command
from tests.netns.harness import Net
from tests.processes import ROOT, Proc, kill_group, spawn

NODES = ["n1", "n2", "n3", "n4", "n5", "n6"]
HOSTS = [*NODES, "rq", "api1", "api2", "w1", "w2", "ca", "cb", "ctl"]
APIS = ["api1", "api2"]
WORKERS = ["w1", "w2"]
REDIS_PORT = 6379
API_PORT = 8000
ADMIN = "netns-admin-token"
CONFIG = ROOT / "deploy" / "redis-cluster.conf"
#: the store URL's options: an append is answered once its replica has it (see docs/deployment.md)
WAIT = "wait=1&wait_timeout=0.5"


def _wait(pred: Any, timeout: float, what: str) -> None:
    deadline = time.monotonic() + timeout
    last: Exception | None = None
    while time.monotonic() < deadline:
        try:
            if pred():
                return
        except Exception as exc:  # noqa: BLE001 - retried until the deadline
            last = exc
        time.sleep(0.1)
    raise TimeoutError(f"timed out after {timeout}s waiting for {what} (last error: {last})")


class Deployment:
    def __init__(
        self, net: Net, data: Path, node_timeout_ms: int = 2000, single: bool = False
    ) -> None:
        self.net, self.data, self.node_timeout_ms = net, data, node_timeout_ms
        #: the store on one plain Redis (host ``n1``, AOF fsynced) instead of the cluster
        self.single = single
        self.procs: dict[str, Proc] = {}
        self.prefix = "rfg"
        #: client host -> the games its players play now (set by ``schedules.run``)
        self.games_on: dict[str, list[str]] = {}

    # -- addresses ------------------------------------------------------------------------

    def addr(self, host: str) -> str:
        return self.net.ip[host]

    @property
    def store_url(self) -> str:
        if self.single:
            return f"redis://{self.addr('n1')}:{REDIS_PORT}/0"
        nodes = ",".join(f"{self.addr(n)}:{REDIS_PORT}" for n in NODES)
        return f"redis+cluster://{nodes}?{WAIT}"

    @property
    def queue_url(self) -> str:
        return f"redis://{self.addr('rq')}:{REDIS_PORT}/0"

    def api_base(self, host: str) -> str:
        return f"http://{self.addr(host)}:{API_PORT}"

    # -- starting -------------------------------------------------------------------------

    def _spawn(self, host: str, name: str, args: list[str], env: dict[str, str]) -> Proc:
        proc = spawn(self.net.command(host, args), env, self.data / f"{name}.log")
        self.procs[name] = proc
        return proc

    def start_redis(self, host: str, cluster: bool) -> None:
        d = self.data / host
        d.mkdir(parents=True, exist_ok=True)
        args = ["redis-server"]
        if cluster:
            args.append(str(CONFIG))
            args += ["--cluster-node-timeout", str(self.node_timeout_ms)]
            args += ["--cluster-announce-ip", self.addr(host)]
        elif host == "rq":  # the queue: job bookkeeping only, rebuilt by the sweep
            args += ["--save", "", "--appendonly", "no"]
        else:  # a single store Redis: persistence as on the cluster's nodes
            args += ["--save", "", "--appendonly", "yes", "--appendfsync", "always"]
        args += ["--port", str(REDIS_PORT), "--bind", self.addr(host), "--dir", str(d)]
        args += ["--protected-mode", "no", "--logfile", str(d / "redis.log")]
        self._spawn(host, host, args, {})

    def kill_redis(self, host: str) -> None:
        """SIGKILL ``host``'s redis-server (its AOF keeps every acknowledged write)."""
        kill_group(self.procs.pop(host))

    def redis_on(self, host: str, **kw: Any) -> redis.Redis:
        """A client of ``host``'s Redis (use it inside a host: ``net.call``)."""
        return redis.Redis(
            host=self.addr(host), port=REDIS_PORT, socket_timeout=3, socket_connect_timeout=2, **kw
        )

    def start_single(self) -> None:
        self.start_redis("n1", cluster=False)
        self.start_redis("rq", cluster=False)
        self.net.call(
            "ctl",
            lambda: _wait(
                lambda: self.redis_on("n1").ping() and self.redis_on("rq").ping(),
                30,
                "redis-server",
            ),
        )

    def start_cluster(self) -> None:
        for n in NODES:
            self.start_redis(n, cluster=True)
        self.start_redis("rq", cluster=False)

        def pings() -> bool:
            for h in [*NODES, "rq"]:
                if self.procs[h].poll() is not None:
                    raise RuntimeError(f"redis on {h} exited: {self.procs[h].log()[-500:]}")
                self.redis_on(h).ping()
            return True

        self.net.call("ctl", lambda: _wait(pings, 30, "every redis-server"))
        out = subprocess.run(
            self.net.command(
                "ctl",
                [
                    "redis-cli",
                    "--cluster",
                    "create",
                    *(f"{self.addr(n)}:{REDIS_PORT}" for n in NODES),
                    "--cluster-replicas",
                    "1",
                    "--cluster-yes",
                ],
            ),
            capture_output=True,
            text=True,
            timeout=60,
            stdin=subprocess.DEVNULL,
        )
        if out.returncode != 0:
            raise RuntimeError(f"redis-cli --cluster create failed:\n{out.stdout}\n{out.stderr}")
        self.net.call("ctl", lambda: _wait(self.healthy, 60, "a healthy cluster"), timeout=90)

    def topology(self) -> dict[str, str]:
        """replica host -> its master's host, as the replicas say (run inside a host)."""
        by_ip = {self.addr(h): h for h in NODES}
        out = {}
        for n in NODES:
            info = self.redis_on(n).info("replication")
            if info["role"] == "slave":
                out[n] = by_ip[str(info["master_host"])]
        return out

    def master_of_game(self, game_id: str) -> str:
        """The node now serving ``game_id``'s slot as master (run inside a host)."""
        key = f"{self.prefix}:{{g:{game_id}}}:s"
        slot = int(self.redis_on(NODES[0]).execute_command("CLUSTER", "KEYSLOT", key))
        by_ip = {self.addr(h): h for h in NODES}
        for first, last, master, *_ in self.redis_on(NODES[0]).execute_command("CLUSTER", "SLOTS"):
            if int(first) <= slot <= int(last):
                ip = master[0].decode() if isinstance(master[0], bytes) else str(master[0])
                return by_ip[ip]
        raise RuntimeError(f"no master serves slot {slot}")

    def masters(self) -> list[str]:
        """The nodes that are masters now (run inside a host)."""
        return [n for n in NODES if self.redis_on(n).info("replication")["role"] == "master"]

    def healthy(self) -> bool:
        """Every node up with cluster_state ok, 3 masters each with a linked replica."""
        for n in NODES:
            c = self.redis_on(n)
            if b"cluster_state:ok" not in c.execute_command("CLUSTER", "INFO"):
                return False
            info = c.info("replication")
            if info["role"] == "slave" and info.get("master_link_status") != "up":
                return False
            if info["role"] == "master" and int(info.get("connected_slaves", 0)) < 1:
                return False
        return len(self.masters()) == 3

    def start_service(self) -> None:
        env = {
            "RFG_STORE_URL": self.store_url,
            "REDIS_URL": self.store_url,
            "RFG_QUEUE_URL": self.queue_url,
            "RFG_STORE_PREFIX": self.prefix,
            "RFG_ADMIN_TOKEN": ADMIN,
            "RFG_DISPATCH": "1",
            "RFG_RATE_LIMITS": "0",
            "RFG_MAX_OPEN_GAMES_PER_ADDRESS": "0",
            "RFG_REDIS_TIMEOUT": "3",
            "RFG_DATA_DIR": str(self.data / "rfg-data"),
        }
        for host in APIS:
            cmd = api_command(f"{self.addr(host)}:{API_PORT}", workers=1)
            self._spawn(host, host, cmd, env)
        for host in WORKERS:
            cmd = [
                sys.executable,
                "-m",
                "rfgcli.main",
                "worker",
                "--url",
                self.store_url,
                "--prefix",
                self.prefix,
                "--queue-url",
                self.queue_url,
                "--sweep-interval",
                "0.5",
                "--stale-after",
                "3",
            ]
            self._spawn(host, host, cmd, {"RFG_REDIS_TIMEOUT": "3"})

        def up() -> bool:
            for host in APIS:
                if self.procs[host].poll() is not None:
                    raise RuntimeError(f"{host} exited: {self.procs[host].log()[-2000:]}")
                with urllib.request.urlopen(self.api_base(host) + "/healthz", timeout=2) as r:
                    json.loads(r.read())
            return True

        self.net.call("ctl", lambda: _wait(up, 60, "both API hosts"), timeout=90)

    def start(self) -> Deployment:
        if self.single:
            self.start_single()
        else:
            self.start_cluster()
        self.start_service()
        return self

    def stop(self) -> None:
        for proc in self.procs.values():
            kill_group(proc)

    def crashed(self) -> list[str]:
        """Service processes (API and worker hosts) that exited."""
        return [
            h for h in [*APIS, *WORKERS] if h in self.procs and self.procs[h].poll() is not None
        ]

    def error_lines(self) -> int:
        """Lines logged at ERROR by the API and worker hosts (outages the sweep logs included)."""
        return sum(
            self.procs[h].log().count('"level": "ERROR"')
            for h in [*APIS, *WORKERS]
            if h in self.procs
        )
