"""Where a command's time goes: the command path profiled with pyinstrument, per part.

    python bench/command_profile.py [--url redis://127.0.0.1:6379/0] [--games 6] [--mode worker|api]

``worker``: 4-player heuristic-bot games played the way a worker plays them (``workers.turns.play``
with playing on: decide, ``GameService.submit`` - seal, views, clocks, one Lua append - and on to the
next decision), no RQ. ``api``: the same games' commands sent as ``POST /games/<id>/seats/<n>/
commands`` (seat tokens, ``expected_version``) to the Flask app in-process (WSGI test client: the
whole request path - routing, auth, marshmallow, ``GameService.submit``, the JSON answer - without
sockets or gunicorn), a random bot's commands computed beforehand (``bench/api.py``'s scripts).
``--apps 2``: spread over two apps at random, as over two gunicorn workers (each app's game cache
is then often behind the store: the catch-up a command pays then shows).

Prints per decision: wall and CPU time of this process, and the time (pyinstrument, wall, the
outermost call of each part) spent in each part of the path. Redis's own CPU is not in it. The
machine is shared and noisy: compare runs made one after the other. Asserts nothing; every key
written is deleted.

``--timer cpu``: instead of pyinstrument, each part is wrapped with a ``time.process_time``
counter (outermost call; ``CPU_PARTS``), so the figures are this process's CPU per part without a
profiler's overhead - a sampling or tracing profiler inflates code made of many small calls
(marshmallow's load looked 5x its real cost under pyinstrument and cProfile).
"""

from __future__ import annotations

import argparse
import logging
import os
import random
import sys
import time
import uuid
from collections.abc import Iterator
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from pyinstrument import Profiler  # noqa: E402

import events.store  # noqa: E402

#: (label, function name, path fragment) - the parts reported, outermost call each
PARTS = [
    ("load / catch up with the store", "_catch_up", "events/games/service.py"),
    ("copy cached state + clocks", "copy", "engine/state.py"),
    ("bot decides (incl. its observe)", "bot_command", "workers/policy.py"),
    ("  bot's engine.observe", "observe", "engine/observe.py"),
    ("engine.play (rules)", "play", "engine/__init__.py"),
    ("seal_batch (hash chain)", "seal_batch", "events/envelope.py"),
    ("clocks.apply", "apply", "events/games/time_control.py"),
    ("render_views (all projections)", "render_views", "events/games/projections.py"),
    ("RedisStore.append (Lua, round trip)", "append", "events/store/redis_adapter.py"),
    ("listeners (dispatch, agenda)", "_notify", "events/games/service.py"),
    ("GameService.submit (total)", "submit", "events/games/service.py"),
    ("flask request (total)", "wsgi_app", "flask/app.py"),
    ("  marshmallow load", "load", "marshmallow/schema.py"),
    ("  auth (seat token)", "require_seat", "service/auth.py"),
]


#: --timer cpu: (label, module, attribute) wrapped with a process_time counter (outermost call);
#: an attribute a tree does not have is left out
CPU_PARTS = [
    ("flask request (total)", "flask", "Flask.wsgi_app"),
    (
        "  auth: limits + seat token (one round trip)",
        "service.api.commands",
        "require_seat_command",
    ),
    ("  body: read, JSON, schema", "service.api.commands", "load_body"),
    ("  answer: JSON response", "service.api.commands", "respond"),
    ("  limits: check (before the view)", "service.limits", "Limits.check"),
    ("  limits: headers (after the view)", "service.limits", "Limits.after"),
    ("  access line + request id", "service.logs", "_after"),
    ("  metrics", "service.metrics", "_after"),
    ("  security headers", "service.headers", "secure"),
    ("bot decides (incl. its observe)", "workers.policy", "bot_command"),
    ("GameService.submit (total)", "events.games.service", "GameService.submit"),
    ("  load / catch up with the store", "events.games.service", "GameService._catch_up"),
    ("  engine.play (rules)", "engine", "play"),
    ("  seal_batch (hash chain)", "events.games.service", "seal_batch"),
    ("  render_views (all projections)", "events.games.service", "render_views"),
    ("    engine.observe_all", "engine", "observe_all"),
    ("  dispatcher (agenda, jobs)", "workers.dispatch", "Dispatcher.after_append"),
    ("  RedisStore.append (client, round trip)", "events.store.redis_adapter", "RedisStore.append"),
]
APPEND_PART = CPU_PARTS[-1][0]


