"""The service on separate network hosts through partitions: nothing acknowledged is lost.

A bounded version of ``bench/partitions.py`` (which runs every schedule and prints the
figures): the hosts of ``tests.netns.deployment`` (each in a network namespace of its own), then
three schedules - a master cut from every host, a master with both API hosts and a client host
on the minority side, the RQ Redis cut from the workers - each with fresh games played by clients on
both client hosts. After every schedule: every acknowledged command is in its game's log exactly
once and at the answered version, no game has two histories, every log verifies, every game
finished after the heal, and no answer was a 500.
"""

from __future__ import annotations

import json
import socket
from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.conftest import unavailable
from tests.netns import schedules
from tests.netns.deployment import API_PORT, HOSTS, REDIS_PORT, Deployment
from tests.netns.harness import Net, NetUnavailable, why_unavailable

pytestmark = pytest.mark.cluster


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
        dep = Deployment(net, Path(tmp_path_factory.mktemp("netns"))).start()
        try:
            yield net, dep
        finally:
            dep.stop()
    finally:
        net.stop()


def _reaches(net: Net, src: str, dst: str, port: int = REDIS_PORT) -> bool:
    def connect() -> bool:
        try:
            with socket.create_connection((net.ip[dst], port), timeout=1):
                return True
        except OSError:
            return False

    return net.call(src, connect)


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


@pytest.mark.parametrize(
    "schedule", ["isolate-master", "master-with-both-api-hosts", "rq-cut-from-workers"]
)
def test_nothing_acknowledged_is_lost(hosts: tuple[Net, Deployment], schedule: str) -> None:
    net, dep = hosts
    out = schedules.run(net, dep, schedule, games=3, finish_timeout=150)
    report, verdict = out["report"], out["verdict"]
    print(json.dumps(report))
    assert verdict.lost == [], report
    assert verdict.duplicated == [] and verdict.two_histories == [], report
    assert verdict.unverifiable == [], report
    assert verdict.bad_answers == [] and verdict.player_errors == [], report
    assert report["finished"] == report["games"], report
    assert report["crashed_processes"] == [], report
    assert report["acknowledged"] > 100, report
    if schedule != "rq-cut-from-workers":  # the store's faults were felt by the clients
        assert report["answers"].get("503", 0) + report["answers"].get("no answer", 0) > 0, report
