"""A game's creation is one atomic write on every adapter (``RedisStore.create_game``), a retry of
it answers the first, and what ``events.store.outage`` counts as the store refusing writes."""

from __future__ import annotations

import uuid
from typing import Any

import pytest
import redis

from events.store import GENESIS_HASH, ConcurrencyConflict, GameNotFound, RedisStore, seal_batch
from events.store.outage import HEADROOM_BYTES, is_outage, refusal, write_refusal

TS = "2025-03-01T12:00:00.000000Z"


def first_events(game_id: str, seed: str = "s") -> list[Any]:
    return seal_batch(
        [{"type": "GameCreated", "v": 1, "seed": seed}, {"type": "Tick", "v": 1}],
        game_id=game_id,
        expected_version=0,
        prev_hash=GENESIS_HASH,
        command_id="create",
        actor="system",
        ts=TS,
        visibility=lambda e: "public",
    )


def test_a_creation_writes_the_whole_game_in_one_step(store: RedisStore) -> None:
    gid = uuid.uuid4().hex
    result = store.create_game(
        gid,
        TS,
        "create",
        first_events(gid),
        views={"summary": '{"game_id": "x"}'},
        idle_seconds=3600,
        finished_seconds=600,
    )
    assert (result.first_seq, result.last_seq, result.duplicate) == (1, 2, False)
    stream, meta, cmds, views, _tokens = store.game_keys(gid)
    c = store.client
    fields = {k.decode() if isinstance(k, bytes) else k: v for k, v in c.hgetall(meta).items()}
    assert set(fields) == {"version", "hash", "status", "created", "expire_idle", "expire_finished"}
    assert int(fields["version"]) == 2 and store.head(gid).version == 2
    assert [e.seq for e in store.read(gid)] == [1, 2]
    assert store.get_view(gid, "summary") == (2, '{"game_id": "x"}')
    assert store.command_result(gid, "create") is not None
    for key in (stream, meta, cmds, views):
        assert 3590 <= c.ttl(key) <= 3600, key
    assert [g.game_id for g in store.list_games()] == [gid]
    assert store.list_games()[0].created_at == TS


def test_a_retried_creation_answers_the_first_and_another_is_a_conflict(
    store: RedisStore,
) -> None:
    gid = uuid.uuid4().hex
    store.create_game(gid, TS, "create", first_events(gid, "first"))
    again = store.create_game(gid, TS, "create", first_events(gid, "second"), idle_seconds=60)
    assert again.duplicate and (again.first_seq, again.last_seq) == (1, 2)
    assert store.read(gid)[0].event()["seed"] == "first"  # nothing of the retry was written
    assert store.client.ttl(store.keys(gid)[0]) == -1
    with pytest.raises(ConcurrencyConflict):
        envs = seal_batch(
            [{"type": "GameCreated", "v": 1}],
            game_id=gid,
            expected_version=0,
            prev_hash=GENESIS_HASH,
            command_id="other",
            actor="system",
            ts=TS,
        )
        store.create_game(gid, TS, "other", envs)
    assert [g.game_id for g in store.list_games()] == [gid]


def test_a_meta_hash_without_events_is_no_game(store: RedisStore) -> None:
    """What creations of older versions left when Redis refused their events: not a game (404
    everywhere), and a creation under that id writes the whole game."""
    gid = uuid.uuid4().hex
    store.client.hset(store.keys(gid)[1], mapping={"created": TS, "status": "active"})
    with pytest.raises(GameNotFound):
        store.read(gid)
    with pytest.raises(GameNotFound):
        store.get_view(gid, "summary")
    store.create_game(gid, TS, "create", first_events(gid))
    assert store.version(gid) == 2


@pytest.mark.parametrize(
    ("exc", "code"),
    [
        (redis.exceptions.OutOfMemoryError("command not allowed when used memory"), "OOM"),
        (
            redis.exceptions.ReadOnlyError("You can't write against a read only replica."),
            "READONLY",
        ),
        (redis.exceptions.ResponseError("MISCONF Errors writing to the AOF file"), "MISCONF"),
        (redis.exceptions.ResponseError("NOREPLICAS Not enough good replicas"), "NOREPLICAS"),
        # valkey / Redis 7 inside a script: the code first
        (
            redis.exceptions.ResponseError("MISCONF Errors writing. script: on @user_script:1."),
            "MISCONF",
        ),
        # Redis 6 inside a script: wrapped
        (
            redis.exceptions.ResponseError(
                "Error running script (call to f_1): @user_script:3: -OOM command not allowed"
            ),
            "OOM",
        ),
        # a cluster pipeline names the command that was refused first
        (
            redis.exceptions.ResponseError(
                "Command # 1 (ZADD rfg:w:agenda:{w0} 17.5 g1) of pipeline caused error: "
                "NOREPLICAS Not enough good replicas to write."
            ),
            "NOREPLICAS",
        ),
        (redis.exceptions.ResponseError("WRONGTYPE Operation against a key"), None),
        (
            redis.exceptions.ResponseError(
                "Command # 1 (SET k OOMPH) of pipeline caused error: WRONGTYPE Operation"
            ),
            None,
        ),
        (redis.exceptions.ResponseError("ERR Error running script: user_script:1: OOMPH "), None),
        (redis.exceptions.ConnectionError("refused"), None),
        (ValueError("OOM "), None),
    ],
)
def test_what_counts_as_refusing_writes(exc: Exception, code: str | None) -> None:
    assert refusal(exc) == code
    assert is_outage(exc) == (code is not None or isinstance(exc, redis.exceptions.ConnectionError))


