"""The example bots run forever (issue 37's target): two bot accounts, the Python client's bot
(``python -m rfg_client``) and the TypeScript example (``clients/typescript/examples/bot.ts``),
join an open ladder themselves and play its rated games and challenges between them, each killed
once mid-game and restarted; nothing but their tokens is given to them.

    make ts-client                       # once: the TypeScript client's packages and build
    python bench/example_bots.py [--games 20] [--challenges 3] [--url redis://127.0.0.1:6379/13]

The server is started as ``rfg run`` starts it (``rfgcli.run.api_command``: gunicorn's gevent
worker, 2 processes, the rate limits on at their defaults) with ``--bot-workers`` ``rfg worker``
processes (they run the ladder's scheduler and the clocks), on the store ``--url`` (default
``$REDIS_URL``, else the local Redis, else an embedded one) under a fresh key prefix, deleted
afterwards. Each bot reaches it through a recording proxy of its own (``Recorder``) that keeps
every exchange, the streams' bodies included (a killed bot's cut at its last whole event), and
gives the bot an address of its own (``X-Forwarded-For``, the server trusting one proxy hop as
behind deploy/nginx.conf): the per-address limits are each bot's, as on two hosts. Then:

1. the admin token makes a 2-player ladder (``--concurrency`` games at a time, 30 s a decision)
   and opens it (``PATCH /ladders/{ladder}`` ``{"open": true}``); two bot accounts are registered;
2. each bot starts with its token and joins the ladder itself (``--join``); the Python bot
   challenges the TypeScript one ``--challenges`` times rated on the ladder, the TypeScript bot
   the Python one as many times unrated;
3. once ``--games`` scheduled ladder games have started the ladder is paused; each bot is killed
   (SIGKILL) once while it is in a game, and started again at once with the challenges it has
   left to send;
4. when the ladder has no game running, each bot has sent its challenges and neither has an active
   game or an open challenge, both get SIGTERM and must exit with status 0 within 15 s.

Checked and printed: every game of both accounts played to its end (no abandon, abort or
resignation), each killed bot's game
finished with commands from its restarted process, 0 x 429, 0 x 5xx, every exchange valid against
openapi.yaml (openapi-core, as the test suite checks: streams event by event, logs line by line),
every game's log verified in Python (``events.verify``: every command replayed, the signature
checked against ``GET /signing-key``) and in Node (``clients/typescript`` ``verify-cli``); the
figures: games, decisions, the command answers' latency at the proxy (p50/p99), elapsed time.
Exit status 1 when a check fails.
"""

from __future__ import annotations

import argparse
import http.client
import json
import os
import shutil
import signal
import subprocess
import sys
import tempfile
import threading
import time
import urllib.error
import urllib.request
import uuid
from collections import Counter
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

ROOT = Path(__file__).resolve().parents[1]
TS = ROOT / "clients" / "typescript"
CLIENT_SRC = ROOT / "clients" / "python" / "src"
sys.path[:0] = [str(ROOT), str(CLIENT_SRC)]  # the spec's checker reads streams with the client

#: how a game may end without being played out: none of the run's games may
CUT_SHORT = ("abandoned", "aborted", "resigned")
#: hop-by-hop headers: the proxy's own business on each side
HOP = {"connection", "keep-alive", "transfer-encoding", "te", "trailer", "upgrade", "host"}
HOP |= {"proxy-connection", "content-length", "x-forwarded-for"}
#: the ladder's clock for the bots' seats: far above a restart's pause
TIME_CONTROL = {"per_decision": 30}


# --- the recording proxy ----------------------------------------------------------------------
class Recorder(ThreadingHTTPServer):
    """A reverse proxy to ``upstream`` that records every exchange (``exchanges``: the recorded
    form ``tests.service.conftest.exchange_errors`` checks, plus ``started``/``seconds``: when
    the request came and how long the answer's head took). Streams are relayed as they come.
    It tells the server its client's address is ``client`` (``X-Forwarded-For``, read by a
    server started with ``RFG_PROXY_HOPS=1``, as behind deploy/nginx.conf): one proxy per bot,
    each bot at an address of its own, as two bots on two hosts would be."""

    daemon_threads = True

    def __init__(self, upstream: str, client: str) -> None:
        super().__init__(("127.0.0.1", 0), _Relay)
        self.upstream = urlsplit(upstream)
        self.client = client
        self.exchanges: list[dict[str, Any]] = []
        self.lock = threading.Lock()
        self.thread = threading.Thread(target=self.serve_forever, daemon=True)
        self.thread.start()

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.server_address[1]}"

    def close(self) -> None:
        self.shutdown()
        self.server_close()


