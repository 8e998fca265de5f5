"""Liveness and readiness.

* ``/healthz`` - liveness: the process answers (it touches nothing else, so a restart is the
  cure only for what it detects: a process that no longer serves);
* ``/readyz`` - readiness: the event store answers and takes writes (``Backend.not_ready``: one
  round trip that writes nothing). 503 while Redis is down, stalled, full, a read-only replica,
  failing to write its disk or short of replicas: take the process out of a load balancer's
  rotation, do not restart it; it is ready again as soon as the store is.
"""

from __future__ import annotations

from flask import Blueprint, Response

from service.backend import backend
from service.errors import Problem
from service.http import respond
from service.schemas.responses import StatusSchema

bp = Blueprint("health", __name__)
_status = StatusSchema()


@bp.get("/healthz")
def healthz() -> Response:
    return respond(_status, {"status": "ok"}, headers={"Cache-Control": "no-store"})


@bp.get("/readyz")
def readyz() -> Response:
    why = backend().not_ready()
    if why is not None:
        raise Problem(
            "not-ready",
            f"the event store (Redis) cannot serve: {why}; retry later",
            headers={"Retry-After": "5", "Cache-Control": "no-store"},
        )
    return respond(_status, {"status": "ready"}, headers={"Cache-Control": "no-store"})