class _Pipe:
    def __init__(self, replies: list[Any]) -> None:
        self.replies = replies

    def set(self, *_a: Any, **_k: Any) -> None:
        pass

    def info(self, *_a: Any) -> None:
        pass

    def execute(self, **_kw: Any) -> list[Any]:
        return self.replies


class _Client:
    def __init__(self, *replies: Any) -> None:
        self.replies = list(replies)

    def pipeline(self, **_kw: Any) -> _Pipe:
        return _Pipe(self.replies)


def _memory(used: int, limit: int, policy: str = "noeviction") -> dict[str, Any]:
    return {
        "used_memory": used,
        "maxmemory": limit,
        "maxmemory_policy": policy,
        "mem_not_counted_for_evict": 0,
    }


def test_the_write_probe() -> None:
    mb = 1 << 20
    assert write_refusal(_Client(None, _memory(10 * mb, 0)), "k") is None
    assert write_refusal(_Client(None, _memory(10 * mb, 100 * mb)), "k") is None
    edge = write_refusal(_Client(None, _memory(100 * mb - HEADROOM_BYTES + 1, 100 * mb)), "k")
    assert edge is not None and edge.startswith("OOM") and "bytes left" in edge
    evicting = _memory(100 * mb, 100 * mb, "allkeys-lru")  # (at the limit by design: evicts)
    assert write_refusal(_Client(None, evicting), "k") is None
    refused = redis.exceptions.ResponseError("NOREPLICAS Not enough good replicas to write.")
    assert (write_refusal(_Client(refused, {}), "k") or "").startswith("NOREPLICAS")
    with pytest.raises(redis.exceptions.ResponseError):
        write_refusal(_Client(redis.exceptions.ResponseError("ERR unknown"), {}), "k")


def test_the_write_probe_on_each_adapter_writes_nothing(store: RedisStore) -> None:
    key = f"{store.prefix}:probe"
    assert write_refusal(store.client, key) is None
    assert not store.client.exists(key)


_FAILING_OVER = [
    redis.exceptions.ClusterDownError("The cluster is down"),
    redis.exceptions.MasterDownError("Link with MASTER is down and replica-serve-stale-data is no"),
    redis.exceptions.TryAgainError("Multiple keys request during rehashing of slot"),
]


def _refusing(exc: Exception) -> Any:
    def script(*_a: Any, **_k: Any) -> Any:
        raise exc

    return script


@pytest.mark.parametrize("exc", _FAILING_OVER, ids=["CLUSTERDOWN", "MASTERDOWN", "TRYAGAIN"])
def test_a_cluster_failing_over_under_a_write_is_an_outage_not_a_broken_game(
    store: RedisStore, monkeypatch: pytest.MonkeyPatch, exc: Exception
) -> None:
    """Redis answers these before the script runs, so nothing was written: the writer gets the
    outage itself (a 503, retried with the same command id), not "a key of this game holds data
    not written by the event store" (seen in a failover test: the writer gave up on its game)."""
    gid = uuid.uuid4().hex[:12]
    store.create_game(gid, TS, "create", first_events(gid))
    more = seal_batch(
        [{"type": "Tick", "v": 1}],
        game_id=gid,
        expected_version=2,
        prev_hash=store.read(gid)[-1].hash,
        command_id="c1",
        actor="system",
        ts=TS,
        visibility=lambda e: "public",
    )
    monkeypatch.setattr(store, "_append_script", _refusing(exc))
    with pytest.raises(type(exc)) as raised:
        store.append(gid, 2, "c1", more)
    assert is_outage(raised.value)
    other = uuid.uuid4().hex[:12]
    monkeypatch.setattr(store, "_create_script", _refusing(exc))
    with pytest.raises(type(exc)):
        store.create_game(other, TS, "create", first_events(other))
    monkeypatch.undo()  # the cluster settled: the same writes go through, nothing left behind
    assert store.append(gid, 2, "c1", more).last_seq == 3
    store.create_game(other, TS, "create", first_events(other))
    assert store.version(other) == 2
