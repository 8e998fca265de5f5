"""A Redis that answers but refuses writes is an outage, not an error: real ``redis-server``
processes (ports 7400-7499) made full (``maxmemory`` + ``noeviction``), read-only (a replica after a
failover), short of replicas (``min-replicas-to-write``) and unable to write its AOF (a full
tmpfs), with the API under gunicorn and ``rfg worker`` processes.

Each time: creations, commands, seat views and the rate limiter answer 503 problem+json with
``Retry-After`` (never 500), ``/readyz`` is 503 and ``/healthz`` 200, workers stay up (also one
started meanwhile), nothing is left half made (no listed game without its events, no game without
its retention), and once the store takes writes again everything resumes: a creation retried with
its ``Idempotency-Key`` makes one game, a refused command resent with its command id is stored,
the bots' game finishes."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import time
import uuid
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest
import redis

from bots import get_bot
from engine.rng import Rng
from events.store import find_server_binary
from tests.conftest import unavailable
from tests.processes import Proc, free_port, wait_for

from .conftest import RedisServer
from .test_store_outage import assert_unavailable, call

pytestmark = pytest.mark.slow

HUMANS = {"seats": [{"kind": "human"}, {"kind": "human"}]}
BOTS = {"seats": [{"kind": "bot", "bot": "random"} for _ in range(4)]}
MAXMEMORY = 24 << 20


@pytest.fixture
def servers(tmp_path: Path) -> Iterator[Callable[..., RedisServer]]:
    """``servers(name, *args)`` -> a started ``redis-server`` of this test on a port in
    7400-7499, with AOF ``always`` and ``args`` after the defaults; stopped at the end."""
    binary = find_server_binary()
    if binary is None:
        unavailable("no redis-server binary (install redis-server, or set RFG_REDIS_SERVER)")
    started: list[RedisServer] = []

    def start(name: str, *args: str, data_dir: Path | None = None) -> RedisServer:
        folder = data_dir or tmp_path / name
        folder.mkdir(parents=True, exist_ok=True)
        server = RedisServer(str(binary), folder, free_port(7400, 7499), args)
        started.append(server)
        server.start()
        return server

    yield start
    for server in started:
        server.stop()


def client_of(server: RedisServer) -> redis.Redis:
    return redis.Redis(port=server.port, socket_timeout=10)


# --- what the test does over HTTP -----------------------------------------------------------


class Table:
    """A two-person game on one API: both seats claimed, seat 0 has played its first decision,
    seat 1's command (decided from its view before) is ready to send."""

    def __init__(self, base: str) -> None:
        self.base = base
        status, _, game, _ = call(base, "POST", "/games", HUMANS)
        assert status == 201, game
        self.gid: str = game["game_id"]
        self.tokens = [
            call(base, "POST", f"/games/{self.gid}/seats/{s}/claim")[2]["token"] for s in (0, 1)
        ]
        answers = [self.view(s) for s in (0, 1)]
        assert all(a[0] == 200 for a in answers), [a[:3] for a in answers]
        views = [a[2]["view"] for a in answers]
        assert all(v["decision"] for v in views), views
        self.commands = [self._decide(views[s], s) for s in (0, 1)]
        status, _, out, _ = self.send(0)
        assert status == 201, out

    def _decide(self, view: dict[str, Any], seat: int) -> dict[str, Any]:
        decision = view["decision"]
        command = get_bot("random").act(decision, None, Rng(seat))
        return {
            "command_id": f"{self.gid}-{seat}",
            "decision_id": decision["decision_id"],
            "command": command,
        }

    def view(self, seat: int) -> tuple[int, dict[str, str], Any, float]:
        return call(
            self.base, "GET", f"/games/{self.gid}/seats/{seat}/view", token=self.tokens[seat]
        )

    def send(self, seat: int) -> tuple[int, dict[str, str], Any, float]:
        return call(
            self.base,
            "POST",
            f"/games/{self.gid}/seats/{seat}/commands",
            self.commands[seat],
            token=self.tokens[seat],
        )