class CpuTimer:
    """``--timer cpu``: the parts' CPU time (this process), with pyinstrument's start/stop."""

    def __init__(self) -> None:
        self.totals: dict[str, float] = {}
        self._depth: dict[str, int] = {}
        self._undo: list[tuple[Any, str, Any]] = []

    def wrap_instance(self, obj: Any, attr: str, label: str) -> None:
        """Time an instance's own attribute from now on (after ``start``)."""
        self._wrap(obj, attr, label)

    def _wrap(self, owner: Any, attr: str, label: str) -> None:
        original = owner.__dict__[attr] if isinstance(owner, type) else getattr(owner, attr)
        fn = original.__func__ if isinstance(original, staticmethod) else original

        def timed(*args: Any, **kwargs: Any) -> Any:
            depth = self._depth.get(label, 0)
            self._depth[label] = depth + 1
            t0 = time.process_time()
            try:
                return fn(*args, **kwargs)
            finally:
                self._depth[label] = depth
                if depth == 0:
                    self.totals[label] = self.totals.get(label, 0.0) + time.process_time() - t0

        setattr(owner, attr, timed)
        self._undo.append((owner, attr, original))

    def start(self) -> None:
        import importlib

        for label, module, path in CPU_PARTS:
            try:
                owner: Any = importlib.import_module(module)
                *outer, attr = path.split(".")
                for name in outer:
                    owner = getattr(owner, name)
                getattr(owner, attr)
            except (ImportError, AttributeError):
                continue
            self._wrap(owner, attr, label)

    def stop(self) -> None:
        for owner, attr, original in reversed(self._undo):
            setattr(owner, attr, original)
        self._undo.clear()


def profiler(args: argparse.Namespace) -> Any:
    return CpuTimer() if args.timer == "cpu" else Profiler(interval=args.interval)


def _walk(frame: Any, stack: set[str]) -> Iterator[tuple[str, float]]:
    """(part label, seconds) for each outermost frame of a part under ``frame``."""
    for label, func, path in PARTS:
        if label not in stack and frame.function == func and path in (frame.file_path or ""):
            yield label, frame.time
            stack = stack | {label}
            break
    for child in frame.children:
        yield from _walk(child, stack)


def parts(profiler: Any) -> dict[str, float]:
    if isinstance(profiler, CpuTimer):
        return {
            label: profiler.totals[label] for label, *_ in CPU_PARTS if label in profiler.totals
        }
    out: dict[str, float] = {}
    root = profiler.last_session.root_frame() if profiler.last_session else None
    if root is None:
        return out
    for label, seconds in _walk(root, set()):
        out[label] = out.get(label, 0.0) + seconds
    return out


def run_worker(args: argparse.Namespace, client: Any, prefix: str) -> tuple[int, Any, float, float]:
    from workers import Runtime, WorkerSettings, install
    from workers.dispatch import next_plan, plans
    from workers.turns import play

    rt = Runtime(client, WorkerSettings(prefix=prefix, queue=prefix, play_on=3600.0))
    install(rt)
    table = {"seats": [{"kind": "bot", "bot": "heuristic"}] * 4}
    gids = []
    prof = profiler(args)
    wall0, cpu0 = time.perf_counter(), time.process_time()
    prof.start()
    for i in range(args.games):
        gid, _ = rt.games.create(4, seed=f"{args.seed}:{i}", table=table)
        gids.append(gid)
        state, _v, clocks = rt.games.load_clocks(gid)
        p = next_plan(plans(gid, state, clocks, "heuristic"))
        play(rt, gid, p.seat, p.decision_id)  # plays the whole game on
    prof.stop()
    wall, cpu = time.perf_counter() - wall0, time.process_time() - cpu0
    n = sum(1 for g in gids for e in rt.store.read(g) if e.type == "CommandSubmitted")
    install(None)
    return n, prof, wall, cpu


