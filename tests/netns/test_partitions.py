"""The service on separate network hosts through partitions: nothing acknowledged is lost.

The hosts of ``tests.netns.deployment`` (each in a network namespace of its own), then every
schedule of ``tests.netns.schedules.SCHEDULES`` (cuts of masters, replicas, API hosts, the RQ
Redis, flapping halves, a killed master, 200 ms delay with 5 % loss between the API hosts and the
cluster, bursts of loss), each with fresh games played by clients on both client hosts (as
``bench/partitions.py``, which prints the figures with more games). After every schedule: every
acknowledged command is in its game's log exactly once and at the answered version, no game has
two histories, every log verifies, every game finished after the heal, and no answer was a 500;
the totals are printed when the module ends (in each pytest-xdist worker that ran
schedules, its own).

Before them, the faults themselves: a partition cuts both ways and heals, and the userspace
impairment (``tests/netns/impair.py``, for kernels without ``tc netem``) delays every packet by
its delay (ping round trips), drops the packets it says it dropped and no others (the pings
lost), and a TCP transfer through it still arrives whole.
"""

from __future__ import annotations

import hashlib
import json
import os
import socket
import statistics
import subprocess
import threading
from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.conftest import unavailable
from tests.netns import schedules
from tests.netns.deployment import API_PORT, APIS, HOSTS, NODES, REDIS_PORT, Deployment
from tests.netns.harness import Net, NetUnavailable, why_unavailable
from tests.netns.impair import ping

pytestmark = pytest.mark.cluster

#: the schedules whose faults the clients must feel as 503s or unanswered requests
FELT = {
    "isolate-master",
    "master-with-minority-of-clients",
    "master-with-both-api-hosts",
    "api-host-cut-from-store",
    "master-killed",
    "two-masters-in-turn",
}
#: the schedules in two halves of about the same time (about 2 min each on 2 vCPUs): ``make
#: test-all`` runs the whole tier in pytest-xdist workers (``--dist loadgroup``), and each half is
#: a group, run by one worker on a deployment of its own (the module's fixture, in that worker's
#: own namespaces ``rfgn<pid>-*``), both halves at once; a plain ``pytest`` runs all of them on one
HALVES = {
    "netns-a": (
        "flapping",
        "loss-bursts",
        "lossy-api-links",
        "master-with-minority-of-clients",
        "isolate-master",
        "replica-isolated",
    ),
    "netns-b": (
        "two-masters-in-turn",
        "majority-split",
        "master-with-both-api-hosts",
        "master-killed",
        "api-host-cut-from-store",
        "rq-cut-from-workers",
    ),
}
GROUP = {name: group for group, names in HALVES.items() for name in names}
TOTAL_KEYS = ("acknowledged", "lost", "duplicated", "two_histories", "unverifiable", "bad_answers")


@pytest.fixture(scope="module")
def hosts(tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[Net, Deployment]]:
    reason = why_unavailable()
    if reason:
        unavailable(f"no test hosts: {reason}")
    net = Net(HOSTS)
    try:
        net.start()
    except NetUnavailable as exc:
        unavailable(f"no test hosts: {exc}")
    try:
        dep = Deployment(net, Path(tmp_path_factory.mktemp("netns")))
        try:
            dep.start()
            yield net, dep
        finally:
            dep.stop()
    finally:
        net.stop()
    print(json.dumps({"total": TOTALS}))


TOTALS: dict[str, int] = {"schedules": 0, "unfinished_games": 0, **dict.fromkeys(TOTAL_KEYS, 0)}


def _reaches(net: Net, src: str, dst: str, port: int = REDIS_PORT) -> bool:
    def connect() -> bool:
        try:
            with socket.create_connection((net.ip[dst], port), timeout=1):
                return True
        except OSError:
            return False

    return net.call(src, connect)


@pytest.mark.xdist_group("netns-a")
def test_a_partition_cuts_both_ways_and_heals(hosts: tuple[Net, Deployment]) -> None:
    net, _ = hosts
    assert _reaches(net, "api1", "n1") and _reaches(net, "n2", "n1")
    net.partition(["n1"], ["api1"])
    try:
        assert not _reaches(net, "api1", "n1")
        assert not _reaches(net, "n1", "api1", API_PORT)  # both ways
        assert _reaches(net, "n2", "n1") and _reaches(net, "api2", "n1")
    finally:
        net.heal()
    assert _reaches(net, "api1", "n1") and _reaches(net, "n1", "api1", API_PORT)


def _routes(net: Net, host: str) -> str:
    return subprocess.run(
        net.command(host, ["ip", "route"]), capture_output=True, text=True, timeout=10
    ).stdout


