"""The rate limits on the other stores: a ``memory://`` store (its fakeredis runs the counters'
script with lupa) and a real Redis Cluster (``redis+cluster://``: a script's keys share a slot, so
a request makes one call per owner of its counters: its token's, then its address's)."""

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
    """The per-address and per-token limits, the bad-token lockout and the route's limit, each
    with its 429 and the headers, on ``app`` (LIMIT_PER_ADDRESS=12, LIMIT_PER_TOKEN=6,
    LIMIT_COMMANDS=2, LIMIT_BAD_TOKENS=2)."""
    api = app.test_client()
    gid, tokens = new_game(api, players=2)  # 3 requests of 127.0.0.1 without a token
    got = [_command(api, gid, tokens[0], f"c{i}") for i in range(3)]
    assert [r.status_code in ANSWERED for r in got] == [True, True, False]
    assert got[2].status_code == 429
    assert got[2].get_json()["limit"] == "commands"
    assert got[1].headers["RateLimit-Policy"] == '"commands";q=2;w=60'
    assert got[1].headers["RateLimit"].startswith('"commands";r=0;t=')
    view = f"/games/{gid}/seats/1/view"
    assert [api.get(view, headers=bearer(f"x{i}")).status_code for i in range(3)] == [401, 401, 429]
    r = api.get(view, headers=bearer("x3"))
    assert r.status_code == 429 and r.get_json()["limit"] == "bad-tokens"
    # a valid token at the locked-out address is not held back, and has its own general limit
    # (the address has counted 9 of its 12: 3 without a token, 2 commands, 4 refused tokens)
    r = api.get(view, headers=bearer(tokens[1]))
    assert r.status_code == 200 and r.headers["RateLimit"].startswith('"per-token";r=5;')
    for left in range(4, -1, -1):
        r = api.get(view, headers=bearer(tokens[1]))
        assert r.status_code == 200 and r.headers["RateLimit"].startswith(f'"per-token";r={left};')
    r = api.get(view, headers=bearer(tokens[1]))
    assert r.status_code == 429 and r.get_json()["limit"] == "per-token"
    assert "this token may make 6 per 1 minute" in r.get_json()["detail"]
    # the address's general limit is spent: a request without a token, or whose token is not
    # valid, is refused; one whose token is valid is not, on a seat's route or a public one
    r = api.get(f"/games/{gid}")
    assert r.status_code == 429 and r.get_json()["limit"] == "per-address"
    assert int(r.headers["Retry-After"]) >= 1
    r = api.get(f"/games/{gid}", headers=bearer("x9"))
    assert r.status_code == 429 and r.get_json()["limit"] == "per-address"
    assert "whose token is valid" in r.get_json()["detail"]
    assert api.get(f"/games/{gid}", headers=bearer(tokens[0])).status_code == 200
    assert api.get(f"/games/{gid}/seats/0/view", headers=bearer(tokens[0])).status_code == 200
    assert api.get("/healthz").status_code == 200  # exempt
    assert api.post("/games", json=SEATS, headers=bearer(ADMIN)).status_code == 201  # exempt
    other = api.get(f"/games/{gid}", environ_base={"REMOTE_ADDR": "192.0.2.5"})
    assert other.status_code == 200 and other.headers["RateLimit"].startswith('"per-address";r=11;')


LIMITS = {
    "LIMIT_PER_ADDRESS": "12 per minute",
    "LIMIT_PER_TOKEN": "6 per minute",
    "LIMIT_COMMANDS": "2 per minute",
}


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
        # the token's limits (its general one, commands), then its address's general count
        assert len(sent) == 2 and all(c.startswith("EVALSHA ") for c in sent), sent
        by_slot = [{key_slot(k.encode()) for k in _keys(c)} for c in sent]
        assert all(len(slots) == 1 for slots in by_slot), sent
        names = sorted(k.rsplit(":", 2)[1] for c in sent for k in _keys(c))
        assert names == sorted(2 * ["per-token"] + 2 * ["commands"] + 2 * ["per-address"])
        # a read with a token: two calls (its token's, its address's); one without: one
        assert api.get(f"/games/{gid}/seats/0/view", headers=bearer(tokens[0])).status_code == 200
        assert len(monitor.commands()) == 2
        assert api.get(f"/games/{gid}").status_code == 200
        assert len(monitor.commands()) == 1
        # a refused token: those two, then its address's bad-token count
        assert api.get(f"/games/{gid}/seats/0/view", headers=bearer("guess")).status_code == 401
        sent = monitor.commands()
        assert len(sent) == 3, sent  # (the nodes' monitors are read one after the other)
        names = sorted(k.rsplit(":", 2)[1] for c in sent for k in _keys(c))
        assert names == sorted(2 * ["per-token", "per-address", "bad-tokens"]), sent
