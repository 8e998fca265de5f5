"""Liveness and readiness: ``/healthz`` (the process answers) and ``/readyz`` (Redis answers)."""

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
    if not backend().ping():
        raise Problem(
            "not-ready",
            "the event store (Redis) does not answer; retry later",
            headers={"Retry-After": "5", "Cache-Control": "no-store"},
        )
    return respond(_status, {"status": "ready"}, headers={"Cache-Control": "no-store"})
