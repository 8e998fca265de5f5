"""Decisions are pushed to a bot account's stream by the append itself: with the decisions
stream's poll interval set to an hour, a decision made pending by another seat's command still
arrives before the stream's bound (8 s) closes it - only the append's notice can bring it (real
Redis)."""

from __future__ import annotations

import threading
import uuid
from collections.abc import Iterator
from typing import Any

import pytest
from flask import Flask
from rfg_client import parse_sse

import engine
from tests.conftest import REDIS_URL, purge_prefix

from .conftest import bearer, make_app

pytestmark = pytest.mark.redis


@pytest.fixture
def push_app(real_redis: Any) -> Iterator[Flask]:
    prefix = f"t{uuid.uuid4().hex[:12]}"
    app = make_app(
        REDIS_URL,
        STORE_PREFIX=prefix,
        DECISIONS_POLL_SECONDS=3600.0,
        SSE_MAX_SECONDS=8.0,
        SSE_KEEPALIVE_SECONDS=5.0,
    )
    yield app
    purge_prefix(real_redis, prefix)


def _register(app: Flask, name: str) -> dict[str, Any]:
    r = app.test_client().post(
        "/bots/accounts", json={"name": name, "description": "t", "contact": "a@b.c"}
    )
    assert r.status_code == 201
    out: dict[str, Any] = r.get_json()
    return out


def test_a_decision_reaches_the_account_stream_without_waiting_for_a_poll(
    push_app: Flask,
) -> None:
    a, b = _register(push_app, "a"), _register(push_app, "b")
    games = push_app.extensions["rfg"].games
    table = {
        "seats": [
            {"kind": "external", "account": a["account_id"]},
            {"kind": "external", "account": b["account_id"]},
        ]
    }
    resp = push_app.test_client().get(
        "/bots/me/decisions/stream", headers=bearer(a["token"]), buffered=False
    )
    assert resp.status_code == 200
    lines = iter(resp.response)
    got: list[tuple[str, str, str | None]] = []
    next(lines)  # "retry:": the stream has connected and scanned (nothing yet)
    # created directly (not by a ladder): the account's active set is empty, so the poll would
    # never find this game; only the notices written with the appends can
    gid, _ = games.create(2, seed="push", table=table)

    def read_until(n: int) -> None:
        buf: list[bytes] = []
        for chunk in lines:
            raw = chunk if isinstance(chunk, bytes) else chunk.encode()
            buf.extend(raw.splitlines(keepends=True))
            for kind, data, ident in parse_sse(buf):
                got.append((kind, data, ident))
            buf.clear()
            if sum(1 for k, *_ in got if k == "decision") >= n:
                return
        raise AssertionError(f"the stream closed at its bound before decision {n}: not pushed")

    # the decision pending at creation: the notice written by the creation's append
    read_until(1)
    first = [x for x in got if x[0] == "decision"][0]
    assert first[2] == f"{gid}:0:{games.load(gid)[1]}"

    def answer_both() -> None:
        for seat in (0, 1):
            state, version, _ = games.load(gid)
            decision = engine.legal(state, seat)
            command = {"kind": "start_tiles", "development": decision["options"][0]["development"]}
            games.submit(gid, seat, command, f"c{seat}")

    t = threading.Thread(target=answer_both)
    t.start()
    read_until(2)
    t.join()
    second = [x for x in got if x[0] == "decision"][1]
    version = games.load(gid)[1]
    assert second[2] == f"{gid}:0:{version}"  # seat 0's next decision, made pending by seat 1
    resp.close()