def run_api(args: argparse.Namespace, client: Any, prefix: str) -> tuple[int, Any, float, float]:
    sys.path.insert(0, str(ROOT / "bench"))
    from api import script_for  # bench/api.py: a random bot's commands with their versions

    from rfgcli.wsgi import create_app

    config = {
        "STORE_URL": args.url,
        "STORE_PREFIX": prefix,
        "TESTING": True,
        "RATE_LIMITS": args.production,
        "ADMIN_TOKEN": "bench",
    }
    if args.production:  # as rfg run: limits (quotas the run cannot reach), the dispatcher,
        # an access line per request (to nowhere: what it costs to make is measured)
        config |= {
            "LIMIT_PER_ADDRESS": "1000000 per minute",
            "LIMIT_PER_TOKEN": "1000000 per minute",
            "LIMIT_COMMANDS": "1000000 per minute",
        }
        config |= {"DISPATCH_TURNS": True}
        logging.basicConfig(level=logging.INFO, stream=open(os.devnull, "w"))  # noqa: SIM115
    # --apps N: N apps on the store, each with its own game cache, as N gunicorn workers; each
    # command goes to one of them at random (as the workers race to accept connections)
    prof = profiler(args)
    if isinstance(prof, CpuTimer):  # wrapped before the apps register their hooks and listeners
        prof.start()
    apps = [create_app(config).test_client() for _ in range(args.apps)]
    api = apps[0]
    pick = random.Random(args.seed)
    work = []
    for i in range(args.games):
        seed = f"{args.seed}:{i}"
        r = api.post(
            "/games",
            json={"seats": [{"kind": "human"}] * 4, "seed": seed},
            headers={"Authorization": "Bearer bench"},
        )
        assert r.status_code == 201, r.get_json()
        gid = r.get_json()["game_id"]
        tokens = [
            api.post(f"/games/{gid}/seats/{seat}/claim").get_json()["token"] for seat in range(4)
        ]
        work.append((gid, tokens, script_for(seed, 4, i)))
    if isinstance(prof, CpuTimer):  # the app's store.append is the metrics wrapper's own
        for c in apps:
            prof.wrap_instance(c.application.extensions["rfg"].store, "append", APPEND_PART)
        prof.totals.clear()  # (the games' creation and claims above are not measured)
    n = 0
    wall0, cpu0 = time.perf_counter(), time.process_time()
    if not isinstance(prof, CpuTimer):
        prof.start()
    for gid, tokens, script in work:
        for k, (seat, command, expected, new) in enumerate(script):
            r = apps[pick.randrange(len(apps))].post(
                f"/games/{gid}/seats/{seat}/commands",
                json={"command_id": f"c{k}", "expected_version": expected, "command": command},
                headers={"Authorization": f"Bearer {tokens[seat]}"},
            )
            assert r.status_code == 201 and r.get_json()["version"] == new, r.get_json()
            n += 1
    prof.stop()
    return n, prof, time.perf_counter() - wall0, time.process_time() - cpu0


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--url", default=os.environ.get("REDIS_URL", "redis://127.0.0.1:6379/0"))
    p.add_argument("--games", type=int, default=6)
    p.add_argument("--mode", choices=["worker", "api"], default="worker")
    p.add_argument("--seed", default="profile")
    p.add_argument("--interval", type=float, default=0.0002, help="pyinstrument sampling interval")
    p.add_argument("--rounds", type=int, default=3, help="runs; the fastest is reported")
    p.add_argument("--tree", action="store_true", help="also print pyinstrument's call tree")
    p.add_argument(
        "--timer",
        choices=["pyinstrument", "cpu"],
        default="pyinstrument",
        help="cpu: process_time counters around the parts instead of a profiler",
    )
    p.add_argument(
        "--apps",
        type=int,
        default=1,
        help="api: apps (game caches) the commands are spread over at random, as gunicorn workers",
    )
    p.add_argument(
        "--production",
        action="store_true",
        help="api: rate limits, the dispatcher and the access log on, as rfg run serves",
    )
    args = p.parse_args()
    client = events.store.connect(args.url, decode_responses=False)
    best: tuple[int, Any, float, float] | None = None
    for _ in range(args.rounds):
        prefix = f"prof{uuid.uuid4().hex[:8]}"
        try:
            run = run_worker if args.mode == "worker" else run_api
            got = run(args, client, prefix)
        finally:
            for pattern in (f"{prefix}:*", f"rq:*{prefix}*"):
                keys = list(client.scan_iter(match=pattern, count=1000))
                for i in range(0, len(keys), 500):
                    client.delete(*keys[i : i + 500])
        if best is None or got[2] / got[0] < best[2] / best[0]:
            best = got
    assert best is not None
    n, prof, wall, cpu = best
    print(
        f"command path ({args.mode}): {n} commands in {args.games} 4-player games; best of "
        f"{args.rounds} round(s), per command: wall {wall / n * 1000:.3f} ms, CPU of this "
        f"process {cpu / n * 1000:.3f} ms"
    )
    for label, seconds in parts(prof).items():
        print(f"  {label:40s} {seconds / n * 1000:7.3f} ms")
    if args.tree and isinstance(prof, Profiler):
        print(prof.output_text(unicode=False, color=False))


if __name__ == "__main__":
    main()
