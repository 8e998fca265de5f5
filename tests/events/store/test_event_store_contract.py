"""Contract of the ``EventStore`` port, run against every adapter (see conftest ``store``)."""

from __future__ import annotations

import json
import threading
import uuid
from collections import Counter
from collections.abc import Callable, Mapping
from typing import Any

import pytest

from events.store import (
    GENESIS_HASH,
    AppendResult,
    ChainBroken,
    ConcurrencyConflict,
    Envelope,
    EventStore,
    GameNotFound,
    InvalidBatch,
    RedisStore,
    StoreError,
    seal_batch,
    verify_chain,
)

TS = "2025-03-01T12:00:00.000000Z"


def batch(
    store: RedisStore,
    game_id: str,
    events: list[Mapping[str, Any]],
    command_id: str | None = None,
    expected: int | None = None,
    prev_hash: str | None = None,
    actor: str = "seat:0",
) -> tuple[int, str, list[Envelope]]:
    """Seal ``events`` on top of the stored head (or the given one)."""
    head = store.head(game_id)
    exp = head.version if expected is None else expected
    prev = head.last_hash if prev_hash is None else prev_hash
    cmd = command_id or uuid.uuid4().hex
    envs = seal_batch(
        events,
        game_id=game_id,
        expected_version=exp,
        prev_hash=prev,
        command_id=cmd,
        actor=actor,
        ts=TS,
        visibility=lambda e: e.get("vis", "public"),
    )
    return exp, cmd, envs


def put(store: RedisStore, game_id: str, n: int = 1, **kw: Any) -> AppendResult:
    exp, cmd, envs = batch(store, game_id, [{"type": "Tick", "v": 1, "i": i} for i in range(n)])
    return store.append(game_id, exp, cmd, envs, **kw)


def run_threads(n: int, fn: Callable[[int], Any]) -> list[Any]:
    """Run ``fn(i)`` in ``n`` threads released together; return results or exceptions."""
    barrier = threading.Barrier(n)
    out: list[Any] = [None] * n

    def work(i: int) -> None:
        barrier.wait()
        try:
            out[i] = fn(i)
        except Exception as exc:  # collected and asserted on
            out[i] = exc

    threads = [threading.Thread(target=work, args=(i,)) for i in range(n)]
    for t in threads:
        t.start()
    for t in threads:
        t.join(timeout=30)
    assert not any(t.is_alive() for t in threads), "a thread hung"
    return out


def test_store_satisfies_port(store: RedisStore) -> None:
    assert isinstance(store, EventStore)


def test_append_read_round_trip(store: RedisStore, game_id: str) -> None:
    events = [
        {"type": "GameCreated", "v": 1, "players": ["ann", "bob"], "seed": 7},
        {"type": "DiceRolled", "v": 2, "seat": 0, "faces": ["explore", "develop"], "x": 1.5},
        {"type": "HandDealt", "v": 1, "seat": 1, "tiles": [3, 9], "vis": "seat:1", "u": "é✓"},
    ]
    exp, cmd, envs = batch(store, game_id, events, actor="system")
    result = store.append(game_id, exp, cmd, envs)
    assert result == AppendResult(game_id, cmd, 1, 3, 3, duplicate=False)
    assert result.count == 3

    got = store.read(game_id)
    assert got == envs
    assert [e.to_json() for e in got] == [e.to_json() for e in envs]
    assert [e.event() for e in got] == events
    assert got[2].visibility == "seat:1" and got[0].visibility == "public"
    assert {e.actor for e in got} == {"system"} and {e.ts for e in got} == {TS}
    assert store.version(game_id) == 3
    assert store.head(game_id).last_hash == envs[-1].hash


def test_sequence_numbers_contiguous_and_slices(store: RedisStore, game_id: str) -> None:
    sizes = [1, 3, 2, 5, 1]
    for n in sizes:
        put(store, game_id, n)
    total = sum(sizes)
    assert [e.seq for e in store.read(game_id)] == list(range(1, total + 1))
    assert [e.seq for e in store.read(game_id, after=4)] == list(range(5, total + 1))
    assert [e.seq for e in store.read(game_id, after=4, limit=3)] == [5, 6, 7]
    assert store.read(game_id, after=total) == []
    assert store.read(game_id, limit=0) == []
    assert store.version(game_id) == total


