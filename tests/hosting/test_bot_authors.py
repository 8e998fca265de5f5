"""Bot authors' target, kept (``bench/bot_authors.py`` measures it at 20 games): the TypeScript
example bot and the Python client's example each play several games in a row from their own
challenges, one bot account each, over the real stack - the API as ``rfg run`` serves it with
the rate limits on at their defaults, an ``rfg worker`` playing the built-in bot, the real Redis.
No answer is a 429 or a 5xx, every recorded exchange (streams and logs included) matches
openapi.yaml, every log verifies in Node (the TypeScript bot's verdicts) and in Python
(``events.verify``, against the key ``GET /signing-key`` serves)."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from collections import Counter
from collections.abc import Callable
from pathlib import Path
from typing import Any
from urllib.request import urlopen

from openapi_core import OpenAPI

from events.verify.replay import verify_text
from events.verify.signing import load_public_key
from tests.clients.conftest import node, ts_client  # noqa: F401 - the fixture, shared
from tests.conftest import REDIS_URL
from tests.processes import Proc
from tests.service.conftest import (
    exchange_errors,
    openapi,  # noqa: F401 - the fixture, shared
)

ROOT = Path(__file__).resolve().parents[2]
GAMES = 3


def _python_example(base: str, record: Path, cwd: Path) -> subprocess.CompletedProcess[str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith("RFG_")}
    env.update(
        PYTHONPATH=str(ROOT / "clients" / "python" / "src"),
        RFG_GAMES=str(GAMES),
        RFG_RECORD=str(record),
    )
    return subprocess.run(
        [sys.executable, str(ROOT / "examples" / "challenge_vs_bots.py"), base, "heuristic"],
        cwd=cwd,
        env=env,
        capture_output=True,
        text=True,
        timeout=900,
    )


def _check(run: subprocess.CompletedProcess[str], record: Path, spec: OpenAPI, key: Any) -> None:
    assert run.returncode == 0, run.stdout + run.stderr
    reports = [json.loads(line) for line in run.stdout.splitlines() if line.startswith("{")]
    assert len(reports) == GAMES and all(r["result"]["winners"] for r in reports), run.stdout
    assert len({r["game_id"] for r in reports}) == GAMES  # each game its own challenge
    assert len({r["account"] for r in reports}) == 1  # one bot account for all
    exchanges = [json.loads(x) for x in record.read_text(encoding="utf-8").splitlines()]
    statuses = Counter(x["status"] for x in exchanges)
    print({"statuses": dict(statuses), "exchanges": len(exchanges)})
    assert statuses[429] == 0, statuses
    assert not [s for s in statuses if s >= 500], statuses
    assert sum(statuses[s] for s in (200, 201)) == len(exchanges) - statuses[409], statuses
    challenges = [
        x for x in exchanges if x["method"] == "POST" and x["url"].endswith("/challenges")
    ]
    assert len(challenges) == GAMES and all(x["status"] == 201 for x in challenges)
    for x in exchanges:
        assert exchange_errors(spec, x) == [], f"{x['method']} {x['url']} -> {x['status']}"
    logs = [x for x in exchanges if x["method"] == "GET" and x["url"].endswith("/log")]
    assert len(logs) == GAMES
    for x in logs:
        verdict = verify_text(x["body"], key, require_signature=True)
        assert verdict.ok, verdict
    for r in reports:
        if "verdict" in r:  # the TypeScript bot's: verified in Node
            assert r["verdict"]["ok"] and r["verdict"]["signature"] == "signed", r["verdict"]


def test_both_example_bots_play_games_from_their_own_challenges_within_the_target(
    real_redis: Any,
    prefix: str,
    start_api: Callable[..., tuple[Proc, str]],
    start_worker: Callable[..., Proc],
    ts_client: Path,  # noqa: F811
    openapi: OpenAPI,  # noqa: F811
    tmp_path: Path,
) -> None:
    _proc, base = start_api(REDIS_URL, prefix, RFG_RATE_LIMITS="1", RFG_SSE_MAX_SECONDS="5")
    start_worker(REDIS_URL, prefix)
    with urlopen(f"{base}/signing-key", timeout=10) as resp:
        key = load_public_key(json.loads(resp.read())["public_key"])

    record = tmp_path / "ts.jsonl"
    run = node(
        ts_client,
        "examples/play-vs-bots.js",
        base,
        "heuristic",
        timeout=900,
        RFG_GAMES=str(GAMES),
        RFG_RECORD=str(record),
    )
    _check(run, record, openapi, key)

    record = tmp_path / "py.jsonl"
    _check(_python_example(base, record, tmp_path), record, openapi, key)
