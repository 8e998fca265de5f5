"""The rate limits on the other stores: a ``memory://`` store (its fakeredis runs the counters'
script with lupa) and a real Redis Cluster (``redis+cluster://``: a script's keys share a slot, so
a request makes one call per owner of its counters - its address's, then its token's)."""

from __future__ import annotations

import uuid
from collections.abc import Iterator
from typing import Any

import pytest
from flask import Flask
from redis.cluster import key_slot

import events.store
from tests.rcluster import purge_cluster

from .conftest import ADMIN, bearer, make_app, new_game
from .test_limits_cost import ANSWERED, Monitor, _command

SEATS = {"seats": [{"kind": "human"}, {"kind": "human"}]}


def _limited_play(app: Flask) -> None:
    """The per-address limit, the bad-token lockout and the route's limit, each with its 429
    and the headers, on ``app`` (LIMIT_PER_ADDRESS=12, LIMIT_COMMANDS=2, LIMIT_BAD_TOKENS=2)."""
    api = app.test_client()
    gid, tokens = new_game(api, players=2)  # 3 requests of 127.0.0.1
    got = [_command(api, gid, tokens[0], f"c{i}") for i in range(3)]
    assert [r.status_code in ANSWERED for r in got] == [True, True, False]
    assert got[2].status_code == 429
    assert got[2].get_json()["limit"] == "commands"
    assert got[1].headers["RateLimit-Policy"] == '"commands";q=2;w=60'
    assert got[1].headers["RateLimit"].startswith('"commands";r=0;t=')
    view = f"/games/{gid}/seats/1/view"
    assert [api.get(view, headers=bearer(f"x{i}")).status_code for i in range(3)] == [401, 401, 429]
    r = api.get(view, headers=bearer(tokens[1]))
    assert r.status_code == 429 and r.get_json()["limit"] == "bad-tokens"
    assert r.headers["RateLimit"].startswith('"per-address";r=2;')  # 10 of 12 counted
    assert api.get(f"/games/{gid}").status_code == 200  # no token: not held back
    assert api.get(f"/games/{gid}").headers["RateLimit"].startswith('"per-address";r=0;')
    r = api.get(f"/games/{gid}")
    assert r.status_code == 429 and r.get_json()["limit"] == "per-address"
    assert int(r.headers["Retry-After"]) >= 1
    assert api.get("/healthz").status_code == 200  # exempt
    assert api.post("/games", json=SEATS, headers=bearer(ADMIN)).status_code == 201  # exempt
    other = api.get(f"/games/{gid}", environ_base={"REMOTE_ADDR": "192.0.2.5"})
    assert other.status_code == 200 and other.headers["RateLimit"].startswith('"per-address";r=11;')


LIMITS = {"LIMIT_PER_ADDRESS": "12 per minute", "LIMIT_COMMANDS": "2 per minute"}


def test_limits_on_a_memory_store_count_in_its_fakeredis() -> None:
    url = f"memory://{uuid.uuid4().hex}"
    app = make_app(url, RATE_LIMITS=True, LIMIT_BAD_TOKENS="2 per minute", **LIMITS)
    _limited_play(app)
    keys = {k.decode() for k in events.store.connect(url).scan_iter(match="*:limits:*")}
    assert any(":limits:{address:127.0.0.1}:per-address:12/1/minute" in k for k in keys), keys


@pytest.fixture
def cluster_app(redis_cluster: Any) -> Iterator[tuple[Flask, str]]:
    prefix = f"c{uuid.uuid4().hex[:10]}"
    app = make_app(
        redis_cluster.url,
        STORE_PREFIX=prefix,
        RATE_LIMITS=True,
        LIMIT_BAD_TOKENS="2 per minute",
        **LIMITS,
    )
    yield app, prefix
    client = events.store.connect(redis_cluster.url)
    purge_cluster(client, prefix)
    client.close()


@pytest.mark.cluster
def test_limits_on_a_cluster(cluster_app: tuple[Flask, str]) -> None:
    _limited_play(cluster_app[0])


def _keys(evalsha: str) -> list[str]:
    """The keys of a monitored ``EVALSHA <sha> <n> <keys...> <args...>``."""
    words = evalsha.split(" ")
    return words[3 : 3 + int(words[2])]


@pytest.mark.cluster
def test_a_command_on_a_cluster_makes_one_call_per_owner_each_in_one_slot(
    cluster_app: tuple[Flask, str], redis_cluster: Any
) -> None:
    app, prefix = cluster_app
    api = app.test_client()
    gid, tokens = new_game(api, players=2)
    nodes = [n.client for n in redis_cluster.nodes]
    with Monitor(nodes, f"{prefix}:limits") as monitor:
        r = _command(api, gid, tokens[0], "c0")
        sent = monitor.commands()
        assert r.status_code in ANSWERED and r.headers["RateLimit"].startswith('"commands";r=1;')
        # the address's limits (per address, bad tokens), then the token's (commands)
        assert len(sent) == 2 and all(c.startswith("EVALSHA ") for c in sent), sent
        by_slot = [{key_slot(k.encode()) for k in _keys(c)} for c in sent]
        assert all(len(slots) == 1 for slots in by_slot), sent
        names = sorted(k.rsplit(":", 2)[1] for c in sent for k in _keys(c))
        assert names == sorted(
            ["per-address", "per-address", "bad-tokens", "bad-tokens"] + 2 * ["commands"]
        )
        # a request with no per-token limit: one call
        assert api.get(f"/games/{gid}/seats/0/view", headers=bearer(tokens[0])).status_code == 200
        assert len(monitor.commands()) == 1
        assert api.get(f"/games/{gid}").status_code == 200
        assert len(monitor.commands()) == 1