@pytest.mark.xdist_group("netns-b")
def test_userspace_impairment_delays_and_drops(hosts: tuple[Net, Deployment]) -> None:
    """As ``lossy-api-links`` makes it: 100 ms and 2.5 % loss each way between the API hosts and
    the nodes; 400 pings from api1 to n1, then 512 KiB over TCP from api1 to n1."""
    net, _ = hosts
    delay_ms, loss = schedules.ONE_WAY_DELAY_MS, schedules.ONE_WAY_LOSS
    data = os.urandom(512 * 1024)
    got: list[bytes] = []

    def serve(listener: socket.socket) -> None:
        conn, _ = listener.accept()
        with conn:
            conn.settimeout(60)
            chunks = []
            while chunk := conn.recv(65536):
                chunks.append(chunk)
            got.append(b"".join(chunks))
            conn.sendall(hashlib.sha256(got[0]).digest())

    def listen() -> socket.socket:
        s = socket.socket()
        s.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        s.bind((net.ip["n1"], 9009))
        s.listen(1)
        s.settimeout(120)
        return s

    def send() -> bytes:
        with socket.create_connection((net.ip["n1"], 9009), timeout=60) as c:
            c.sendall(data)
            c.shutdown(socket.SHUT_WR)
            return c.recv(64)

    try:
        for h in APIS:
            net.impair(h, NODES, delay_ms, loss, seed=1)
        for h in NODES:
            net.impair(h, APIS, delay_ms, loss, seed=1)
        assert "imp0" in _routes(net, "api1")
        pinged = net.call("api1", lambda: ping(net.ip["n1"], 400, interval=0.02))
        listener = net.call("n1", listen)
        server = threading.Thread(target=lambda: net.call("n1", lambda: serve(listener), 150))
        server.start()
        digest = net.call("api1", send, timeout=150)
        server.join(150)
        listener.close()
    finally:
        counts = net.unimpair()
    rtts = pinged.rtts
    icmp_dropped = counts["api1"]["dropped"].get("1", 0) + counts["n1"]["dropped"].get("1", 0)
    tcp_dropped = counts["api1"]["dropped"].get("6", 0) + counts["n1"]["dropped"].get("6", 0)
    print(
        json.dumps(
            {
                "pings": pinged.sent,
                "lost": pinged.lost,
                "loss_ratio": round(pinged.lost / pinged.sent, 4),
                "expected_loss_ratio": round(1 - (1 - loss) ** 2, 4),
                "rtt_ms_min_median_max": [
                    round(1000 * x, 1) for x in (rtts[0], statistics.median(rtts), rtts[-1])
                ],
                "tcp_bytes": len(data),
                "tcp_packets_dropped": tcp_dropped,
                "counts": counts,
            }
        )
    )
    # every packet held its delay each way: no round trip shorter than the two delays
    assert rtts[0] >= 2 * delay_ms / 1000
    # the pings lost are exactly the echo requests and replies the two processes dropped
    assert pinged.lost == icmp_dropped
    # about 4.9 % of 400 (19.75, sd 4.3): 0 or more than 45 only if the loss is not random at p
    assert 0 < icmp_dropped <= 45
    # TCP got every byte through, retransmitting what was dropped
    assert got == [data] and digest == hashlib.sha256(data).digest()
    assert tcp_dropped > 0
    # the impairment gone, the routes are direct again
    assert "imp0" not in _routes(net, "api1") and "imp0" not in _routes(net, "n1")
    assert net.call("api1", lambda: ping(net.ip["n1"], 5, interval=0.05)).lost == 0


@pytest.mark.parametrize(
    "schedule",
    [pytest.param(s, marks=pytest.mark.xdist_group(GROUP[s])) for s in schedules.SCHEDULES],
)
def test_nothing_acknowledged_is_lost(hosts: tuple[Net, Deployment], schedule: str) -> None:
    net, dep = hosts
    out = schedules.run(net, dep, schedule, games=3, finish_timeout=150)
    report, verdict = out["report"], out["verdict"]
    print(json.dumps(report))
    TOTALS["schedules"] += 1
    for k in TOTAL_KEYS:
        TOTALS[k] += report[k]
    TOTALS["unfinished_games"] += report["games"] - report["finished"]
    assert verdict.lost == [], report
    assert verdict.duplicated == [] and verdict.two_histories == [], report
    assert verdict.unverifiable == [], report
    assert verdict.bad_answers == [] and verdict.player_errors == [], report
    assert report["finished"] == report["games"], report
    assert report["crashed_processes"] == [], report
    assert report["acknowledged"] > 100, report
    if schedule in FELT:  # the store's faults were felt by the clients
        assert report["answers"].get("503", 0) + report["answers"].get("no answer", 0) > 0, report
