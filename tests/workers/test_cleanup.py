"""A test run leaves nothing in Redis: the real-Redis tests that start ``rfg worker`` processes
(SIGKILLed ones among them, which never deregister from RQ) and the ``rfg ladder`` CLI run in a
pytest of their own against an empty database, and ``KEYS *`` is empty afterwards - neither the
store's keys nor RQ's (queues, jobs, executions, workers, schedulers, their shared sets)."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit, urlunsplit

import redis

from tests.conftest import REDIS_URL

ROOT = Path(__file__).resolve().parents[2]
SUBSET = [
    "tests/workers/test_processes.py::test_a_worker_killed_mid_turn_loses_and_duplicates_nothing",
    "tests/workers/test_processes.py::test_an_absent_person_times_out_through_the_scheduler_and_is_away",
    "tests/rfgcli/test_ladder_cli.py::test_run_games_n_plays_exactly_n_games",
]


def _empty_database(real_redis: Any) -> str:
    """The URL of an empty database of the tests' server (one nobody else is using)."""
    parts = urlsplit(REDIS_URL)
    for db in range(14, 7, -1):
        url = urlunsplit(parts._replace(path=f"/{db}"))
        client = redis.Redis.from_url(url)
        try:
            if client.dbsize() == 0:
                return url
        finally:
            client.close()
    raise AssertionError("no empty database among 8-14 on the tests' Redis to run this check in")


def test_a_run_leaves_no_key_behind(real_redis: Any) -> None:
    url = _empty_database(real_redis)
    env = {**os.environ, "RFG_TEST_REDIS_URL": url}
    out = subprocess.run(
        [sys.executable, "-m", "pytest", "-p", "no:cacheprovider", *SUBSET],
        cwd=ROOT,
        env=env,
        capture_output=True,
        text=True,
        timeout=600,
    )
    assert out.returncode == 0, out.stdout[-3000:] + out.stderr[-2000:]
    assert " passed" in out.stdout and "skipped" not in out.stdout, out.stdout[-1000:]
    client = redis.Redis.from_url(url)
    try:
        left = sorted(k.decode() for k in client.keys("*"))
        client.flushdb() if left else None
    finally:
        client.close()
    assert left == [], f"the run left {len(left)} key(s) in {url}: {left[:20]}"
