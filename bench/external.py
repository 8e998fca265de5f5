"""External bots benchmark: a ladder of 4 external example bots through the HTTP API, and how long
a decision takes to reach a bot's decisions stream.

    python bench/external.py [--url redis://127.0.0.1:6379/0] [--seconds 60] [--concurrency 4]

Starts the API as hosts run it (``rfgcli.run.api_command``: gunicorn's gevent worker with
``service.gunicorn_conf``, ``RFG_DISPATCH=1``; rate limits off, as the 4 bots share one address
and play far faster than people), one ``rfg worker`` (its sweep schedules the ladder's games and
records their results),
registers 4 bot accounts, enters them in a 4-player ladder and runs 4 ``examples/random_bot.py``
processes, each following its account's ``GET /bots/me/decisions/stream`` and answering over
HTTP. A fifth connection follows account 0's stream in this process: each decision's delay is
from ``since`` (the timestamp sealed into the batch whose append made it pending, taken just
before the append) to the moment its event is read here, so it covers the append, the notice and
the stream. Prints ladder games per hour and those delays; asserts nothing; deletes its keys.
"""

from __future__ import annotations

import argparse
import json
import os
import signal
import subprocess
import sys
import tempfile
import threading
import time
import urllib.request
import uuid
from datetime import datetime
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "bench"))

from api import API_APP, free_port, host_env, purge, request, start_command, stop  # noqa: E402

import events.store  # noqa: E402
from events.games.service import GameService  # noqa: E402
from ladder.service import Ladders  # noqa: E402

ADMIN = "bench-admin"
RFG = str(Path(sys.executable).parent / "rfg")


def pct(values: list[float], q: float) -> float:
    if not values:
        return float("nan")
    values = sorted(values)
    return values[min(len(values) - 1, int(q * len(values)))]


def follow(port: int, token: str, stop_at: float, out: list[float]) -> None:
    """Read an account's decisions stream, recording each decision's delay in ms."""
    while time.time() < stop_at:
        req = urllib.request.Request(
            f"http://127.0.0.1:{port}/bots/me/decisions/stream",
            headers={"Authorization": f"Bearer {token}"},
        )
        try:
            with urllib.request.urlopen(req, timeout=30) as resp:
                for raw in resp:
                    line = raw.decode().rstrip("\n")
                    if line.startswith("data: "):
                        got = datetime.now().astimezone()
                        d = json.loads(line[6:])
                        since = datetime.fromisoformat(d["since"].replace("Z", "+00:00"))
                        out.append((got - since).total_seconds() * 1000)
                    if time.time() >= stop_at:
                        return
        except OSError:
            time.sleep(0.1)


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--url", default=os.environ.get("REDIS_URL", "redis://127.0.0.1:6379/0"))
    p.add_argument("--seconds", type=float, default=60.0)
    p.add_argument("--concurrency", type=int, default=4, help="ladder games in flight")
    p.add_argument("--api-workers", type=int, default=2)
    args = p.parse_args()
    prefix = f"bench{uuid.uuid4().hex[:8]}"
    env = host_env(args.url, prefix, limits=False)
    logdir = Path(tempfile.mkdtemp(prefix="rfg-external-"))
    port = free_port()
    api = start_command(API_APP, port, env, logdir, args.api_workers)
    procs: list[subprocess.Popen[bytes]] = []
    client = events.store.connect(args.url)
    try:
        worker_log = open(logdir / "worker.log", "wb")  # noqa: SIM115
        procs.append(
            subprocess.Popen(
                [
                    RFG,
                    "worker",
                    "--url",
                    args.url,
                    "--prefix",
                    prefix,
                    "--log-level",
                    "WARNING",
                    "--ladder-interval",
                    "0.2",
                ],
                cwd=ROOT,
                stdout=worker_log,
                stderr=subprocess.STDOUT,
                start_new_session=True,
            )
        )
        admin = {"Authorization": f"Bearer {ADMIN}"}
        tokens = []
        for i in range(4):
            status, raw = request(
                port,
                "POST",
                "/bots/accounts",
                {"name": f"ext{i}", "description": "random", "contact": "a@b.c"},
            )
            assert status == 201, raw
            acct = json.loads(raw)
            tokens.append(acct["token"])
            if i == 0:
                status, raw = request(
                    port,
                    "POST",
                    "/ladders",
                    {"name": "ext", "players": [4], "concurrency": args.concurrency},
                    admin,
                )
                assert status == 201, raw
            status, raw = request(
                port,
                "POST",
                "/ladders/ext/entrants",
                {"entrant": f"ext{i}", "account": acct["account_id"]},
                admin,
            )
            assert status == 201, raw
        started = time.time()
        stop_at = started + args.seconds
        delays: list[float] = []
        watcher = threading.Thread(
            target=follow, args=(port, tokens[0], stop_at, delays), daemon=True
        )
        watcher.start()
        for i, token in enumerate(tokens):
            log = open(logdir / f"bot-{i}.log", "wb")  # noqa: SIM115
            procs.append(
                subprocess.Popen(
                    [
                        sys.executable,
                        str(ROOT / "examples" / "random_bot.py"),
                        "--url",
                        f"http://127.0.0.1:{port}",
                        "--token",
                        token,
                        "--seed",
                        str(i),
                    ],
                    cwd=ROOT,
                    stdout=log,
                    stderr=subprocess.STDOUT,
                    start_new_session=True,
                )
            )
        ladders = Ladders(
            client, GameService(events.store.RedisStore(client, prefix=prefix)), prefix=prefix
        )
        time.sleep(max(0.0, stop_at - time.time()))
        results = len(ladders.results("ext"))
        wall = time.time() - started
        watcher.join(timeout=5)
    finally:
        for proc in procs:
            try:
                os.killpg(proc.pid, signal.SIGTERM)
            except ProcessLookupError:
                pass
        for proc in procs:
            try:
                proc.wait(timeout=10)
            except subprocess.TimeoutExpired:
                os.killpg(proc.pid, signal.SIGKILL)
        stop(api)
        purge(args.url, prefix)
    print(
        f"external bots: 4 x examples/random_bot.py on a 4-player ladder ({args.concurrency} games "
        f"in flight), API rfgcli.run.api_command ({args.api_workers} gevent workers), 1 rfg worker, "
        f"store {args.url}"
    )
    print(
        f"  ladder games recorded: {results} in {wall:.1f} s = {results / wall * 3600:,.0f} games/h"
    )
    print(
        f"  decision delay, append -> bot's stream (n={len(delays)}): p50 {pct(delays, 0.5):.1f} ms, "
        f"p90 {pct(delays, 0.9):.1f} ms, p99 {pct(delays, 0.99):.1f} ms"
    )
    print(f"  logs: {logdir}")


if __name__ == "__main__":
    main()