def create(base: str, body: Any, key: str | None = None) -> tuple[int, dict[str, str], Any, float]:
    """``POST /games`` (with an ``Idempotency-Key``)."""
    import urllib.request
    from urllib.error import HTTPError

    req = urllib.request.Request(base + "/games", data=json.dumps(body).encode(), method="POST")
    req.add_header("Content-Type", "application/json")
    if key:
        req.add_header("Idempotency-Key", key)
    started = time.monotonic()
    try:
        with urllib.request.urlopen(req, timeout=30) as resp:
            status, headers, raw = resp.status, dict(resp.headers.items()), resp.read()
    except HTTPError as exc:
        status, headers, raw = exc.code, dict(exc.headers.items()), exc.read()
    return status, headers, json.loads(raw), time.monotonic() - started


def not_ready(base: str, code: str) -> None:
    status, headers, body, _ = call(base, "GET", "/readyz")
    assert status == 503 and body["type"] == "/problems/not-ready", (status, body)
    assert code in body["detail"] and int(headers["Retry-After"]) > 0, body
    status, _, _, _ = call(base, "GET", "/healthz")
    assert status == 200, "liveness does not depend on the store"


def refused(answer: tuple[int, dict[str, str], Any, float], code: str) -> None:
    assert_unavailable(answer)
    assert code in answer[2]["detail"], answer[2]


def ready(base: str, within: float = 20) -> None:
    wait_for(lambda: call(base, "GET", "/readyz")[0] == 200, within, f"{base}/readyz 200")


def nothing_half_made(client: redis.Redis, prefix: str) -> dict[str, int]:
    """Every listed game has its events (or was compacted), no meta hash lacks them, and every
    unfinished game nobody claimed expires (its retention came with it)."""
    lobby = [m.decode() for m in client.zrange(f"{prefix}:lobby", 0, -1)]
    metas = list(client.scan_iter(match=f"{prefix}:{{g:*}}:m", count=1000))
    for meta in metas:
        fields = {k.decode(): v.decode() for k, v in client.hgetall(meta).items()}
        assert "version" in fields, f"{meta!r} has no events: {fields}"
        if "expire_idle" in fields and fields.get("status") != "finished":
            assert client.ttl(meta) > 0, f"{meta!r} should expire: {fields}"
    for gid in lobby:
        base = f"{prefix}:{{g:{gid}}}"
        has_events = client.exists(f"{base}:s") or client.hexists(f"{base}:m", "compacted")
        assert has_events, f"listed game {gid} has no events"
    return {"listed": len(lobby), "games": len(metas)}


def fill(client: redis.Redis, size: int) -> int:
    """SET values of ``size`` bytes until Redis refuses one (OOM); how many it took."""
    n = 0
    while True:
        try:
            client.set(f"fill:{size}:{n}:{uuid.uuid4().hex[:6]}", b"x" * size)
        except redis.exceptions.OutOfMemoryError:
            return n
        n += 1


def alive(proc: Proc, what: str) -> None:
    assert proc.poll() is None, f"{what} exited with {proc.returncode}:\n{proc.log()[-4000:]}"


# --- the tests ------------------------------------------------------------------------------