def test_long_stream_read_pages(store: RedisStore, game_id: str) -> None:
    for _ in range(5):
        put(store, game_id, 250)  # 1250 events: more than one internal read page
    seqs = [e.seq for e in store.read(game_id)]
    assert seqs == list(range(1, 1251))
    assert [e.seq for e in store.read(game_id, after=990, limit=20)] == list(range(991, 1011))


def test_expected_version_conflict(store: RedisStore, game_id: str) -> None:
    put(store, game_id, 2)
    exp, cmd, envs = batch(store, game_id, [{"type": "Late"}], expected=1)
    with pytest.raises(ConcurrencyConflict) as info:
        store.append(game_id, 1, cmd, envs)
    err = info.value
    assert (err.expected, err.actual, err.game_id) == (1, 2, game_id)
    assert "expected_version=2" in str(err)  # tells the caller what to do
    assert store.command_result(game_id, cmd) is None  # a refused command is not recorded
    # ahead of the stream is a conflict too
    _, cmd2, envs2 = batch(store, game_id, [{"type": "Ahead"}], expected=5)
    with pytest.raises(ConcurrencyConflict) as info2:
        store.append(game_id, 5, cmd2, envs2)
    assert info2.value.actual == 2
    assert [e.type for e in store.read(game_id)] == ["Tick", "Tick"]


def test_unknown_game(store: RedisStore, game_id: str) -> None:
    assert store.version(game_id) == 0
    assert store.head(game_id).last_hash == GENESIS_HASH
    with pytest.raises(GameNotFound, match="expected_version=0"):
        store.read(game_id)
    with pytest.raises(GameNotFound):
        store.get_view(game_id, "public")
    with pytest.raises(GameNotFound):
        store.put_views(game_id, 0, {"public": "{}"})
    _, cmd, envs = batch(store, game_id, [{"type": "X"}], expected=3, prev_hash="a" * 64)
    with pytest.raises(GameNotFound):
        store.append(game_id, 3, cmd, envs)


def test_racing_appends_exactly_one_wins(store: RedisStore, game_id: str) -> None:
    put(store, game_id, 1)
    for round_ in range(3):
        exp = store.version(game_id)
        prev = store.head(game_id).last_hash
        batches = [
            batch(
                store,
                game_id,
                [{"type": "Move", "t": i}, {"type": "Roll", "t": i}],
                expected=exp,
                prev_hash=prev,
            )
            for i in range(32)
        ]
        results = run_threads(32, lambda i, b=batches: store.append(game_id, *b[i]))
        wins = [r for r in results if isinstance(r, AppendResult)]
        conflicts = [r for r in results if isinstance(r, ConcurrencyConflict)]
        assert len(wins) == 1, f"round {round_}: {results}"
        assert len(conflicts) == 31, [r for r in results if not isinstance(r, AppendResult)]
        assert {c.actual for c in conflicts} == {exp + 2}
        assert wins[0].first_seq == exp + 1 and wins[0].version == exp + 2
    envs = store.read(game_id)
    assert [e.seq for e in envs] == list(range(1, len(envs) + 1)) and len(envs) == 7
    verify_chain(envs)


def test_racing_writers_with_retry_lose_nothing(store: RedisStore, game_id: str) -> None:
    """32 writers each retry on conflict until their command lands: all land, once, in order."""

    def writer(i: int) -> AppendResult:
        cmd = f"cmd-{i}"
        while True:
            exp, _, envs = batch(store, game_id, [{"type": "W", "i": i}] * 2, command_id=cmd)
            try:
                return store.append(game_id, exp, cmd, envs)
            except (ConcurrencyConflict, InvalidBatch):
                continue  # head moved between reading it and appending: reload and retry

    results = run_threads(32, writer)
    assert all(isinstance(r, AppendResult) and not r.duplicate for r in results), results
    envs = store.read(game_id)
    assert [e.seq for e in envs] == list(range(1, 65))
    assert Counter(e.command_id for e in envs) == {f"cmd-{i}": 2 for i in range(32)}
    verify_chain(envs)


