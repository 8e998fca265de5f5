"""Per-packet delay and random loss in userspace, for kernels built without ``tc netem``.

Run inside one host's network namespace (``ip netns exec``, as root), one process per impaired
host::

    python tests/netns/impair.py --to 10.77.0.10,10.77.0.11 --delay-ms 100 --loss 0.025 --seed 7

It impairs the packets this host sends to the ``--to`` addresses (its egress only; impair both
hosts of a pair for both directions):

1. it creates a TUN device (``imp0``) and routes each ``--to`` address through it
   (``ip route replace <addr>/32 dev imp0 src <this host's address>``), so the kernel hands it
   every IP packet the host sends there, established connections included;
2. it drops each packet with probability ``--loss`` (a ``random.Random(--seed)``: one draw per
   packet, in arrival order) and holds every other one for ``--delay-ms`` (a fixed delay: the
   order of the packets is kept, as ``netem delay`` without jitter keeps it);
3. it sends the packet out, unchanged, on a raw socket (``IPPROTO_RAW``, the IP header given)
   marked with ``SO_MARK`` ``--mark``; ``ip rule add fwmark <mark> lookup <table>`` sends marked
   packets by a table that routes the subnet by ``eth0`` directly, so they do not loop back into
   the TUN device. The packets leave ``eth0`` as the host's own would (ARP, neighbour entries and
   so the harness's partitions apply to them too).

The host's reverse-path filter is turned off (the replies of the ``--to`` hosts arrive on
``eth0`` while the route back to them is the TUN device). When the process ends (SIGTERM,
SIGINT, or killed) the TUN device goes with its file descriptor and the routes through it with
the device: the host sends directly again. On SIGTERM/SIGINT it also removes its rule and table
and prints one JSON line of counts: packets seen, dropped, sent, by IP protocol number, and the
send errors. It prints ``ready`` once the routes are in place.

Stdlib only (the harness runs it with the project's interpreter but it imports nothing else).
"""

from __future__ import annotations

import argparse
import fcntl
import heapq
import json
import os
import random
import select
import signal
import socket
import struct
import subprocess
import sys
import time
from collections import Counter
from dataclasses import dataclass
from pathlib import Path

TUNSETIFF = 0x400454CA
IFF_TUN = 0x0001
IFF_NO_PI = 0x1000
#: packets held at once at most (``netem``'s default ``limit``); more are dropped and counted
LIMIT = 1000


def _ip(*args: str, check: bool = True) -> None:
    out = subprocess.run(["ip", *args], capture_output=True, text=True, timeout=10)
    if check and out.returncode != 0:
        raise RuntimeError(f"ip {' '.join(args)} failed: {out.stderr.strip()}")


def _own_address(dev: str) -> tuple[str, str]:
    """``dev``'s first IPv4 address and its subnet (``10.77.0.10``, ``10.77.0.0/24``)."""
    out = subprocess.run(
        ["ip", "-j", "-4", "addr", "show", "dev", dev], capture_output=True, text=True, timeout=10
    )
    info = json.loads(out.stdout)[0]["addr_info"][0]
    addr, plen = info["local"], int(info["prefixlen"])
    net = socket.inet_ntoa(
        struct.pack("!I", struct.unpack("!I", socket.inet_aton(addr))[0] & (~0 << (32 - plen)))
    )
    return addr, f"{net}/{plen}"


def _sysctl(path: str, value: str) -> None:
    p = Path("/proc/sys/net/ipv4/conf") / path
    if p.exists():
        p.write_text(value)


def open_tun(name: str) -> int:
    fd = os.open("/dev/net/tun", os.O_RDWR | os.O_NONBLOCK)
    fcntl.ioctl(fd, TUNSETIFF, struct.pack("16sH", name.encode(), IFF_TUN | IFF_NO_PI))
    return fd


def _checksum(data: bytes) -> int:
    if len(data) % 2:
        data += b"\0"
    total = sum(struct.unpack(f"!{len(data) // 2}H", data))
    total = (total >> 16) + (total & 0xFFFF)
    total += total >> 16
    return ~total & 0xFFFF


@dataclass
class Pinged:
    sent: int
    #: the round trips of the answered pings, in seconds, shortest first
    rtts: list[float]
    lost: int


