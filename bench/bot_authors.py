"""Bot authors' target: the example bots play games from their own challenges over the server as
hosts run it, and meet no 429, no 5xx, no answer off the spec and no log that fails to verify.

    make ts-client                       # once: the TypeScript client's packages and build
    python bench/bot_authors.py [--games 20] [--clients ts,py] [--url redis://127.0.0.1:6379/13]

The server is started as ``rfg run`` starts it: the API by ``rfgcli.run.api_command`` (gunicorn's
gevent worker, 2 processes, ``RFG_DISPATCH=1``, the rate limits on at their defaults) and
``--bot-workers`` ``rfg worker`` processes playing the built-in bots, on the store ``--url``
(default ``$REDIS_URL``, else the local Redis, else an embedded one) under a fresh key prefix,
deleted afterwards. Then, one after the other:

* ``ts``: the TypeScript example bot (``clients/typescript/examples/play-vs-bots.ts``, as
  ``node dist/examples/play-vs-bots.js URL heuristic``) with ``RFG_GAMES=N``: it registers one
  bot account, then plays N games, each from its own challenge (``POST /challenges`` against the
  heuristic bot), answering each turn signal of its seat's stream, and verifies each game's log in
  Node (``verifyLog`` with the key of ``GET /signing-key``);
* ``py``: the Python client's example (``examples/challenge_vs_bots.py``, nothing but the
  ``rfg-client`` sources on its path) the same N games.

Both record every exchange (``RFG_RECORD``). Printed per client: games finished, the answers by
status (429 and 5xx apart), the exchanges checked against openapi.yaml (openapi-core, as the test
suite checks them: streams event by event, logs line by line) and the invalid ones, the logs
verified in Node (the TypeScript bot's own verdicts) and in Python (``events.verify``: every
command replayed, the signature checked against ``GET /signing-key``), the wall time, and the
machine's load average before and after. The target: N finished, 0 x 429, 0 x 5xx, 0 invalid,
N verified. Exit status 1 when a client missed it.
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import subprocess
import sys
import tempfile
import time
import urllib.request
import uuid
from collections import Counter
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from bench.api import (  # noqa: E402
    API_APP,
    free_port,
    host_env,
    pick_store,
    start_command,
    stop,
)

TS = ROOT / "clients" / "typescript"
CLIENT_SRC = ROOT / "clients" / "python" / "src"


def start_workers(store: str, prefix: str, n: int, log_dir: Path) -> list[subprocess.Popen[bytes]]:
    """``n`` ``rfg worker`` processes (production defaults) on the store under ``prefix``."""
    procs = []
    for i in range(n):
        cmd = [sys.executable, "-m", "rfgcli.main", "worker", "--url", store, "--prefix", prefix]
        with open(log_dir / f"worker-{i}.log", "wb") as out:
            procs.append(
                subprocess.Popen(
                    cmd,
                    cwd=ROOT,
                    stdin=subprocess.DEVNULL,
                    stdout=out,
                    stderr=subprocess.STDOUT,
                    start_new_session=True,
                )
            )
    return procs


def run_client(kind: str, base: str, games: int, record: Path) -> tuple[list[dict[str, Any]], str]:
    """Run one example bot for ``games`` games: (its per-game reports, its stderr)."""
    env = {k: v for k, v in os.environ.items() if not k.startswith("RFG_")}
    env.update(RFG_GAMES=str(games), RFG_RECORD=str(record))
    if kind == "ts":
        cmd = ["node", str(TS / "dist" / "examples" / "play-vs-bots.js"), base, "heuristic"]
        cwd = TS
    else:
        env["PYTHONPATH"] = str(CLIENT_SRC)  # the client alone: none of the server's packages
        cmd = [sys.executable, str(ROOT / "examples" / "challenge_vs_bots.py"), base, "heuristic"]
        cwd = Path(tempfile.gettempdir())
    done = subprocess.run(cmd, cwd=cwd, env=env, capture_output=True, text=True, timeout=3600)
    reports = [json.loads(line) for line in done.stdout.splitlines() if line.startswith("{")]
    return reports, done.stderr.strip()


def check(
    reports: list[dict[str, Any]], record: Path, spec: Any, key: Any, games: int
) -> dict[str, Any]:
    """The figures of one client's run."""
    from events.verify.replay import verify_text
    from tests.service.conftest import exchange_errors

    lines = record.read_text(encoding="utf-8").splitlines() if record.exists() else []
    exchanges = [json.loads(x) for x in lines]
    statuses = Counter(int(x["status"]) for x in exchanges)  # a failed game's answers too
    invalid = []
    for x in exchanges:
        errors = exchange_errors(spec, x)
        if errors:
            invalid.append(f"{x['method']} {x['url']} -> {x['status']}: {errors[0][:300]}")
    logs = [
        x
        for x in exchanges
        if x["method"] == "GET" and x["url"].endswith("/log") and x["status"] == 200
    ]
    in_python = sum(verify_text(x["body"], key, require_signature=True).ok for x in logs)
    node = [r["verdict"]["ok"] for r in reports if "verdict" in r]
    return {
        "games": games,
        "finished": sum(1 for r in reports if (r.get("result") or {}).get("winners")),
        "statuses": dict(sorted(statuses.items())),
        "429": statuses[429],
        "5xx": sum(v for k, v in statuses.items() if k >= 500),
        "exchanges": len(exchanges),
        "invalid": len(invalid),
        "invalid_first": invalid[:3],
        "logs": len(logs),
        "verified_in_node": sum(node) if node else None,
        "verified_in_python": in_python,
        "decisions": sum(r.get("decisions", 0) for r in reports),
    }


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--games", type=int, default=20, help="games per client (default 20)")
    ap.add_argument("--clients", default="ts,py", help="ts, py or both (default ts,py)")
    ap.add_argument("--url", help="the store (default $REDIS_URL, else local Redis or embedded)")
    ap.add_argument("--bot-workers", type=int, default=1, help="rfg worker processes (default 1)")
    args = ap.parse_args()
    clients = [c for c in args.clients.split(",") if c]
    if "ts" in clients and not (TS / "dist" / "examples" / "play-vs-bots.js").exists():
        raise SystemExit("the TypeScript client is not built: run `make ts-client` first")

    from events.verify.signing import load_public_key
    from tests.service.conftest import load_openapi

    spec = load_openapi()
    store, tmp_store = pick_store(args.url)
    prefix = f"bba{uuid.uuid4().hex[:8]}"
    log_dir = Path(tempfile.mkdtemp(prefix="rfg-bench-bots-"))
    port = free_port()
    base = f"http://127.0.0.1:{port}"
    load_before = os.getloadavg()
    api = start_command(API_APP, port, host_env(store, prefix), log_dir, 2, "api")
    workers = start_workers(store, prefix, args.bot_workers, log_dir)
    failed = False
    try:
        with urllib.request.urlopen(f"{base}/signing-key", timeout=10) as resp:
            key = load_public_key(json.loads(resp.read())["public_key"])
        print(
            f"bot authors' target: {args.games} games per client from their own challenges, "
            f"{base} (rfgcli.run.api_command, 2 API processes, {args.bot_workers} rfg worker, "
            f"rate limits on), store {store.split('?')[0]}; {os.cpu_count()} CPUs, "
            f"load average {load_before[0]:.2f} {load_before[1]:.2f} {load_before[2]:.2f}"
        )
        for kind in clients:
            record = log_dir / f"{kind}.jsonl"
            t0 = time.monotonic()
            reports, stderr = run_client(kind, base, args.games, record)
            wall = time.monotonic() - t0
            figures = check(reports, record, spec, key, args.games)
            load = os.getloadavg()
            name = {"ts": "TypeScript bot", "py": "Python client"}[kind]
            print(
                f"{name}: {figures['finished']}/{figures['games']} games finished "
                f"({figures['decisions']} decisions) in {wall:.0f} s; answers {figures['statuses']}"
                f": {figures['429']} x 429, {figures['5xx']} x 5xx; {figures['exchanges']} "
                f"exchanges checked against openapi.yaml, {figures['invalid']} invalid; "
                f"{figures['logs']} logs: "
                + (
                    f"{figures['verified_in_node']} verified in Node, "
                    if figures["verified_in_node"] is not None
                    else ""
                )
                + f"{figures['verified_in_python']} verified in Python; load average after "
                f"{load[0]:.2f} {load[1]:.2f} {load[2]:.2f}"
            )
            for line in figures["invalid_first"]:
                print(f"  invalid: {line}")
            if stderr:
                print(f"  stderr: {stderr[-800:]}")
            missed = (
                figures["finished"] < args.games
                or figures["429"]
                or figures["5xx"]
                or figures["invalid"]
                or figures["verified_in_python"] < args.games
                or (kind == "ts" and figures["verified_in_node"] < args.games)
            )
            failed = failed or bool(missed)
        print("target met" if not failed else f"target missed (server logs in {log_dir})")
    finally:
        for w in workers:
            stop(w)
        stop(api)
        _purge(store, prefix)
        if tmp_store:
            shutil.rmtree(tmp_store, ignore_errors=True)
        if not failed:
            shutil.rmtree(log_dir, ignore_errors=True)
    return 1 if failed else 0


def _purge(store: str, prefix: str) -> None:
    """Delete the run's keys (its prefix and its RQ queue's)."""
    if not store.startswith("redis"):
        return
    import redis

    from tests.conftest import purge_prefix as purge

    client = redis.Redis.from_url(store)
    try:
        purge(client, prefix)
    finally:
        client.close()


if __name__ == "__main__":
    sys.exit(main())
