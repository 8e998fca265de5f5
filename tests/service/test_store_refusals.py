"""Redis refusing writes (full, a read-only replica, failing its disk, too few replicas) is an
outage: 503 ``store-unavailable`` with ``Retry-After``, from a view, from the rate limiter and from
``/readyz`` - never a 500. (The same against real servers: tests/hosting/test_store_full.py.)"""

from __future__ import annotations

from typing import Any

import pytest
import redis
from flask import Flask

from events.store import outage

from .conftest import make_app

REFUSALS = [
    redis.exceptions.OutOfMemoryError("command not allowed when used memory > 'maxmemory'."),
    redis.exceptions.ReadOnlyError("You can't write against a read only replica."),
    redis.exceptions.ResponseError("MISCONF Errors writing to the AOF file: No space left"),
    redis.exceptions.ResponseError("NOREPLICAS Not enough good replicas to write."),
]


def _raise(exc: Exception) -> Any:
    def boom(*_a: Any, **_k: Any) -> None:
        raise exc

    return boom


def _unavailable(r: Any) -> dict[str, Any]:
    assert r.status_code == 503, (r.status_code, r.get_data()[:300])
    assert r.mimetype == "application/problem+json"
    assert int(r.headers["Retry-After"]) > 0
    body: dict[str, Any] = r.get_json()
    assert body["type"] == "/problems/store-unavailable"
    return body


@pytest.mark.parametrize("exc", REFUSALS, ids=["OOM", "READONLY", "MISCONF", "NOREPLICAS"])
def test_a_refused_write_is_503(
    app: Flask, monkeypatch: pytest.MonkeyPatch, exc: Exception
) -> None:
    b = app.extensions["rfg"]
    monkeypatch.setattr(b.games, "view", _raise(exc))
    body = _unavailable(app.test_client().get("/games/abc/view"))
    assert "refuses writes" in body["detail"]
    monkeypatch.setattr(b.store, "create_game", _raise(exc))
    r = app.test_client().post("/games", json={"seats": [{"kind": "human"}] * 2})
    _unavailable(r)


def test_another_redis_error_is_still_a_500(app: Flask, monkeypatch: pytest.MonkeyPatch) -> None:
    b = app.extensions["rfg"]
    monkeypatch.setattr(b.games, "view", _raise(redis.exceptions.ResponseError("WRONGTYPE x")))
    r = app.test_client().get("/games/abc/view")
    assert r.status_code == 500 and r.get_json()["type"] == "/problems/internal-error"


@pytest.mark.parametrize("exc", REFUSALS[:1], ids=["OOM"])
def test_the_rate_limiter_refused_is_503(monkeypatch: pytest.MonkeyPatch, exc: Exception) -> None:
    import uuid

    from service.limits import Counters

    app = make_app(f"memory://{uuid.uuid4().hex}", RATE_LIMITS=True)
    monkeypatch.setattr(Counters, "run", _raise(exc))
    _unavailable(app.test_client().get("/games"))
    assert app.test_client().get("/healthz").status_code == 200


@pytest.mark.parametrize("exc", REFUSALS, ids=["OOM", "READONLY", "MISCONF", "NOREPLICAS"])
def test_readyz_is_503_while_the_store_refuses_writes(
    app: Flask, monkeypatch: pytest.MonkeyPatch, exc: Exception
) -> None:
    client = app.test_client()
    assert client.get("/readyz").status_code == 200
    monkeypatch.setattr(
        outage, "write_refusal", lambda *_a: outage.describe(outage.refusal(exc) or "")
    )
    r = client.get("/readyz")
    assert r.status_code == 503 and r.get_json()["type"] == "/problems/not-ready"
    assert outage.refusal(exc) in r.get_json()["detail"] and r.headers["Retry-After"]
    assert client.get("/healthz").status_code == 200  # liveness: the process serves


@pytest.mark.parametrize(
    "exc",
    [
        redis.exceptions.ClusterDownError("The cluster is down"),
        redis.exceptions.MasterDownError("Link with MASTER is down"),
        redis.exceptions.TryAgainError("Multiple keys request during rehashing of slot"),
        redis.exceptions.ClusterError("TTL exhausted."),
    ],
    ids=["CLUSTERDOWN", "MASTERDOWN", "TRYAGAIN", "TTL-exhausted"],
)
def test_a_cluster_failing_over_is_503_and_an_outage(
    app: Flask, monkeypatch: pytest.MonkeyPatch, exc: Exception
) -> None:
    """A Redis Cluster between losing a master and promoting its replica: nothing about the
    request was wrong, the client retries (seen as 500s through real partitions before)."""
    b = app.extensions["rfg"]
    monkeypatch.setattr(b.games, "view", _raise(exc))
    _unavailable(app.test_client().get("/games/abc/view"))
    assert outage.is_outage(exc)
