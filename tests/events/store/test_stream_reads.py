"""The store's reads for the API's event streams, on every adapter: games' versions, an account's
notices (``RedisStore``), and the process's one stream reader's (``StreamWatch``)."""

from __future__ import annotations

import json
import uuid

from events.store import RedisStore, is_cluster
from events.store.redis_adapter import StreamWatch
from tests.events.store.test_event_store_contract import put


def test_versions_of_games_some_missing(store: RedisStore) -> None:
    one, three = uuid.uuid4().hex, uuid.uuid4().hex
    put(store, one, 1)
    put(store, three, 3)
    assert store.versions([one, three, uuid.uuid4().hex]) == [1, 3, None]
    assert store.versions([]) == []


def test_notices_are_read_after_a_cursor(store: RedisStore) -> None:
    account = f"bot-{uuid.uuid4().hex[:8]}"
    assert store.newest_notice(account) == "0-0"
    assert store.read_notices(account, "0-0") == []
    stream = store.notice_stream(account)
    first = json.dumps({"game_id": "g", "seat": 0, "decision_id": 1})
    put(store, uuid.uuid4().hex, 1, notices=[(stream, first)])
    cursor = store.newest_notice(account)
    assert cursor != "0-0"
    notices = store.read_notices(account, "0-0")
    assert [(i, {k: json.loads(v) for k, v in f.items()}) for i, f in notices] == [
        (cursor, {"d": json.loads(first)})
    ]
    assert store.read_notices(account, cursor) == []
    second = json.dumps({"game_id": "g", "seat": 1, "decision_id": 2})
    put(store, uuid.uuid4().hex, 1, notices=[(stream, second)])
    [(newest, fields)] = store.read_notices(account, cursor)
    assert newest == store.newest_notice(account) and json.loads(fields["d"]) == json.loads(second)
    assert len(store.read_notices(account, "0-0", count=1)) == 1


def test_the_stream_reader_sees_which_streams_moved(store: RedisStore) -> None:
    game, account = uuid.uuid4().hex, f"bot-{uuid.uuid4().hex[:8]}"
    put(store, game, 2)
    stream, notices = store.keys(game)[0], store.notice_stream(account)
    empty = store.keys(uuid.uuid4().hex)[0]
    watch = StreamWatch(store.client)
    newest = watch.newest([stream, notices, empty])
    assert newest == {stream: "2-0"}
    if is_cluster(store.client):
        return  # a cluster's XREAD cannot name keys of different slots: it is only polled
    assert watch.moved({stream: "1-0", empty: "0-0"}, block_ms=10) == [stream]
    assert watch.moved({stream: "2-0", empty: "0-0"}, block_ms=10) == []
