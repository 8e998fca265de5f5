"""Test hosts on one machine: each host a Linux network namespace of its own, wired to one bridge.

``Net(["n1", "n2", "api1", ...]).start()`` makes, for every host, a namespace
``rfgn<pid>-<host>`` with ``lo`` and ``eth0`` (a veth whose other end is a port of the bridge
``br0`` in the switch namespace ``rfgn<pid>-sw``) and an address ``10.77.0.<10+i>/24``. Nothing
is added to the machine's own namespace: hosts reach each other only through the bridge, never
through loopback, and the test process reaches a host by running a thread inside its namespace
(``Net.call(host, fn)``, ``setns`` on the calling thread only).

Faults, all made inside the hosts' namespaces (with iproute2, and a process of the host's own for
``impair``):

* ``partition(side_a, side_b)`` - every host of ``side_a`` loses every packet to and from every
  host of ``side_b``: each side's neighbour entry for the other side's addresses is replaced by a
  permanent entry naming a MAC address nobody has, so frames go into the bridge and are dropped
  there, silently, in both directions (as a cut cable or a dead switch port: no RST, no ICMP; a
  TCP peer only notices by its timeouts). Established connections stall as they would.
* ``heal()`` - every such entry removed (the hosts learn the real addresses again by ARP).
* ``rate(host, kbit)`` - an ``htb`` bandwidth cap on a host's ``eth0`` (queueing delay).
* ``impair(host, to, delay_ms, loss)`` - every packet ``host`` sends to the hosts ``to`` delayed
  by ``delay_ms`` and dropped with probability ``loss``, in userspace: ``tests/netns/impair.py``
  in ``host``'s namespace owns a TUN device the routes to those hosts go through and sends each
  kept packet on after the delay by a marked raw socket (policy routing: ``ip rule fwmark``), so
  per-packet delay and random loss without ``tc netem``. Impair both hosts of a pair for both
  directions. ``unimpair()`` ends it and returns its counts (packets seen, dropped, sent).

Not available on every kernel: ``tc netem`` (delay, loss), nor ``iptables``/``nft`` as
commands, nor ``tc`` classifiers. ``netem_available()`` says whether this kernel has netem; the
schedule of delay and loss (``tests.netns.schedules.lossy_api_links``) uses netem where it exists
and ``impair`` otherwise (the kernel these tests run on in CI is built without ``sch_netem``).

Bounded and self-cleaning: every command has a timeout; ``stop()`` ends the impairments, kills
every process started in the hosts (``ip netns pids``: the impairments too) and deletes the
namespaces, and runs also from ``atexit``; ``clean_stale()`` (called by ``start``) removes what a
killed earlier run (a pid no longer alive) left behind.
"""

from __future__ import annotations

import atexit
import contextlib
import ctypes
import json
import os
import re
import select
import shutil
import signal
import subprocess
import sys
import threading
from collections.abc import Callable, Iterable, Sequence
from pathlib import Path
from typing import Any, TypeVar

from events.store.pids import alive

T = TypeVar("T")

PREFIX = "rfgn"
SUBNET = "10.77.0"
#: a MAC address no interface has (locally administered): frames to it die in the bridge
NOWHERE = "02:00:00:de:ad:00"
#: the userspace delay-and-loss process (``Net.impair``)
IMPAIR = Path(__file__).with_name("impair.py")
_CLONE_NEWNET = 0x40000000
_libc = ctypes.CDLL(None, use_errno=True)


class NetUnavailable(RuntimeError):
    """These test hosts cannot be made here (not root, no ``ip``): the reason says which."""


def why_unavailable() -> str | None:
    """None when namespaces can be made here, else what is missing."""
    if os.geteuid() != 0:
        return "network namespaces need root (ip netns add)"
    if shutil.which("ip") is None:
        return "the ip command (Debian package iproute2) is not installed"
    if not Path("/run").is_dir():
        return "no /run for ip netns"
    return None


def sh(*args: str, timeout: float = 20, check: bool = True) -> str:
    """Run a command (no shell), bounded; its stdout."""
    out = subprocess.run(
        list(args), capture_output=True, text=True, timeout=timeout, stdin=subprocess.DEVNULL
    )
    if check and out.returncode != 0:
        raise RuntimeError(f"{' '.join(args)} failed ({out.returncode}): {out.stderr.strip()}")
    return out.stdout


def _namespaces() -> list[str]:
    return [line.split()[0] for line in sh("ip", "netns", "list").splitlines() if line.strip()]


