"""A retried command is answered only once its replica holds it (``?wait=1``).

The first attempt of a command is applied on the master but its replica does not acknowledge it
in time (``ReplicaWaitTimeout``, a 503): the command is on the master alone. A retry with the
same command id finds it recorded and answers the recorded result - which must not be an
acknowledgement before the replica has it too, whatever connection the retry runs on (Redis
``WAIT`` counts the writes of its own connection, and the recorded answer writes nothing).
"""

from __future__ import annotations

import signal
from pathlib import Path

import pytest

import engine
import events.store
from bots import get_bot
from engine.rng import Rng
from events.games.service import GameService
from events.store import RedisStore, ReplicaWaitTimeout
from tests.conftest import unavailable
from tests.processes import wait_for
from tests.rcluster import Node, binaries, plain_redis

pytestmark = pytest.mark.cluster


def _next(games: GameService, gid: str, rng: Rng) -> tuple[int, dict, int]:
    state, version, _ = games.load(gid)
    seat = min(engine.pending(state))
    legal = engine.legal(state, seat)
    return seat, get_bot("random").act(legal, None, rng), version


def test_a_retry_is_not_acknowledged_before_the_replica_has_the_command(tmp_path: Path) -> None:
    if binaries() is None:
        unavailable("no redis-server/redis-cli binaries (apt install redis-server)")
    master = plain_redis(tmp_path / "m")
    replica: Node = plain_redis(tmp_path / "r")
    try:
        replica.client.execute_command("REPLICAOF", "127.0.0.1", master.port)
        wait_for(
            lambda: replica.client.info("replication").get("master_link_status") == "up",
            30,
            "the replica's link",
        )
        url = f"redis://127.0.0.1:{master.port}/0?wait=1&wait_timeout=0.2"
        games = GameService(RedisStore(events.store.connect(url), prefix="wr"))
        gid, _ = games.create(2, seed="wait-retry", table={"seats": [{"kind": "human"}] * 2})
        rng = Rng(1)
        for i in range(3):  # some acknowledged writes on the pooled connection(s)
            seat, cmd, version = _next(games, gid, rng)
            games.submit(gid, seat, cmd, f"ok{i}", version)
        replica.proc.send_signal(signal.SIGSTOP)
        try:
            seat, cmd, version = _next(games, gid, rng)
            with pytest.raises(ReplicaWaitTimeout):
                games.submit(gid, seat, cmd, "lonely", version)
            # the retry, from another process's client (other connections): still not safe
            other = GameService(RedisStore(events.store.connect(url), prefix="wr"))
            with pytest.raises(ReplicaWaitTimeout):
                other.submit(gid, seat, cmd, "lonely", version)
        finally:
            replica.proc.send_signal(signal.SIGCONT)
        # once the replica has it, the retry is answered with the recorded result
        out = GameService(RedisStore(events.store.connect(url), prefix="wr")).submit(
            gid, seat, cmd, "lonely", version
        )
        assert out.result.duplicate
    finally:
        master.stop()
        replica.stop()