class _Relay(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"
    server: Recorder

    def log_message(self, format: str, *args: Any) -> None:  # noqa: A002 - the base's name
        pass

    def _relay(self) -> None:
        started = time.time()
        body = self.rfile.read(int(self.headers.get("Content-Length") or 0))
        sent = {k: v for k, v in self.headers.items() if k.lower() not in HOP}
        sent["X-Forwarded-For"] = self.server.client
        up = self.server.upstream
        conn = http.client.HTTPConnection(up.hostname or "127.0.0.1", up.port, timeout=300)
        received = bytearray()
        status, headers = 502, {}
        try:
            conn.request(self.command, self.path, body=body or None, headers=sent)
            resp = conn.getresponse()
            seconds = time.time() - started
            status, headers = resp.status, {k.lower(): v for k, v in resp.getheaders()}
            self.send_response(status)
            for k, v in resp.getheaders():
                if k.lower() not in HOP:
                    self.send_header(k, v)
            length = headers.get("content-length")
            if length is not None:
                self.send_header("Content-Length", length)
            self.send_header("Connection", "close")
            self.end_headers()
            while chunk := resp.read1(65536):
                received += chunk
                self.wfile.write(chunk)
                self.wfile.flush()
        except (OSError, http.client.HTTPException):
            seconds = time.time() - started  # the bot went away (killed) or the server did
        finally:
            conn.close()
            self.close_connection = True
            if headers.get("content-type", "").startswith("text/event-stream"):
                cut = received.rfind(b"\n\n")  # a stream cut short: its whole events
                received = received[: cut + 2] if cut >= 0 else bytearray()
            exchange = {
                "method": self.command,
                "url": self.server.url + self.path,
                "request_headers": {k.lower(): v for k, v in self.headers.items()},
                "request_body": body.decode("utf-8", "replace"),
                "status": status,
                "headers": headers,
                "body": received.decode("utf-8", "replace"),
                "started": started,
                "seconds": seconds,
            }
            with self.server.lock:
                self.server.exchanges.append(exchange)

    do_GET = do_POST = do_PUT = do_PATCH = do_DELETE = do_HEAD = _relay


# --- the bots ---------------------------------------------------------------------------------
@dataclass
class Bot:
    """One example bot's process: ``kind`` ``py`` or ``ts``, started with ``args``, and
    ``challenge`` while it has challenges left to send."""

    kind: str
    token: str
    log_dir: Path
    args: list[str]
    challenge: list[str]
    proxy: Recorder
    proc: subprocess.Popen[bytes] | None = None
    runs: int = 0
    killed_in: list[str] = field(default_factory=list)  # the games it was in when killed
    killed_at: float = 0.0

    def start(self, challenges_left: int) -> None:
        url = self.proxy.url
        args = [*self.args]
        if challenges_left > 0:
            args += [*self.challenge, "--challenges", str(challenges_left)]
        if self.kind == "py":
            cmd = [sys.executable, "-m", "rfg_client", "--url", url, *args]
            env = {"PYTHONPATH": str(CLIENT_SRC)}  # the client alone: no server package
        else:
            cmd = ["node", str(TS / "dist" / "examples" / "bot.js"), "--url", url, *args]
            env = {}
        env = {**{k: v for k, v in os.environ.items() if not k.startswith("RFG_")}, **env}
        env["RFG_BOT_TOKEN"] = self.token
        self.runs += 1
        with open(self.log_dir / f"{self.kind}-{self.runs}.log", "wb") as out:
            self.proc = subprocess.Popen(
                cmd, cwd=self.log_dir, env=env, stdin=subprocess.DEVNULL, stdout=out, stderr=out
            )

    def log(self) -> str:
        return "".join(
            (self.log_dir / f"{self.kind}-{n}.log").read_text("utf-8", "replace")
            for n in range(1, self.runs + 1)
        )


# --- the run ----------------------------------------------------------------------------------
@dataclass
class Figures:
    """What ``run`` measured and checked (``failures``: the checks that failed, in words)."""

    games: dict[str, int]
    reasons: dict[str, int]
    decisions: int
    conflicts: int
    latency_ms: tuple[float, float]
    statuses: dict[int, int]
    exchanges: int
    invalid: list[str]
    verified_python: int
    verified_node: int
    refused: list[str]
    kills: list[str]
    exits: dict[str, int | None]
    seconds: float
    checks_seconds: float
    failures: list[str]

    def lines(self) -> list[str]:
        s = self.statuses
        return [
            f"games: {sum(self.games.values())} ({', '.join(f'{v} {k}' for k, v in self.games.items())})"
            f", results {dict(self.reasons)}",
            f"decisions: {self.decisions} commands answered 201 ({self.conflicts} x 409), "
            f"command latency at the proxy p50 {self.latency_ms[0]:.1f} ms, "
            f"p99 {self.latency_ms[1]:.1f} ms",
            f"exchanges: {self.exchanges}, answers {dict(sorted(s.items()))}: {s.get(429, 0)} x 429, "
            f"{sum(v for k, v in s.items() if k >= 500)} x 5xx, {len(self.invalid)} invalid "
            "against openapi.yaml",
            f"logs: {self.verified_python} verified in Python, {self.verified_node} in Node",
            *[f"kill: {k}" for k in self.kills],
            f"SIGTERM: exit status {self.exits}",
            f"elapsed: {self.seconds:.0f} s (the checks then {self.checks_seconds:.0f} s)",
            *[f"  invalid: {x}" for x in self.invalid[:5]],
            *[f"  refused: {x}" for x in self.refused[:5]],
            *[f"FAILED: {f}" for f in self.failures],
        ]


class Admin:
    """The bench's own requests, straight to the server (not recorded)."""

    def __init__(self, base: str, token: str) -> None:
        self.base, self.token = base, token

    def call(self, method: str, path: str, body: Any = None, token: str | None = None) -> Any:
        data = None if body is None else json.dumps(body).encode()
        headers = {"Authorization": f"Bearer {token or self.token}", "Accept": "application/json"}
        if data is not None:
            headers["Content-Type"] = "application/json"
        req = urllib.request.Request(self.base + path, data=data, method=method, headers=headers)
        with urllib.request.urlopen(req, timeout=30) as resp:
            raw = resp.read()
        return json.loads(raw) if raw else None

    def games(self, token: str, status: str) -> list[dict[str, Any]]:
        games: list[dict[str, Any]] = []
        cursor = ""
        while True:
            page = self.call(
                "GET", f"/bots/me/games?status={status}&limit=100{cursor}", token=token
            )
            games += page["games"]
            if not page.get("next_cursor"):
                return games
            cursor = f"&cursor={page['next_cursor']}"


def run(
    base: str,
    admin_token: str,
    *,
    games: int,
    challenges: int,
    concurrency: int,
    log_dir: Path,
    timeout: float = 3600.0,
) -> Figures:
    """The whole run against the server at ``base`` (started with ``RFG_PROXY_HOPS=1``: each
    bot's recorder names its address); ``log_dir`` gets the bots' logs and the games' logs."""
    from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PublicKey

    from events.verify.replay import verify_text
    from events.verify.signing import load_public_key
    from tests.service.conftest import exchange_errors, load_openapi

    t0 = time.monotonic()
    admin = Admin(base, admin_token)
    proxies = [Recorder(base, "198.51.100.1"), Recorder(base, "198.51.100.2")]
    ladder = f"examples-{uuid.uuid4().hex[:6]}"
    admin.call(
        "POST",
        "/ladders",
        {"name": ladder, "players": [2], "concurrency": concurrency, "time_control": TIME_CONTROL},
    )
    admin.call("PATCH", f"/ladders/{ladder}", {"open": True})
    accounts = [
        admin.call(
            "POST",
            "/bots/accounts",
            {
                "name": f"{kind}-example",
                "description": "the example bot",
                "contact": "bench@example.org",
            },
        )
        for kind in ("py", "ts")
    ]
    py_account, ts_account = (a["account_id"] for a in accounts)
    bots = [
        Bot("py", accounts[0]["token"], log_dir, ["--join", ladder],
            ["--challenge", ts_account, "--rated", ladder], proxies[0]),
        Bot("ts", accounts[1]["token"], log_dir, ["--join", ladder],
            ["--challenge", py_account], proxies[1]),
    ]  # fmt: skip
    for bot in bots:
        bot.start(challenges)

    # What the bench watches, without the bots' tokens (their quota is theirs): the ladder's
    # games (public), the games (public), and the challenges as the proxies saw them.
    def exchanges_now() -> list[dict[str, Any]]:
        with proxies[0].lock, proxies[1].lock:
            return [x for proxy in proxies for x in proxy.exchanges]

    def sent(bot: Bot) -> list[str]:
        """The challenges the bot made (their ids)."""
        with bot.proxy.lock:
            made = [
                x
                for x in bot.proxy.exchanges
                if x["method"] == "POST" and x["url"].endswith("/challenges") and x["status"] == 201
            ]
        return [json.loads(x["body"])["challenge_id"] for x in made]

    def outcomes() -> dict[str, str | None]:
        """Each answered challenge: its game (accepted), or None (declined, canceled, gone)."""
        out: dict[str, str | None] = {}
        for x in exchanges_now():
            path = urlsplit(x["url"]).path.split("/")  # /challenges/<id>/<accept|decline>
            if x["method"] == "POST" and len(path) == 4 and path[1] == "challenges":
                if path[3] == "accept" and x["status"] == 200:
                    out[path[2]] = json.loads(x["body"])["game_id"]
                elif x["status"] != 429:
                    out.setdefault(path[2], None)
        return out

    def ladder_games() -> dict[str, str]:
        """The ladder's games (scheduled ones and rated challenges'): game id -> status."""
        games: dict[str, str] = {}
        cursor = ""
        while True:
            page = admin.call("GET", f"/ladders/{ladder}/games?limit=100{cursor}")
            games |= {g["game_id"]: g["status"] for g in page["games"]}
            if not page["next_cursor"]:
                return games
            cursor = f"&cursor={page['next_cursor']}"

    failures: list[str] = []
    paused = False
    kill_after = {"py": max(1, games // 4), "ts": max(1, games // 2)}
    deadline = time.monotonic() + timeout
    while True:
        if time.monotonic() > deadline:
            failures.append(f"not done after {timeout:.0f} s")
            break
        for bot in bots:
            if bot.proc is not None and bot.proc.poll() is not None:
                failures.append(f"the {bot.kind} bot exited with {bot.proc.returncode}")
        if failures:
            break
        answered = outcomes()
        on_ladder = ladder_games()
        challenge_games = {g for g in answered.values() if g is not None}
        scheduled = len(set(on_ladder) - challenge_games)
        casual = challenge_games - set(on_ladder)
        active = {g for g, status in on_ladder.items() if status == "active"}
        active |= {g for g in casual if admin.call("GET", f"/games/{g}")["status"] == "active"}
        settled = {
            bot.kind: len(sent(bot)) >= challenges and all(c in answered for c in sent(bot))
            for bot in bots
        }
        # a paused ladder refuses rated challenges: paused once the Python bot's are answered
        if not paused and scheduled >= games and settled["py"]:
            admin.call("PATCH", f"/ladders/{ladder}", {"paused": True})
            paused = True
        for bot in bots:
            if bot.runs == 1 and (paused or scheduled > kill_after[bot.kind]) and active:
                bot.killed_in = sorted(active)  # both bots sit in every game: mid-game
                assert bot.proc is not None
                bot.proc.send_signal(signal.SIGKILL)
                bot.proc.wait()
                bot.killed_at = time.time()
                bot.start(challenges - len(sent(bot)))  # started again at once
        if paused and not active and all(settled.values()):
            break
        time.sleep(1.0)

    exits: dict[str, int | None] = {}
    for bot in bots:
        assert bot.proc is not None
        if bot.proc.poll() is None:
            bot.proc.send_signal(signal.SIGTERM)
            try:
                exits[bot.kind] = bot.proc.wait(15)
            except subprocess.TimeoutExpired:
                bot.proc.kill()
                exits[bot.kind] = None
        else:
            exits[bot.kind] = bot.proc.returncode
        if exits[bot.kind] != 0:
            failures.append(f"the {bot.kind} bot's exit status after SIGTERM: {exits[bot.kind]}")
    seconds = time.monotonic() - t0
    for proxy in proxies:
        proxy.close()

    # every game of both accounts, finished
    finished: dict[str, dict[str, Any]] = {}
    for bot in bots:
        for g in admin.games(bot.token, "finished"):
            finished[g["game_id"]] = g
    reasons = Counter(str((g.get("result") or {}).get("reason")) for g in finished.values())
    if any(r in CUT_SHORT for r in reasons) or not all(
        (g.get("result") or {}).get("winners") for g in finished.values()
    ):
        failures.append(f"not every game was played out: {dict(reasons)}")
    kinds = Counter("rated" if g["rated"] else "casual" for g in finished.values())
    kinds_named = {
        "rated ladder games (rated challenges included)": kinds["rated"],
        "casual challenges": kinds["casual"],
    }
    if kinds["rated"] < games + challenges or kinds["casual"] < challenges:
        failures.append(f"fewer games than asked: {kinds_named}")

    # the kills: each killed bot's games finished, played on by its second process
    exchanges = [x for proxy in proxies for x in proxy.exchanges]
    kills = []
    for bot in bots:
        if not bot.killed_in:
            failures.append(f"the {bot.kind} bot was never killed mid-game")
            continue
        for gid in bot.killed_in:
            after = sum(
                1
                for x in exchanges
                if x["method"] == "POST"
                and f"/games/{gid}/seats/" in x["url"]
                and x["url"].endswith("/commands")
                and x["started"] > bot.killed_at
                and x["request_headers"].get("authorization") == f"Bearer {bot.token}"
            )
            result = (finished.get(gid) or {}).get("result") or {}
            kills.append(
                f"{bot.kind} bot SIGKILLed in game {gid}: {after} commands after its restart, "
                f"the game {result.get('reason', 'NOT FINISHED')}"
            )
            if not after or result.get("reason") in (None, *CUT_SHORT):
                failures.append(f"the {bot.kind} bot did not resume game {gid}")

    # the exchanges: statuses, the spec, the commands' figures
    statuses = Counter(int(x["status"]) for x in exchanges)
    if statuses[429] or any(k >= 500 for k in statuses):
        failures.append(f"answers {dict(statuses)}")
    refused = [  # 409: a decision changed meanwhile, nothing to do; any other is worth a look
        f"{x['method']} {x['url']} {x['request_body'][:300]} -> {x['status']}: {x['body'][:300]}"
        for x in exchanges
        if x["status"] >= 400 and x["status"] != 409
    ]
    spec = load_openapi()
    invalid = []
    for x in exchanges:
        errors = exchange_errors(spec, x)
        if errors:
            invalid.append(f"{x['method']} {x['url']} -> {x['status']}: {errors[0][:300]}")
    if invalid:
        failures.append(f"{len(invalid)} exchanges off the spec")
    commands = [x for x in exchanges if x["method"] == "POST" and x["url"].endswith("/commands")]
    decisions = sum(1 for x in commands if x["status"] == 201)
    conflicts = sum(1 for x in commands if x["status"] == 409)
    latency = sorted(1000 * x["seconds"] for x in commands)

    # every game's log, verified in Python and in Node
    with urllib.request.urlopen(f"{base}/signing-key", timeout=10) as resp:
        published = resp.read()
    key: Ed25519PublicKey = load_public_key(json.loads(published)["public_key"])
    key_file = log_dir / "signing-key.json"
    key_file.write_bytes(published)
    files, in_python = [], 0
    for gid in finished:
        req = urllib.request.Request(
            f"{base}/games/{gid}/log", headers={"Authorization": f"Bearer {admin_token}"}
        )
        with urllib.request.urlopen(req, timeout=30) as resp:
            text = resp.read()
        path = log_dir / f"{gid}.jsonl"
        path.write_bytes(text)
        files.append(str(path))
        in_python += verify_text(text, key, require_signature=True).ok
    node = subprocess.run(
        ["node", str(TS / "dist" / "src" / "verify-cli.js"), "--key", str(key_file),
         "--require-signature", *files],
        capture_output=True, text=True, timeout=600,
    )  # fmt: skip
    in_node = sum(
        1 for line in node.stdout.splitlines() if line.startswith("{") and json.loads(line)["ok"]
    )
    if in_python < len(finished) or in_node < len(finished):
        failures.append(f"{len(finished)} logs: {in_python} verified in Python, {in_node} in Node")
    return Figures(
        games=kinds_named,
        reasons=dict(reasons),
        decisions=decisions,
        conflicts=conflicts,
        latency_ms=(_pct(latency, 0.50), _pct(latency, 0.99)),
        statuses=dict(statuses),
        exchanges=len(exchanges),
        invalid=invalid,
        verified_python=in_python,
        verified_node=in_node,
        refused=refused,
        kills=kills,
        exits=exits,
        seconds=seconds,
        checks_seconds=time.monotonic() - t0 - seconds,
        failures=failures,
    )


def _pct(values: list[float], q: float) -> float:
    return values[min(len(values) - 1, int(q * len(values)))] if values else float("nan")


def main() -> int:
    from bench.api import API_APP, free_port, host_env, pick_store, start_command, stop
    from bench.bot_authors import _purge, start_workers

    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--games", type=int, default=20, help="scheduled ladder games (default 20)")
    ap.add_argument("--challenges", type=int, default=3, help="challenges each bot sends (3)")
    ap.add_argument("--concurrency", type=int, default=2, help="ladder games at a time (2)")
    ap.add_argument("--url", help="the store (default $REDIS_URL, else local Redis or embedded)")
    ap.add_argument("--bot-workers", type=int, default=1, help="rfg worker processes (default 1)")
    args = ap.parse_args()
    if not (TS / "dist" / "examples" / "bot.js").exists():
        raise SystemExit("the TypeScript client is not built: run `make ts-client` first")

    store, tmp_store = pick_store(args.url)
    prefix = f"bex{uuid.uuid4().hex[:8]}"
    log_dir = Path(tempfile.mkdtemp(prefix="rfg-bench-example-bots-"))
    port = free_port()
    base = f"http://127.0.0.1:{port}"
    load = os.getloadavg()
    env = {**host_env(store, prefix), "RFG_PROXY_HOPS": "1"}  # the recorders' X-Forwarded-For
    api = start_command(API_APP, port, env, log_dir, 2, "api")
    workers = start_workers(store, prefix, args.bot_workers, log_dir)
    print(
        f"example bots: {args.games} scheduled ladder games, {args.challenges} challenges each "
        f"way, each bot killed once mid-game; {base} (rfgcli.run.api_command, 2 API processes, "
        f"{args.bot_workers} rfg worker, rate limits on), store {store.split('?')[0]}; "
        f"{os.cpu_count()} CPUs, load average {load[0]:.2f} {load[1]:.2f} {load[2]:.2f}",
        flush=True,
    )
    figures = None
    try:
        figures = run(
            base,
            env["RFG_ADMIN_TOKEN"],
            games=args.games,
            challenges=args.challenges,
            concurrency=args.concurrency,
            log_dir=log_dir,
        )
        for line in figures.lines():
            print(line)
        print("target met" if not figures.failures else f"target missed (logs in {log_dir})")
    finally:
        for w in workers:
            stop(w)
        stop(api)
        _purge(store, prefix)
        if tmp_store:
            shutil.rmtree(tmp_store, ignore_errors=True)
        if figures is not None and not figures.failures:
            shutil.rmtree(log_dir, ignore_errors=True)
    return 1 if figures is None or figures.failures else 0


if __name__ == "__main__":
    sys.exit(main())
