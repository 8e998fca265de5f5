"""The API's logs: JSON lines (python-json-logger) with the request's context.

Every request gets a request id - the client's ``X-Request-ID`` if it is a plain token (1-128
characters from ``A-Z a-z 0-9 . _ : -``), else a new random one - sent back in the
``X-Request-ID`` response header. Every log record written while a request is served carries
``request_id``, and ``game_id``, ``seat`` and ``command_id`` when the request names them (the
command id of ``POST .../commands`` comes from its body). One ``service.access`` line per request
(method, path, route, status, duration_ms, remote_addr) replaces gunicorn's access log.

``logconfig(fmt, level)`` is the ``logging.config.dictConfig`` document gunicorn is given
(``service.gunicorn_conf``): JSON to stderr by default (python-json-logger's ``JsonFormatter``),
``RFG_LOG_FORMAT=text`` for plain lines, ``RFG_LOG_LEVEL`` for the level (default
INFO).
"""

from __future__ import annotations

import logging
import os
import re
import time
from typing import Any

import orjson
from flask import Flask, Request, Response, g, has_request_context, request

REQUEST_ID_HEADER = "X-Request-ID"
#: where the WSGI environ holds that header (``request.headers`` reads it there)
_REQUEST_ID_ENVIRON = "HTTP_X_REQUEST_ID"
_SAFE_ID = re.compile(r"^[A-Za-z0-9._:-]{1,128}$")
_UNSET = object()

access_log = logging.getLogger("service.access")


def _command_id(req: Request) -> str | None:
    if req.method != "POST" or req.endpoint != "commands.submit":
        return None
    try:
        body = orjson.loads(req.get_data(cache=True))
    except Exception:  # noqa: BLE001 - a malformed body has no command id; its 4xx says why
        return None
    cid = body.get("command_id") if isinstance(body, dict) else None
    return cid if isinstance(cid, str) and len(cid) <= 200 else None


def request_context() -> dict[str, Any]:
    """The context fields of the request being served (empty outside a request)."""
    if not has_request_context():
        return {}
    # one context lookup each for the request and g (every read through the proxies looks again)
    req: Request = request._get_current_object()  # type: ignore[attr-defined]
    ctx_g = g._get_current_object()
    out: dict[str, Any] = {}
    rid = ctx_g.get("request_id")
    if rid:
        out["request_id"] = rid
    args = req.view_args or {}
    for key in ("game_id", "seat"):
        if key in args:
            out[key] = args[key]
    cid = ctx_g.get("command_id", _UNSET)
    if cid is _UNSET:
        cid = ctx_g.command_id = _command_id(req)
    if cid:
        out["command_id"] = cid
    return out


class RequestContextFilter(logging.Filter):
    """Adds the request's context fields to every record (install it on the handlers)."""

    def filter(self, record: logging.LogRecord) -> bool:
        for key, value in request_context().items():
            if not hasattr(record, key):
                setattr(record, key, value)
        return True


#: the bits ``uuid.UUID(..., version=4)`` sets: version 4, RFC 4122 variant
_UUID4_KEEP = ~((0xF000 << 64) | (0xC000 << 48)) & ((1 << 128) - 1)
_UUID4_SET = (0x4000 << 64) | (0x8000 << 48)


def _uuid4_hex(raw: bytes) -> str:
    """``uuid.UUID(bytes=raw, version=4).hex`` (``uuid.uuid4().hex`` of these 16 random bytes),
    without building the UUID object."""
    return f"{(int.from_bytes(raw, 'big') & _UUID4_KEEP) | _UUID4_SET:032x}"


def _before() -> None:
    rid = request.environ.get(_REQUEST_ID_ENVIRON, "")  # the header, as request.headers reads it
    ctx_g = g._get_current_object()  # one context lookup for both attributes
    ctx_g.request_id = rid if _SAFE_ID.match(rid) else _uuid4_hex(os.urandom(16))
    ctx_g.started = time.perf_counter()


def _after(resp: Response) -> Response:
    ctx_g = g._get_current_object()
    rid = ctx_g.get("request_id")
    if rid:
        resp.headers[REQUEST_ID_HEADER] = rid
    if access_log.isEnabledFor(logging.INFO):
        took = (time.perf_counter() - ctx_g.get("started", time.perf_counter())) * 1000
        req: Request = request._get_current_object()  # type: ignore[attr-defined]
        route = req.url_rule.rule if req.url_rule is not None else None
        path = req.path
        access_log.info(
            "%s %s %s",
            req.method,
            path,
            resp.status_code,
            extra={
                "method": req.method,
                "path": path,
                "route": route,
                "status": resp.status_code,
                "duration_ms": round(took, 2),
                "remote_addr": req.remote_addr,
            },
        )
    return resp


def init_app(app: Flask) -> None:
    app.before_request(_before)
    app.after_request(_after)


def logconfig(fmt: str = "json", level: str = "INFO") -> dict[str, Any]:
    """A ``dictConfig`` document: every record to stderr, as JSON lines (or text), with the
    request context; gunicorn's own loggers included."""
    if fmt not in ("json", "text"):
        raise ValueError(f"RFG_LOG_FORMAT is {fmt!r}; use 'json' or 'text'")
    formatter: dict[str, Any]
    if fmt == "json":
        formatter = {
            "()": "pythonjsonlogger.json.JsonFormatter",
            "fmt": ["asctime", "levelname", "name", "process", "message"],
            "rename_fields": {
                "asctime": "time",
                "levelname": "level",
                "name": "logger",
                "process": "pid",
            },
        }
    else:
        formatter = {"format": "%(asctime)s %(levelname)s %(name)s [%(process)d]: %(message)s"}
    handler = {
        "class": "logging.StreamHandler",
        "stream": "ext://sys.stderr",
        "formatter": "main",
        "filters": ["request"],
    }
    return {
        "version": 1,
        "disable_existing_loggers": False,
        "filters": {"request": {"()": "service.logs.RequestContextFilter"}},
        "formatters": {"main": formatter},
        "handlers": {"main": handler},
        "root": {"level": level.upper(), "handlers": ["main"]},
        "loggers": {
            "gunicorn.error": {"level": level.upper(), "handlers": ["main"], "propagate": False},
            "gunicorn.access": {"level": "WARNING", "handlers": ["main"], "propagate": False},
        },
    }