def test_same_command_twice_returns_original(store: RedisStore, game_id: str) -> None:
    exp, cmd, envs = batch(store, game_id, [{"type": "A"}, {"type": "B"}])
    first = store.append(game_id, exp, cmd, envs, views={"public": '{"n":1}'})
    again = store.append(game_id, exp, cmd, envs, views={"public": '{"n":"WRONG"}'})
    assert not first.duplicate and again.duplicate
    assert (again.first_seq, again.last_seq, again.version) == (1, 2, 2)
    assert store.get_view(game_id, "public") == (2, '{"n":1}')  # the retry wrote nothing
    put(store, game_id, 3)
    # much later, with a stale expected version and re-sealed events: still the original result
    _, _, late = batch(store, game_id, [{"type": "A"}, {"type": "B"}], command_id=cmd)
    result = store.append(game_id, store.version(game_id), cmd, late)
    assert result.duplicate and (result.first_seq, result.last_seq) == (1, 2)
    assert store.command_result(game_id, cmd) == result
    assert store.command_result(game_id, "never-sent") is None
    assert [e.type for e in store.read(game_id)] == ["A", "B", "Tick", "Tick", "Tick"]


def test_same_command_concurrently_applies_once(store: RedisStore, game_id: str) -> None:
    put(store, game_id, 1)
    exp, cmd, envs = batch(store, game_id, [{"type": "A"}, {"type": "B"}, {"type": "C"}])
    results = run_threads(16, lambda _i: store.append(game_id, exp, cmd, envs))
    assert all(isinstance(r, AppendResult) for r in results), results
    assert sum(not r.duplicate for r in results) == 1
    assert {(r.first_seq, r.last_seq) for r in results} == {(2, 4)}
    assert [e.type for e in store.read(game_id)] == ["Tick", "A", "B", "C"]


def test_command_with_no_events_is_recorded(store: RedisStore, game_id: str) -> None:
    put(store, game_id, 1)
    result = store.append(game_id, 1, "noop", [])
    assert (result.first_seq, result.last_seq, result.version, result.count) == (2, 1, 1, 0)
    assert store.append(game_id, 1, "noop", []).duplicate
    assert store.version(game_id) == 1


def _snapshot(store: RedisStore, game_id: str) -> dict[str, Any]:
    stream, meta, cmds, views = store.keys(game_id)
    c = store.client
    return {
        "stream": c.xrange(stream),
        "meta": c.hgetall(meta),
        "cmds": c.hgetall(cmds),
        "views": c.hgetall(views) if c.type(views) in (b"hash", "hash") else c.get(views),
    }


def test_multi_event_append_is_all_or_nothing(store: RedisStore, game_id: str) -> None:
    put(store, game_id, 2, views={"public": '{"v":2}'})
    before = _snapshot(store, game_id)

    # 1. a bad envelope in the middle of the batch: refused before anything is sent
    exp, cmd, envs = batch(store, game_id, [{"type": "A"}, {"type": "B"}, {"type": "C"}])
    tampered = list(envs)
    tampered[1] = Envelope.from_dict({**envs[1].to_dict(), "payload": {"evil": True}})
    with pytest.raises(InvalidBatch, match="stale or missing hash"):
        store.append(game_id, exp, cmd, tampered, views={"public": "{}"})
    gap = [envs[0], envs[2]]
    with pytest.raises(InvalidBatch, match="seq"):
        store.append(game_id, exp, cmd, gap)
    assert _snapshot(store, game_id) == before

    # 2. the server refuses mid-script: the stream holds an entry the meta does not know of,
    #    so the first XADD fails - nothing else of the command may be written
    stream = store.keys(game_id)[0]
    store.client.xadd(stream, {"e": "{}"}, id="3-0")
    before = _snapshot(store, game_id)
    with pytest.raises(StoreError, match="inspect keys"):
        store.append(game_id, exp, cmd, envs, views={"public": '{"v":5}'}, status="over")
    assert _snapshot(store, game_id) == before
    assert store.command_result(game_id, cmd) is None
    entries = store.client.xrange(stream, "-", "2-0")  # XDEL would keep last-id at 3-0
    store.client.delete(stream)
    for entry_id, fields in entries:
        store.client.xadd(stream, fields, id=entry_id)

    # 3. the views key holds a wrong type: refused before the events are written
    views_key = store.keys(game_id)[3]
    store.client.delete(views_key)
    store.client.set(views_key, "not a hash")
    before = _snapshot(store, game_id)
    with pytest.raises(StoreError):
        store.append(game_id, exp, cmd, envs, views={"public": '{"v":5}'})
    assert _snapshot(store, game_id) == before
    assert store.version(game_id) == 2 and len(store.read(game_id)) == 2
    store.client.delete(views_key)

    # and the same batch goes through whole once the keyspace is sound
    assert store.append(game_id, exp, cmd, envs).last_seq == 5