def test_a_full_redis_is_an_outage_and_nothing_is_left_half_made(
    servers: Callable[..., RedisServer],
    start_api: Callable[..., tuple[Proc, str]],
    start_worker: Callable[..., Proc],
) -> None:
    store = servers("full", "--maxmemory", str(MAXMEMORY), "--maxmemory-policy", "noeviction")
    prefix = "full"
    # one API as served by default (limits on: the limiter writes first), one without limits
    # (each path's own writes) that also enqueues bot turns itself (RFG_DISPATCH)
    limited_proc, limited = start_api(store.url, prefix)
    open_proc, open_api = start_api(store.url, prefix, RFG_RATE_LIMITS="0", RFG_DISPATCH="1")
    worker = start_worker(store.url, prefix)
    client = client_of(store)
    wait_for(lambda: "on queue" in worker.log(), 30, "the worker to start")
    table = Table(open_api)

    # the worker holds a bot turn it has not started when Redis fills up: SIGSTOP it, create a
    # bots' game (the API enqueues its first turn and the worker's blocking dequeue takes it)
    os.kill(worker.pid, signal.SIGSTOP)
    status, _, bots, _ = create(open_api, BOTS)
    assert status == 201, bots
    time.sleep(0.5)

    # filled until writes fail: big values, then small ones - Redis is at the edge of maxmemory
    filled = fill(client, 64 << 10) + fill(client, 4 << 10)
    for base in (limited, open_api):
        not_ready(base, "OOM")  # (a 30-byte write may still fit; a game's first events do not)
    refusals = 0
    for _ in range(5):
        # back to the edge first: Redis frees idle clients' buffers meanwhile, and it refuses a
        # write only while it is over maxmemory when the write arrives
        filled += fill(client, 4 << 10) + fill(client, 256)
        answer = create(open_api, HUMANS)
        if answer[0] == 201:  # (it had room again for a moment: the whole game, as below)
            continue
        refused(answer, "OOM")  # was 500, leaving a listed meta hash behind
        refusals += 1
    assert refusals >= 3, f"only {refusals} of 5 creations at the edge were refused"
    edge = nothing_half_made(client, prefix)

    # and past it (memory Redis does not count as data grew, or maxmemory was lowered): every
    # write is refused
    used = int(client.info("memory")["used_memory"])
    client.config_set("maxmemory", used - (1 << 20))
    os.kill(worker.pid, signal.SIGCONT)  # RQ's own writes for the job it holds now fail
    for answer in (
        call(limited, "GET", f"/games/{table.gid}"),  # the rate limiter's own write
        call(limited, "GET", "/games"),
        create(limited, HUMANS),
        call(open_api, "GET", f"/games/{table.gid}/seats/1/view", token=table.tokens[1]),
        table.send(1),
        create(open_api, HUMANS),
        create(open_api, HUMANS, key="retried-through-the-outage"),
    ):
        refused(answer, "OOM")
    for base in (limited, open_api):
        not_ready(base, "OOM")
    status, _, game, _ = call(open_api, "GET", f"/games/{table.gid}")
    assert status == 200 and game["game_id"] == table.gid  # reads are served meanwhile
    late = start_worker(store.url, prefix)  # a worker started while Redis is full waits
    wait_for(lambda: "refuses writes" in late.log(), 30, "the late worker to wait for writes")
    time.sleep(3)
    alive(worker, "the worker holding a job")
    alive(late, "the worker started while Redis was full")
    assert nothing_half_made(client, prefix) == edge

    # memory freed: everything carries on
    for keys in iter(lambda: list(client.scan_iter(match="fill:*", count=500))[:500], []):
        client.delete(*keys)
    client.config_set("maxmemory", MAXMEMORY)
    for base in (limited, open_api):
        ready(base)
    first = create(open_api, HUMANS, key="retried-through-the-outage")
    again = create(open_api, HUMANS, key="retried-through-the-outage")
    assert first[0] == again[0] == 201, (first, again)
    assert first[2]["game_id"] == again[2]["game_id"] and again[1]["Idempotent-Replayed"] == "true"
    status, _, out, _ = table.send(1)  # the refused command, resent with its command id
    assert status == 201, out
    assert table.view(1)[0] == 200
    wait_for(
        lambda: call(open_api, "GET", f"/games/{bots['game_id']}")[2]["status"] == "finished",
        120,
        "the bots' game to finish",
    )
    alive(worker, "the worker")
    alive(late, "the late worker")
    assert "refuses writes" in worker.log() + late.log()
    after = nothing_half_made(client, prefix)
    for proc in (limited_proc, open_proc):
        assert "unhandled error" not in proc.log(), proc.log()[-3000:]
    print(json.dumps({"filled": filled, "edge": edge, "after": after}))


