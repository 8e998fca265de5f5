"""A finished game stays in the lobby, with the same summary, once it is compacted and once it is
archived: ``GET /games?status=finished`` is a player's history (real Redis, a real archive
directory, through the HTTP API)."""

from __future__ import annotations

import json
import uuid
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
import redis
from openapi_core import OpenAPI

from events.store import RedisStore
from tests.conftest import REDIS_URL, purge_prefix
from workers import Runtime, WorkerSettings
from workers.dispatch import next_plan, plans
from workers.turns import play

from .conftest import ValidatingClient, _client, make_app, new_game

pytestmark = pytest.mark.redis

BOTS4 = {"seats": [{"kind": "bot", "bot": "heuristic"}] * 4}
QUERIES: list[dict[str, Any]] = [
    {"status": "finished"},
    {"status": "finished", "players": 4},
    {"players": 4},
    {"limit": 100},
]


@pytest.fixture
def prefix(real_redis: Any) -> Iterator[str]:
    p = f"t{uuid.uuid4().hex[:10]}"
    yield p
    purge_prefix(real_redis, p)


def finished_game(prefix: str, seed: str, keep_for: int) -> str:
    """A 4-player bot game played to its end in this process; ``keep_for``: the retention a game
    created with ``RFG_FINISHED_GAME_SECONDS=keep_for`` gets (0: kept for good)."""
    rt = Runtime(
        redis.Redis.from_url(REDIS_URL),
        WorkerSettings(prefix=prefix, queue=prefix, play_on=600),
        listen=False,
    )
    gid, _ = rt.games.create(4, seed=seed, table=BOTS4)
    rt.store.set_retention(gid, 0, keep_for)
    state, _v, clocks = rt.games.load_clocks(gid)
    nxt = next_plan(plans(gid, state, clocks, "heuristic"))
    play(rt, gid, nxt.seat, nxt.decision_id)
    assert rt.games.load(gid)[0].over
    return gid


def listing(api: ValidatingClient) -> dict[str, list[dict[str, Any]]]:
    return {json.dumps(q): api.get("/games", query_string=q).get_json()["items"] for q in QUERIES}


@pytest.fixture
def lobby(
    prefix: str, tmp_path: Path, openapi: OpenAPI, monkeypatch: pytest.MonkeyPatch
) -> ValidatingClient:
    monkeypatch.setenv("RFG_ARCHIVE_DIR", str(tmp_path))  # the API serves archived games too
    api = _client(make_app(REDIS_URL, STORE_PREFIX=prefix), openapi)
    api.sample = 10
    return api


def test_a_finished_game_stays_listed_once_compacted_and_archived(
    prefix: str, tmp_path: Path, lobby: ValidatingClient
) -> None:
    gid = finished_game(prefix, "history", keep_for=0)
    new_game(lobby, players=2)  # an open game alongside
    before = listing(lobby)
    assert [g["game_id"] for g in before['{"status": "finished"}']] == [gid]
    assert before['{"status": "finished"}'][0]["winners"]
    one = lobby.get(f"/games/{gid}")
    store = RedisStore(redis.Redis.from_url(REDIS_URL), prefix=prefix, archive_dir=str(tmp_path))

    assert store.compact(gid) is not None
    assert listing(lobby) == before
    again = lobby.get(f"/games/{gid}")
    assert (again.get_json(), again.headers["ETag"]) == (one.get_json(), one.headers["ETag"])

    assert store.archive(gid) is not None
    assert listing(lobby) == before
    again = lobby.get(f"/games/{gid}")
    assert (again.get_json(), again.headers["ETag"]) == (one.get_json(), one.headers["ETag"])


@pytest.mark.parametrize("archived", [False, True])
def test_a_game_compacted_by_an_older_version_comes_back_to_the_lobby(
    prefix: str, tmp_path: Path, lobby: ValidatingClient, real_redis: Any, archived: bool
) -> None:
    """Compacted before compaction kept the summary: the first listing that meets the game reads
    the summary from the compacted blob (or the archive file), shows it and puts it back, with
    the game's TTL, so later listings read it from Redis."""
    gid = finished_game(prefix, f"legacy-{archived}", keep_for=3600)
    before = listing(lobby)
    store = RedisStore(redis.Redis.from_url(REDIS_URL), prefix=prefix, archive_dir=str(tmp_path))
    assert store.compact(gid) is not None
    if archived:
        assert store.archive(gid) is not None
    views = store.keys(gid)[3]
    real_redis.delete(views)  # what compaction used to leave
    assert listing(lobby) == before
    assert real_redis.hkeys(views) == [b"summary"]
    assert 0 < real_redis.ttl(views) <= real_redis.ttl(store.keys(gid)[1])
    assert listing(lobby) == before