def test_unserialisable_event_is_refused(store: RedisStore, game_id: str) -> None:
    with pytest.raises(InvalidBatch, match="JSON-serialisable"):
        batch(store, game_id, [{"type": "A"}, {"type": "B", "when": object()}])
    with pytest.raises(InvalidBatch, match="JSON-serialisable"):
        batch(store, game_id, [{"type": "A", "x": float("nan")}])
    with pytest.raises(InvalidBatch, match="seal_batch"):
        store.append(game_id, 0, "c", [{"type": "A"}])  # type: ignore[list-item]


def test_views_stored_with_their_position(store: RedisStore, game_id: str) -> None:
    big = json.dumps({"board": ["x" * 50] * 40})  # ~2 KB
    r1 = put(store, game_id, 2, views={"public": big, "seat:0": '{"hand":[1]}'})
    assert store.get_view(game_id, "public") == (2, big)
    assert store.get_view(game_id, "seat:0") == (2, '{"hand":[1]}')
    assert store.get_view(game_id, "seat:9") is None
    assert store.views_at(game_id, ["seat:0", "seat:9", "public"]) == (
        2,
        [(2, '{"hand":[1]}'), None, (2, big)],
    )
    with pytest.raises(GameNotFound):
        store.views_at("nosuchgame", ["public"])

    r2 = put(store, game_id, 1, views={"public": '{"turn":2}'})
    assert (r1.version, r2.version) == (2, 3)
    assert store.get_view(game_id, "public") == (3, '{"turn":2}')
    assert store.get_view(game_id, "seat:0") == (2, '{"hand":[1]}')  # untouched, old position

    # a refused append writes no views
    _, cmd, envs = batch(store, game_id, [{"type": "X"}], expected=1)
    with pytest.raises(ConcurrencyConflict):
        store.append(game_id, 1, cmd, envs, views={"public": '{"stale":true}'})
    assert store.get_view(game_id, "public") == (3, '{"turn":2}')

    # put_views outside an append never goes backwards nor ahead of the stream
    assert store.put_views(game_id, 2, {"public": '{"old":1}', "seat:0": '{"hand":[2]}'}) == [
        "seat:0"
    ]
    assert store.get_view(game_id, "public") == (3, '{"turn":2}')
    assert store.get_view(game_id, "seat:0") == (2, '{"hand":[2]}')
    assert store.put_views(game_id, 3, {"public": '{"rebuilt":1}'}) == ["public"]
    assert store.get_view(game_id, "public") == (3, '{"rebuilt":1}')
    with pytest.raises(InvalidBatch, match="stream is at 3"):
        store.put_views(game_id, 4, {"public": "{}"})
    with pytest.raises(InvalidBatch, match="JSON string"):
        store.put_views(game_id, 3, {"public": {"not": "a string"}})  # type: ignore[dict-item]


def test_hash_chain_verifies_and_detects_tampering(store: RedisStore, game_id: str) -> None:
    for n in (1, 3, 2):
        put(store, game_id, n)
    raw = store.read(game_id)
    assert verify_chain(raw) == store.head(game_id).last_hash
    tail = store.read(game_id, after=2)
    assert verify_chain(tail, prev_hash=raw[1].hash, first_seq=3) == raw[-1].hash

    # a batch sealed on a different history is refused by the store's head check
    _, cmd, envs = batch(store, game_id, [{"type": "Fork"}], prev_hash="f" * 64)
    with pytest.raises(InvalidBatch, match="different history"):
        store.append(game_id, 6, cmd, envs)

    # rewrite one stored payload behind the store's back: verification must notice
    stream = store.keys(game_id)[0]
    entries = store.client.xrange(stream)
    store.client.delete(stream)
    for i, (entry_id, fields) in enumerate(entries):
        text = fields.get(b"e", fields.get("e"))
        if i == 3:
            doc = json.loads(text)
            doc["payload"]["i"] = 99
            text = json.dumps(doc)
        store.client.xadd(stream, {"e": text}, id=entry_id)
    with pytest.raises(ChainBroken, match="seq 4"):
        verify_chain(store.read(game_id))


