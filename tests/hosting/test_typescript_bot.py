"""The TypeScript example bot (clients/typescript/examples/play-vs-bots.ts, built from the types
openapi-typescript generates from openapi.yaml) plays a whole game over the real stack - the API
as ``rfg run`` serves it with the rate limits on at their defaults, an ``rfg worker`` playing the
built-in bot, the real Redis: it registers a bot account, challenges the heuristic bot, answers
every turn signal of its seat's stream, then downloads the log and verifies it with the
TypeScript verifier and the key ``GET /signing-key`` publishes. No answer is a 429 or a 5xx, and
every exchange (the streams and the log included) matches openapi.yaml."""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path
from typing import Any

from openapi_core import OpenAPI

from tests.clients.conftest import node, ts_client  # noqa: F401 - the fixture, shared
from tests.conftest import REDIS_URL
from tests.processes import Proc
from tests.service.conftest import (
    exchange_errors,
    openapi,  # noqa: F401 - the fixture, shared
)


def test_the_typescript_bot_plays_a_game_from_its_challenge_and_verifies_the_log(
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
    record = tmp_path / "exchanges.jsonl"
    run = node(
        ts_client,
        "examples/play-vs-bots.js",
        base,
        "heuristic",
        timeout=600,
        RFG_RECORD=str(record),
    )
    assert run.returncode == 0, run.stdout + run.stderr
    report = json.loads(run.stdout)
    print(report | {"verdict": {k: report["verdict"][k] for k in ("ok", "events", "signature")}})
    statuses = {int(k): v for k, v in report["statuses"].items()}
    assert statuses.get(429, 0) == 0, statuses
    assert not [s for s in statuses if s >= 500], statuses
    assert report["result"]["winners"] and report["log_kind"] == "full"
    verdict = report["verdict"]
    assert verdict["ok"] and verdict["over"], verdict
    assert verdict["signature"] == "signed" and verdict["commitment"] == "checked", verdict
    assert verdict["gameId"] == report["game_id"] and verdict["events"] > 100
    # one command per turn signal: the decisions are those of a whole game
    assert report["decisions"] > 20 and statuses[201] >= report["decisions"] - report["conflicts"]
    exchanges = [json.loads(x) for x in record.read_text(encoding="utf-8").splitlines()]
    assert len(exchanges) == sum(statuses.values())
    kinds = {(x["method"], x["headers"].get("content-type", "").split(";")[0]) for x in exchanges}
    assert ("GET", "text/event-stream") in kinds and ("GET", "application/x-ndjson") in kinds
    for x in exchanges:
        assert exchange_errors(openapi, x) == [], f"{x['method']} {x['url']} -> {x['status']}"