def test_a_read_only_replica_and_too_few_replicas_are_outages(
    servers: Callable[..., RedisServer],
    start_api: Callable[..., tuple[Proc, str]],
) -> None:
    """READONLY: the API's Redis becomes a replica (a failover: its replica is promoted and it
    follows); NOREPLICAS: ``min-replicas-to-write 1`` with no replica."""
    primary = servers("primary")
    prefix = "ro"
    _proc, base = start_api(primary.url, prefix, RFG_RATE_LIMITS="0")
    table = Table(base)
    replica = servers("replica", "--replicaof", "127.0.0.1", str(primary.port))
    p, r = client_of(primary), client_of(replica)
    wait_for(
        lambda: (
            r.info("replication").get("master_link_status") == "up" and r.dbsize() == p.dbsize()
        ),
        30,
        "the replica to sync",
    )
    r.execute_command("REPLICAOF", "NO", "ONE")  # promoted ...
    p.execute_command("REPLICAOF", "127.0.0.1", str(replica.port))  # ... and the old one follows
    wait_for(lambda: p.info("replication")["role"] == "slave", 10, "the primary to follow")
    refused(create(base, HUMANS), "READONLY")
    refused(table.send(1), "READONLY")
    not_ready(base, "READONLY")
    assert call(base, "GET", f"/games/{table.gid}")[0] == 200  # the replica serves reads

    p.execute_command("REPLICAOF", "NO", "ONE")
    ready(base)
    assert create(base, HUMANS)[0] == 201

    p.config_set("min-replicas-to-write", 1)  # no replica follows it now
    refused(create(base, HUMANS, key="no-replicas"), "NOREPLICAS")
    refused(table.send(1), "NOREPLICAS")
    not_ready(base, "NOREPLICAS")
    p.config_set("min-replicas-to-write", 0)
    ready(base)
    first = create(base, HUMANS, key="no-replicas")
    second = create(base, HUMANS, key="no-replicas")
    assert first[0] == second[0] == 201 and second[2]["game_id"] == first[2]["game_id"]
    assert table.send(1)[0] == 201
    nothing_half_made(p, prefix)
    assert "unhandled error" not in _proc.log(), _proc.log()[-3000:]


@pytest.fixture
def small_disk(tmp_path: Path) -> Iterator[Path]:
    """A 16 MB tmpfs (mounted here: root only), unmounted at the end."""
    disk = tmp_path / "disk"
    disk.mkdir()
    done = subprocess.run(
        ["mount", "-t", "tmpfs", "-o", "size=16m", "tmpfs", str(disk)],
        capture_output=True,
        text=True,
        check=False,
    )
    if done.returncode != 0:
        pytest.skip(f"cannot mount a tmpfs for a full disk here: {done.stderr.strip()}")
    try:
        yield disk
    finally:
        subprocess.run(["umount", "-l", str(disk)], check=False)


def test_a_redis_that_cannot_write_its_aof_is_an_outage(
    servers: Callable[..., RedisServer],
    start_api: Callable[..., tuple[Proc, str]],
    start_worker: Callable[..., Proc],
    small_disk: Path,
) -> None:
    """MISCONF: the AOF on a disk that fills up. With ``appendfsync always`` (the embedded
    server's) Redis exits on a failed AOF write (an outage like a crash, answered 503 too); with
    ``everysec`` it stays up refusing writes (``MISCONF``, even ``PING``) until the disk has room
    again, then writes the AOF it holds and takes writes again by itself."""
    data = small_disk / "redis"
    store = servers(
        "aof",
        "--appendfsync",
        "everysec",
        "--auto-aof-rewrite-percentage",
        "0",
        data_dir=data,
    )
    prefix = "disk"
    proc, base = start_api(store.url, prefix, RFG_RATE_LIMITS="0")
    table = Table(base)
    client = client_of(store)
    free = os.statvfs(small_disk)
    ballast = small_disk / "ballast"
    with open(ballast, "wb") as f:  # the disk all but full
        f.truncate(0)
        f.write(b"\0" * max(0, free.f_bavail * free.f_frsize - (256 << 10)))
    misconf = False
    for i in range(200):  # the AOF grows until a write of it fails
        try:
            client.set(f"fill:{i}", b"x" * (64 << 10))
        except redis.exceptions.ResponseError as exc:
            assert str(exc).startswith("MISCONF"), exc
            misconf = True
            break
    assert misconf, "the AOF never failed to grow"
    refused(create(base, HUMANS, key="full-disk"), "MISCONF")
    refused(table.send(1), "MISCONF")
    not_ready(base, "MISCONF")
    late = start_worker(store.url, prefix)  # PING is refused too: the worker waits, not exits
    wait_for(lambda: "refuses writes" in late.log(), 30, "the worker to wait for writes")
    time.sleep(2)
    alive(late, "the worker started while the disk was full")

    ballast.unlink()
    ready(base)
    client.delete(*client.keys("fill:*"))
    first = create(base, HUMANS, key="full-disk")
    second = create(base, HUMANS, key="full-disk")
    assert first[0] == second[0] == 201 and second[2]["game_id"] == first[2]["game_id"]
    assert table.send(1)[0] == 201
    wait_for(lambda: "on queue" in late.log(), 30, "the worker to start once writes work")
    alive(late, "the worker")
    nothing_half_made(client, prefix)
    assert "unhandled error" not in proc.log(), proc.log()[-3000:]
