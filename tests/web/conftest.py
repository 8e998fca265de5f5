"""Fixtures for the browser tests: the real API (gunicorn, as ``make run`` serves it) on the real
Redis (database 6 of the local server, or ``$RFG_WEB_TEST_REDIS_URL``) under a unique key prefix,
real ``rfg worker`` processes playing the bots, and Debian's Chromium driven by Playwright.

Locally a missing Redis or Chromium skips these tests; under ``CI`` it fails them.

Screenshots go to ``$RFG_SCREENSHOTS`` when it names a folder (``make screenshots`` gives
``docs/screenshots``, the README's), else to ``rfg-screenshots`` in the temp folder: running the
suite leaves the checkout as it was.

Every browser test is in the pytest-xdist group ``web`` (``make test-all`` runs the whole tier
with ``--dist loadgroup``): one worker runs them all, so one site and one Chromium serve them
(session fixtures), and the screenshots are written by one process.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import tempfile
import time
import urllib.request
import uuid
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import pytest
import redis

from rfgcli.run import api_command
from tests.conftest import purge_prefix, unavailable
from tests.processes import Proc, free_port, kill_group, spawn, wait_listening

ROOT = Path(__file__).resolve().parents[2]
SHOTS = Path(os.environ.get("RFG_SCREENSHOTS") or Path(tempfile.gettempdir()) / "rfg-screenshots")
SHOTS.mkdir(parents=True, exist_ok=True)
REDIS_URL = os.environ.get("RFG_WEB_TEST_REDIS_URL", "redis://127.0.0.1:6379/6")
CHROMIUM = os.environ.get("RFG_CHROMIUM", "/usr/bin/chromium")
CHROMIUM_ARGS = [
    "--no-sandbox",
    "--disable-gpu",
    "--disable-background-networking",
    "--disable-component-update",
    "--no-first-run",
    "--disable-sync",
]


class Site:
    """The running API and workers of the browser tests."""

    def __init__(self, url: str, prefix: str, redis_url: str, env: dict[str, str]) -> None:
        self.url, self.prefix, self.redis_url, self.env = url, prefix, redis_url, env

    def rfg(self, *args: str, timeout: float = 120) -> str:
        cmd = [sys.executable, "-m", "rfgcli.main", *args]
        done = subprocess.run(
            cmd,
            cwd=ROOT,
            env={**os.environ, **self.env},
            capture_output=True,
            text=True,
            timeout=timeout,
        )
        assert done.returncode == 0, f"rfg {' '.join(args)} failed:\n{done.stdout}\n{done.stderr}"
        return done.stdout


@contextmanager
def _serve(tmp: Path, extra: dict[str, str] | None = None) -> Iterator[Site]:
    """The API and two workers on the real Redis under a fresh key prefix, ``extra`` in their
    environment; every key of the prefix is purged afterwards."""
    client = redis.Redis.from_url(REDIS_URL, socket_connect_timeout=2)
    try:
        client.ping()
    except (redis.ConnectionError, redis.TimeoutError) as exc:
        client.close()
        unavailable(f"no Redis at {REDIS_URL} ({exc}); start one or set RFG_WEB_TEST_REDIS_URL")
    prefix = f"web{uuid.uuid4().hex[:10]}"
    env = {
        "REDIS_URL": REDIS_URL,
        "RFG_STORE_URL": REDIS_URL,
        "RFG_STORE_PREFIX": prefix,
        "RFG_RATE_LIMITS": "0",
        "RFG_DISPATCH": "1",
        "RFG_SSE_MAX_SECONDS": "20",
        "RFG_DATA_DIR": str(tmp),
        **(extra or {}),
    }
    port = free_port()
    procs: list[Proc] = []
    try:
        api = spawn(
            api_command(f"127.0.0.1:{port}", workers=1),  # as rfg run serves it
            env,
            tmp / "api.log",
        )
        procs.append(api)
        for i in range(2):
            procs.append(
                spawn(
                    [
                        sys.executable,
                        "-m",
                        "rfgcli.main",
                        "worker",
                        "--url",
                        REDIS_URL,
                        "--prefix",
                        prefix,
                        "--sweep-interval",
                        "0.3",
                        "--stale-after",
                        "3",
                        "--ladder-interval",
                        "0",
                    ],  # `rfg ladder run` schedules
                    env,
                    tmp / f"worker-{i}.log",
                )
            )

        wait_listening(api, port, "the API")
        yield Site(f"http://127.0.0.1:{port}", prefix, REDIS_URL, env)
    finally:
        for proc in procs:
            kill_group(proc)
        purge_prefix(client, prefix)
        client.close()


@pytest.fixture(scope="session")
def site(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Site]:
    with _serve(tmp_path_factory.mktemp("web")) as s:
        yield s


@pytest.fixture(scope="session")
def ambition_site(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Site]:
    """A second site whose API and workers play Ambition with the synthetic, made-up component
    file (``RFG_AMBITION_COMPONENTS``)."""
    extra = {"RFG_AMBITION_COMPONENTS": str(ROOT / "tests" / "data" / "ambition-synthetic.yaml")}
    with _serve(tmp_path_factory.mktemp("web-ambition"), extra) as s:
        yield s


@pytest.fixture(scope="session")
def browser() -> Iterator[Any]:
    if not Path(CHROMIUM).exists():
        unavailable(f"no Chromium at {CHROMIUM} (apt-get install chromium)")
    from playwright.sync_api import sync_playwright

    with sync_playwright() as pw:
        b = pw.chromium.launch(executable_path=CHROMIUM, args=CHROMIUM_ARGS)
        yield b
        b.close()


def call(site: Site, method: str, path: str, body: Any = None, token: str | None = None) -> Any:
    """One JSON request to the site's API (as the seat or account of ``token``); its parsed
    answer."""
    data = None if body is None else json.dumps(body).encode()
    headers = {"Content-Type": "application/json"}
    if token:
        headers["Authorization"] = f"Bearer {token}"
    req = urllib.request.Request(site.url + path, data=data, method=method, headers=headers)
    with urllib.request.urlopen(req, timeout=10) as resp:
        return json.loads(resp.read())


@pytest.fixture(scope="session")
def finished_game(site: Site) -> str:
    """A game between two built-in bots, played to its end by the workers."""
    game = call(
        site,
        "POST",
        "/games",
        {"seats": [{"kind": "bot", "bot": "random"}, {"kind": "bot", "bot": "random"}]},
    )
    gid: str = game["game_id"]
    deadline = time.monotonic() + 120
    while call(site, "GET", f"/games/{gid}")["status"] != "finished":
        assert time.monotonic() < deadline, "the bots did not finish their game in time"
        time.sleep(0.5)
    return gid