def _kill_in(ns: str) -> None:
    for pid in sh("ip", "netns", "pids", ns, check=False).split():
        with contextlib.suppress(ProcessLookupError, ValueError):
            os.kill(int(pid), signal.SIGCONT)
            os.kill(int(pid), signal.SIGKILL)


def delete_namespaces(names: Iterable[str]) -> None:
    for ns in names:
        _kill_in(ns)
        sh("ip", "netns", "del", ns, check=False)


def clean_stale() -> list[str]:
    """Delete the namespaces (and kill the processes) of earlier runs whose process is gone."""
    stale = []
    for ns in _namespaces():
        m = re.fullmatch(rf"{PREFIX}(\d+)-.+", ns)
        if m and not alive(int(m.group(1))):
            stale.append(ns)
    delete_namespaces(stale)
    return stale


class Net:
    """Hosts in namespaces on one bridge; see the module docstring."""

    def __init__(self, hosts: Sequence[str]) -> None:
        if len(set(hosts)) != len(hosts) or len(hosts) > 200:
            raise ValueError("host names must be unique, at most 200")
        self.tag = f"{PREFIX}{os.getpid()}"
        self.hosts = list(hosts)
        self.ip = {h: f"{SUBNET}.{10 + i}" for i, h in enumerate(hosts)}
        self.switch = f"{self.tag}-sw"
        self._cut: set[tuple[str, str]] = set()
        self._lock = threading.Lock()
        self._started = False
        self._impaired: dict[str, subprocess.Popen[str]] = {}

    def ns(self, host: str) -> str:
        return f"{self.tag}-{host}"

    def start(self) -> Net:
        reason = why_unavailable()
        if reason:
            raise NetUnavailable(reason)
        clean_stale()
        delete_namespaces(n for n in _namespaces() if n.startswith(f"{self.tag}-"))
        self._started = True
        atexit.register(self.stop)
        sh("ip", "netns", "add", self.switch)
        sh("ip", "-n", self.switch, "link", "add", "br0", "type", "bridge")
        sh("ip", "-n", self.switch, "link", "set", "br0", "up")
        for i, host in enumerate(self.hosts):
            ns = self.ns(host)
            sh("ip", "netns", "add", ns)
            port = f"p{i}"
            sh(
                "ip",
                "-n",
                self.switch,
                "link",
                "add",
                port,
                "type",
                "veth",
                "peer",
                "name",
                "eth0",
                "netns",
                ns,
            )
            sh("ip", "-n", self.switch, "link", "set", port, "master", "br0", "up")
            sh("ip", "-n", ns, "addr", "add", f"{self.ip[host]}/24", "dev", "eth0")
            sh("ip", "-n", ns, "link", "set", "eth0", "up")
            sh("ip", "-n", ns, "link", "set", "lo", "up")
        return self

    def stop(self) -> None:
        if not self._started:
            return
        self._started = False
        with contextlib.suppress(Exception):
            self.unimpair()
        delete_namespaces([*(self.ns(h) for h in self.hosts), self.switch])

    # -- processes and threads inside hosts -------------------------------------------------

    def command(self, host: str, args: Sequence[str]) -> list[str]:
        """``args`` run inside ``host``'s namespace."""
        return ["ip", "netns", "exec", self.ns(host), *args]

    def call(self, host: str, fn: Callable[[], T], timeout: float = 120) -> T:
        """``fn()`` on a thread inside ``host``'s namespace (its sockets are the host's)."""
        box: list[Any] = []

        def run() -> None:
            try:
                self.enter(host)
                box.append((True, fn()))
            except BaseException as exc:  # noqa: BLE001 - re-raised in the caller
                box.append((False, exc))

        t = threading.Thread(target=run, daemon=True, name=f"in-{host}")
        t.start()
        t.join(timeout)
        if not box:
            raise TimeoutError(f"{fn!r} in host {host} still running after {timeout}s")
        ok, value = box[0]
        if not ok:
            raise value
        return value  # type: ignore[no-any-return]

    def enter(self, host: str) -> None:
        """Move the calling thread (only it) into ``host``'s network namespace."""
        fd = os.open(f"/run/netns/{self.ns(host)}", os.O_RDONLY)
        try:
            if _libc.setns(fd, _CLONE_NEWNET) != 0:
                err = ctypes.get_errno()
                raise OSError(err, f"setns into {host}: {os.strerror(err)}")
        finally:
            os.close(fd)

    # -- faults ---------------------------------------------------------------------------

    def _neigh(self, host: str, other: str, cut: bool) -> None:
        ns, ip = self.ns(host), self.ip[other]
        if cut:
            sh(
                "ip",
                "-n",
                ns,
                "neigh",
                "replace",
                ip,
                "lladdr",
                NOWHERE,
                "nud",
                "permanent",
                "dev",
                "eth0",
            )
        else:
            sh("ip", "-n", ns, "neigh", "del", ip, "dev", "eth0", check=False)

    def partition(self, side_a: Iterable[str], side_b: Iterable[str]) -> None:
        """Cut every host of ``side_a`` from every host of ``side_b`` (both directions)."""
        a, b = list(side_a), list(side_b)
        with self._lock:
            for x in a:
                for y in b:
                    if x == y:
                        raise ValueError(f"host {x} is on both sides")
                    for p, q in ((x, y), (y, x)):
                        if (p, q) not in self._cut:
                            self._neigh(p, q, cut=True)
                            self._cut.add((p, q))

    def isolate(self, host: str) -> None:
        """Cut ``host`` from every other host."""
        self.partition([host], [h for h in self.hosts if h != host])

    def heal(self) -> None:
        """Remove every cut."""
        with self._lock:
            for p, q in sorted(self._cut):
                self._neigh(p, q, cut=False)
            self._cut.clear()

    def rate(self, host: str, kbit: int | None) -> None:
        """Cap ``host``'s outgoing bandwidth (``htb``), or remove the cap (None)."""
        ns = self.ns(host)
        sh("tc", "-n", ns, "qdisc", "del", "dev", "eth0", "root", check=False)
        if kbit:
            sh(
                "tc",
                "-n",
                ns,
                "qdisc",
                "add",
                "dev",
                "eth0",
                "root",
                "handle",
                "1:",
                "htb",
                "default",
                "1",
            )
            sh(
                "tc",
                "-n",
                ns,
                "class",
                "add",
                "dev",
                "eth0",
                "parent",
                "1:",
                "classid",
                "1:1",
                "htb",
                "rate",
                f"{kbit}kbit",
            )

    def impair(
        self, host: str, to: Iterable[str], delay_ms: float, loss: float, seed: str | int = 0
    ) -> None:
        """Delay by ``delay_ms`` and drop with probability ``loss`` every packet ``host`` sends to
        the hosts ``to``, in userspace (``tests/netns/impair.py``, a process in ``host``'s
        namespace); returns once the routes through it are in place."""
        if host in self._impaired:
            raise ValueError(f"{host} is impaired already (unimpair it first)")
        cmd = [sys.executable, str(IMPAIR), "--to", ",".join(self.ip[h] for h in to)]
        cmd += ["--delay-ms", str(delay_ms), "--loss", str(loss), "--seed", f"{host}-{seed}"]
        proc = subprocess.Popen(
            self.command(host, cmd),
            stdin=subprocess.DEVNULL,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
        )
        self._impaired[host] = proc
        assert proc.stdout is not None
        ready, _, _ = select.select([proc.stdout], [], [], 20)
        line = proc.stdout.readline() if ready else ""
        if line.strip() != "ready":
            proc.kill()
            _, err = proc.communicate(timeout=10)
            del self._impaired[host]
            raise RuntimeError(f"the impairment of {host} did not start: {line}{err[-2000:]}")

    def unimpair(self, host: str | None = None) -> dict[str, dict[str, Any]]:
        """End the impairment of ``host`` (None: of every host); each one's counts of packets
        seen, dropped and sent by IP protocol number (see ``tests/netns/impair.py``)."""
        hosts = [host] if host else list(self._impaired)
        for h in hosts:
            self._impaired[h].terminate()
        out: dict[str, dict[str, Any]] = {}
        for h in hosts:
            proc = self._impaired.pop(h)
            try:
                stdout, err = proc.communicate(timeout=15)
            except subprocess.TimeoutExpired:
                proc.kill()
                stdout, err = proc.communicate(timeout=10)
            lines = stdout.strip().splitlines()
            try:
                out[h] = json.loads(lines[-1])
            except (IndexError, ValueError):
                out[h] = {"error": f"exited {proc.returncode} without counts: {err[-2000:]}"}
        return out


def netem_available(net: Net, host: str) -> bool:
    """Whether this kernel has ``sch_netem`` (tried on ``host``'s eth0, removed at once)."""
    ns = net.ns(host)
    out = subprocess.run(
        ["tc", "-n", ns, "qdisc", "add", "dev", "eth0", "root", "netem", "delay", "1ms"],
        capture_output=True,
        timeout=10,
    )
    if out.returncode == 0:
        sh("tc", "-n", ns, "qdisc", "del", "dev", "eth0", "root", check=False)
        return True
    return False