def ping(dst: str, count: int, interval: float = 0.02, wait: float = 2.0) -> Pinged:
    """ICMP echo to ``dst`` ``count`` times, ``interval`` s apart, from the calling thread's
    network namespace (a raw socket: root); the round trips in seconds of the answered ones and
    the number never answered (after ``wait`` s more)."""
    ident = os.getpid() & 0xFFFF ^ random.getrandbits(16)
    sock = socket.socket(socket.AF_INET, socket.SOCK_RAW, socket.IPPROTO_ICMP)
    sent_at: dict[int, float] = {}
    rtts: dict[int, float] = {}
    try:
        nxt, seq = time.monotonic(), 0
        end = None
        while True:
            now = time.monotonic()
            if seq < count and now >= nxt:
                head = struct.pack("!BBHHH", 8, 0, 0, ident, seq)
                body = b"rfg-impair-ping-" + seq.to_bytes(4, "big")
                pkt = struct.pack("!BBHHH", 8, 0, _checksum(head + body), ident, seq) + body
                sent_at[seq] = time.monotonic()
                sock.sendto(pkt, (dst, 0))
                seq += 1
                nxt += interval
                if seq == count:
                    end = time.monotonic() + wait
            if end is not None and (time.monotonic() >= end or len(rtts) == count):
                break
            until = nxt if seq < count else (end or now)
            ready, _, _ = select.select([sock], [], [], max(0.0, until - time.monotonic()))
            if not ready:
                continue
            data, (src, _) = sock.recvfrom(2048)
            icmp = data[(data[0] & 0x0F) * 4 :]
            if src != dst or len(icmp) < 8:
                continue
            typ, _, _, rid, rseq = struct.unpack("!BBHHH", icmp[:8])
            if typ == 0 and rid == ident and rseq in sent_at and rseq not in rtts:
                rtts[rseq] = time.monotonic() - sent_at[rseq]
    finally:
        sock.close()
    return Pinged(count, sorted(rtts.values()), count - len(rtts))


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--to", required=True, help="comma-separated IPv4 addresses to impair")
    ap.add_argument("--delay-ms", type=float, default=0.0)
    ap.add_argument("--loss", type=float, default=0.0, help="drop probability, 0-1")
    ap.add_argument("--seed", default="0")
    ap.add_argument("--dev", default="imp0", help="the TUN device to create")
    ap.add_argument("--out", default="eth0", help="the device the packets leave by")
    ap.add_argument("--mark", type=int, default=0x77)
    ap.add_argument("--table", type=int, default=77)
    args = ap.parse_args(argv)
    if not 0 <= args.loss <= 1 or args.delay_ms < 0:
        ap.error("--loss must be 0-1 and --delay-ms >= 0")
    targets = [a for a in args.to.split(",") if a]
    delay = args.delay_ms / 1000
    rng = random.Random(args.seed)

    stopping = False

    def stop(*_: object) -> None:
        nonlocal stopping
        stopping = True

    signal.signal(signal.SIGTERM, stop)
    signal.signal(signal.SIGINT, stop)

    own, subnet = _own_address(args.out)
    tun = open_tun(args.dev)
    raw = socket.socket(socket.AF_INET, socket.SOCK_RAW, socket.IPPROTO_RAW)
    raw.setsockopt(socket.SOL_SOCKET, socket.SO_MARK, args.mark)
    mtu = int(Path(f"/sys/class/net/{args.out}/mtu").read_text())
    for conf in ("all", "default", args.out, args.dev):
        _sysctl(f"{conf}/rp_filter", "0")
    _ip("link", "set", "dev", args.dev, "mtu", str(mtu), "up")
    _ip("route", "replace", subnet, "dev", args.out, "table", str(args.table))
    _ip("rule", "del", "fwmark", str(args.mark), "lookup", str(args.table), check=False)
    _ip("rule", "add", "fwmark", str(args.mark), "lookup", str(args.table), "pref", "100")
    for dst in targets:
        _ip("route", "replace", f"{dst}/32", "dev", args.dev, "src", own)
    print("ready", flush=True)

    seen: Counter[int] = Counter()
    dropped: Counter[int] = Counter()
    sent: Counter[int] = Counter()
    counts = {"overflow": 0, "send_errors": 0, "not_ipv4": 0}
    held: list[tuple[float, int, bytes]] = []
    n = 0
    while not stopping:
        now = time.monotonic()
        while held and held[0][0] <= now:
            _, _, pkt = heapq.heappop(held)
            try:
                raw.sendto(pkt, (socket.inet_ntoa(pkt[16:20]), 0))
                sent[pkt[9]] += 1
            except OSError:
                counts["send_errors"] += 1
        timeout = max(0.0, held[0][0] - now) if held else 0.5
        try:
            ready, _, _ = select.select([tun], [], [], timeout)
        except InterruptedError:
            continue
        if not ready:
            continue
        while True:
            try:
                pkt = os.read(tun, 65535)
            except BlockingIOError:
                break
            if len(pkt) < 20 or pkt[0] >> 4 != 4:
                counts["not_ipv4"] += 1
                continue
            proto = pkt[9]
            seen[proto] += 1
            if rng.random() < args.loss:
                dropped[proto] += 1
                continue
            if len(held) >= LIMIT:
                counts["overflow"] += 1
                continue
            n += 1
            heapq.heappush(held, (time.monotonic() + delay, n, pkt))

    _ip("rule", "del", "fwmark", str(args.mark), "lookup", str(args.table), check=False)
    _ip("route", "flush", "table", str(args.table), check=False)
    os.close(tun)  # the device, and the routes through it, go with it
    report = {
        "seen": dict(seen),
        "dropped": dict(dropped),
        "sent": dict(sent),
        "held_at_exit": len(held),
        **counts,
    }
    print(json.dumps(report), flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
