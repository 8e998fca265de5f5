"""What each hand-made fast path around a library saves a command, against the command's CPU.

    python bench/fast_paths.py [--url redis://127.0.0.1:6379/0] [--games 3]

First the command's CPU in the production configuration (``bench/command_profile.py --mode api
--production``: limits, dispatcher, access line), then, for each fast path the API keeps, the
CPU of the library's own way and of the fast path on what one command does (timed in a loop, best
of 5), and the saving as a share of the command. The rule (docs/performance.md): a fast path
stays only while it saves more than 5% of a command's CPU. Asserts nothing.
"""

from __future__ import annotations

import argparse
import json
import logging
import os
import sys
import time
import uuid
from collections.abc import Callable
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "bench"))


def best_us(fn: Callable[[], Any], n: int = 2000, rounds: int = 5) -> float:
    """Microseconds per call of ``fn``: the best of ``rounds`` loops of ``n`` (CPU time)."""
    best = float("inf")
    for _ in range(rounds):
        t0 = time.process_time()
        for _ in range(n):
            fn()
        best = min(best, (time.process_time() - t0) / n * 1e6)
    return best


def command_cpu_us(url: str, games: int) -> float:
    """One command's CPU in this process, as ``rfg run`` serves it (in-process WSGI)."""
    import command_profile

    import events

    args = argparse.Namespace(
        url=url, games=games, seed="fast-paths", apps=1, timer="cpu", production=True
    )
    client = events.connect(url, decode_responses=False)
    prefix = f"fp{uuid.uuid4().hex[:8]}"
    try:
        n, _prof, _wall, cpu = command_profile.run_api(args, client, prefix)
    finally:
        keys = list(client.scan_iter(match=f"{prefix}:*", count=1000))
        for i in range(0, len(keys), 500):
            client.delete(*keys[i : i + 500])
    return cpu / n * 1e6


def fastload_pair() -> tuple[Callable[[], Any], Callable[[], Any]]:
    """marshmallow's ``load`` of a command body vs the loader compiled from the schema."""
    from service.fastload import loader_for
    from service.schemas.requests import CommandRequestSchema

    schema = CommandRequestSchema()
    body = {
        "command_id": "c-42",
        "expected_version": 17,
        "command": {"kind": "assign", "select": {"die": 3, "phase": "develop"}, "wild": []},
    }
    schema.load(body)  # (a body the schema accepts)
    loader = loader_for(schema)
    assert loader is not None
    return (lambda: schema.load(body)), (lambda: loader(body))


def logging_pair() -> tuple[Callable[[], Any], Callable[[], Any]]:
    """python-json-logger's ``JsonFormatter`` vs ``service.logs.JsonLines`` on an access line."""
    from pythonjsonlogger.json import JsonFormatter

    from service.logs import JsonLines

    fmt = "%(asctime)s %(levelname)s %(name)s %(message)s"
    plain, fast = JsonFormatter(fmt), JsonLines(fmt)
    record = logging.LogRecord(
        "service.access", logging.INFO, __file__, 1, "POST /games/x/seats/0/commands 201", (), None
    )
    for key, value in {
        "request_id": uuid.uuid4().hex,
        "method": "POST",
        "path": "/games/0123456789ab/seats/0/commands",
        "status": 201,
        "ms": 1.234,
        "remote": "127.0.0.1",
        "game_id": "0123456789ab",
        "seat": 0,
    }.items():
        setattr(record, key, value)
    return (lambda: plain.format(record)), (lambda: fast.format(record))


def json_pair() -> tuple[Callable[[], Any], Callable[[], Any]]:
    """``json.loads`` vs ``orjson.loads`` of a command body (``service.http.read_json``)."""
    import orjson

    raw = json.dumps(
        {
            "command_id": "c-42",
            "expected_version": 17,
            "command": {"kind": "assign", "select": {"die": 3, "phase": "develop"}, "wild": []},
        }
    ).encode()
    return (lambda: json.loads(raw)), (lambda: orjson.loads(raw))


def ensure_sync_pair() -> tuple[Callable[[], Any], Callable[[], Any]]:
    """Flask's ``ensure_sync`` vs ``ServiceFlask``'s, for the functions one command calls (its
    view, request hooks and teardowns: each is asked once per request)."""
    from flask import Flask

    from service import create_app

    app = create_app({"STORE_URL": f"memory://{uuid.uuid4().hex}", "TESTING": True})
    funcs = [app.view_functions["commands.submit"]]
    for table in (app.before_request_funcs, app.after_request_funcs, app.teardown_request_funcs):
        funcs += table.get(None, [])

    def library() -> None:
        for f in funcs:
            Flask.ensure_sync(app, f)

    def fast() -> None:
        for f in funcs:
            app.ensure_sync(f)

    return library, fast


def body_pair() -> tuple[Callable[[], Any], Callable[[], Any]]:
    """werkzeug's ``LimitedStream.readall`` vs ``service.http._Body`` on a command's body."""
    import io

    from werkzeug.wsgi import LimitedStream

    from service.http import _Body

    raw = json.dumps({"command_id": "c-42", "expected_version": 17, "command": {}}).encode()
    return (
        lambda: LimitedStream(io.BytesIO(raw), len(raw)).readall(),
        lambda: _Body(io.BytesIO(raw), len(raw)).readall(),
    )


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--url", default=os.environ.get("REDIS_URL", "redis://127.0.0.1:6379/0"))
    p.add_argument("--games", type=int, default=3)
    args = p.parse_args()
    command = command_cpu_us(args.url, args.games)
    print(f"a command's CPU, production configuration (in-process): {command:.0f} us")
    rows = [
        ("service.fastload (marshmallow load)", fastload_pair()),
        ("service.logs.JsonLines (python-json-logger)", logging_pair()),
        ("orjson in read_json (json.loads)", json_pair()),
        ("ServiceFlask.ensure_sync (Flask's)", ensure_sync_pair()),
        ("service.http._Body (werkzeug LimitedStream)", body_pair()),
    ]
    print(f"{'fast path':46s} {'library':>9s} {'fast':>9s} {'saves':>9s} {'of a command':>13s}")
    for name, (library, fast) in rows:
        slow_us, fast_us = best_us(library), best_us(fast)
        saved = slow_us - fast_us
        print(
            f"{name:46s} {slow_us:7.1f}us {fast_us:7.1f}us {saved:7.1f}us "
            f"{100 * saved / command:12.1f}%"
        )


if __name__ == "__main__":
    main()