def create(store: RedisStore, game_id: str, created_at: str, status: str) -> AppendResult:
    _, cmd, envs = batch(store, game_id, [{"type": "GameCreated", "v": 1}], actor="system")
    return store.create_game(game_id, created_at, cmd, envs, status=status)


def test_lobby_index_and_status(store: RedisStore) -> None:
    g1, g2, g3 = (uuid.uuid4().hex for _ in range(3))
    create(store, g1, "2025-01-01T10:00:00Z", "active")
    create(store, g2, "2025-01-01T11:00:00Z", "open")
    create(store, g3, "2025-01-01T09:00:00Z", "private")
    put(store, g1, 2, status="playing")
    games = store.list_games()
    assert [g.game_id for g in games] == [g2, g1, g3]
    assert games[1].status == "playing" and games[1].version == 3
    assert games[1].created_at == "2025-01-01T10:00:00Z"
    assert [g.game_id for g in store.list_games(status="open")] == [g2]
    assert [g.game_id for g in store.list_games(limit=1)] == [g2]
    put(store, g2, 1, status="over")
    assert [g.game_id for g in store.list_games(status="over")] == [g2]
    assert [g.game_id for g in store.list_games(status="private")] == [g3]


def test_invalid_arguments_have_helpful_errors(store: RedisStore) -> None:
    with pytest.raises(InvalidBatch, match="uuid4"):
        store.version("bad {id}")
    with pytest.raises(InvalidBatch, match="idempotency key"):
        store.append(uuid.uuid4().hex, 0, "", [])
    with pytest.raises(InvalidBatch, match="expected_version"):
        store.append(uuid.uuid4().hex, -1, "c", [])
    for status in ("", "two words", "x" * 65):
        with pytest.raises(InvalidBatch, match="short word"):
            store.append(uuid.uuid4().hex, 0, "c", [], status=status)


def test_works_with_decode_responses(
    store_factory: Callable[..., RedisStore], game_id: str
) -> None:
    base = store_factory().client
    from events.store import is_cluster

    if is_cluster(base):  # the same cluster through a decoding RedisCluster client
        from redis.cluster import RedisCluster

        node = base.get_default_node()
        client: Any = RedisCluster(host=node.host, port=node.port, decode_responses=True)
        store = store_factory(client=client)
        r = put(store, game_id, 2, views={"public": '{"x":"é"}'}, status="open")
        assert [e.seq for e in store.read(game_id)] == [1, 2]
        assert store.get_view(game_id, "public") == (2, '{"x":"é"}')
        client.close()
        return
    kwargs = base.connection_pool.connection_kwargs
    if "server" in kwargs:  # fakeredis: share the server with a decoding client
        import fakeredis

        client = fakeredis.FakeRedis(server=kwargs["server"], decode_responses=True)
    else:
        import redis

        client = redis.Redis(
            connection_pool=redis.ConnectionPool(
                connection_class=base.connection_pool.connection_class,
                **{**kwargs, "decode_responses": True},
            )
        )
    store = store_factory(client=client)
    r = put(store, game_id, 2, views={"public": '{"x":"é"}'}, status="open")
    assert r.version == 2
    assert [e.seq for e in store.read(game_id)] == [1, 2]
    assert store.get_view(game_id, "public") == (2, '{"x":"é"}')
    assert store.command_result(game_id, r.command_id) == AppendResult(
        game_id, r.command_id, 1, 2, 2, duplicate=True
    )
    assert store.head(game_id).version == 2


def test_envelopes_built_by_hand_are_checked(store: RedisStore, game_id: str) -> None:
    def hand(**kw: Any) -> Envelope:
        base: dict[str, Any] = dict(
            type="A",
            schema_version=1,
            game_id=game_id,
            seq=1,
            visibility="public",
            command_id="c",
            actor="system",
            ts=TS,
        )
        return Envelope(**{**base, **kw}).sealed()

    for bad, match in [
        (hand(visibility="everyone"), "seat:N"),
        (hand(ts="2025-03-01T12:00:00"), "UTC"),
        (hand(actor=""), "actor"),
        (hand(prev_hash="1" * 64), "GENESIS_HASH"),
    ]:
        with pytest.raises(InvalidBatch, match=match):
            store.append(game_id, 0, "c", [bad])
    assert store.version(game_id) == 0
    assert store.append(game_id, 0, "c", [hand()]).version == 1
