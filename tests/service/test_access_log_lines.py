"""The access log line of a request, field by field, as production writes it: the formatter and
the request-context filter that ``service.logs.logconfig`` gives gunicorn, one JSON line per
request with its fields in a fixed order, compact only as ``json.dumps`` is, and the request's
context (request id, game, seat, the command id from a command's body) on it and on every other
record written while the request is served."""

from __future__ import annotations

import importlib
import io
import json
import logging
import os
import re
from collections.abc import Iterator
from typing import Any

import pytest
from flask import Flask

from bots import get_bot
from engine.rng import Rng
from service import logs

from .conftest import ValidatingClient, bearer, new_game

HEAD = ["time", "level", "logger", "pid", "message"]
ACCESS = ["method", "path", "route", "status", "duration_ms", "remote_addr"]
TIME = re.compile(r"\d{4}-\d\d-\d\d \d\d:\d\d:\d\d,\d{3}")


def _build(spec: dict[str, Any]) -> Any:
    """What ``logging.config.dictConfig`` builds from a ``{"()": "module.Name", **kwargs}``."""
    kwargs = dict(spec)
    module, _, name = kwargs.pop("()").rpartition(".")
    return getattr(importlib.import_module(module), name)(**kwargs)


@pytest.fixture
def lines() -> Iterator[io.StringIO]:
    """The lines the production handler (its formatter and filter) writes for service.access and
    for the logger ``tests.access``."""
    doc = logs.logconfig("json", "INFO")
    out = io.StringIO()
    handler = logging.StreamHandler(out)
    handler.setFormatter(_build(doc["formatters"]["main"]))
    for name in doc["handlers"]["main"]["filters"]:
        handler.addFilter(_build(doc["filters"][name]))
    loggers = [logs.access_log, logging.getLogger("tests.access")]
    levels = [lg.level for lg in loggers]
    for lg in loggers:
        lg.addHandler(handler)
        lg.setLevel(logging.INFO)
    yield out
    for lg, level in zip(loggers, levels, strict=True):
        lg.removeHandler(handler)
        lg.setLevel(level)


def _records(out: io.StringIO) -> list[dict[str, Any]]:
    got = []
    for line in out.getvalue().splitlines():
        record = json.loads(line)
        # byte for byte what json.dumps makes of these fields in this order
        assert line == json.dumps(record), line
        got.append(record)
    out.seek(0)
    out.truncate()
    return got


def _access(out: io.StringIO) -> dict[str, Any]:
    [record] = [r for r in _records(out) if r["logger"] == "service.access"]
    assert TIME.fullmatch(record["time"]), record
    assert (record["level"], record["pid"]) == ("INFO", os.getpid())
    assert record["message"] == f"{record['method']} {record['path']} {record['status']}"
    assert isinstance(record["duration_ms"], float) and record["duration_ms"] >= 0
    assert round(record["duration_ms"], 2) == record["duration_ms"]
    assert record["remote_addr"] == "127.0.0.1"
    return record


def _command(api: ValidatingClient, gid: str, token: str, version: int, **body: Any) -> Any:
    view = api.get(f"/games/{gid}/seats/1/view", headers=bearer(token)).get_json()
    command = get_bot("random").act(view["view"]["decision"], None, Rng(1))
    payload = {"command_id": "cmd-9", "expected_version": version, "command": command, **body}
    return api.post(
        f"/games/{gid}/seats/1/commands",
        headers={**bearer(token), "X-Request-ID": "rq-9"},
        json=payload,
        validate=False,
    )


def test_a_command_line_has_every_field_in_order(api: ValidatingClient, lines: io.StringIO) -> None:
    gid, tokens = new_game(api, players=2)
    version = api.get(f"/games/{gid}/seats/1/view", headers=bearer(tokens[1])).get_json()["version"]
    _records(lines)
    r = _command(api, gid, tokens[1], version)
    assert r.status_code in (201, 409)
    # (the view read inside _command logged its own line first)
    got = [rec for rec in _records(lines) if rec["method"] == "POST"]
    assert len(got) == 1
    record = got[0]
    assert list(record) == [*HEAD, *ACCESS, "request_id", "game_id", "seat", "command_id"]
    assert {k: record[k] for k in [*ACCESS[:4], "request_id", "game_id", "seat", "command_id"]} == {
        "method": "POST",
        "path": f"/games/{gid}/seats/1/commands",
        "route": "/games/<gid:game_id>/seats/<int:seat>/commands",
        "status": r.status_code,
        "request_id": "rq-9",
        "game_id": gid,
        "seat": 1,
        "command_id": "cmd-9",
    }
    assert record["logger"] == "service.access"
    assert r.headers["X-Request-ID"] == "rq-9"


@pytest.mark.parametrize(
    "body",
    [
        b"{not json",
        b'["command_id", "x"]',
        b'{"command_id": 7}',
        json.dumps({"command_id": "x" * 201}).encode(),
    ],
)
def test_a_command_without_a_usable_command_id_has_none(
    api: ValidatingClient, lines: io.StringIO, body: bytes
) -> None:
    gid, tokens = new_game(api, players=2)
    _records(lines)
    r = api.post(
        f"/games/{gid}/seats/1/commands",
        headers=bearer(tokens[1]),
        data=body,
        content_type="application/json",
        validate=False,
    )
    assert 400 <= r.status_code < 500
    record = _access(lines)
    assert list(record) == [*HEAD, *ACCESS, "request_id", "game_id", "seat"]
    assert record["request_id"] == r.headers["X-Request-ID"]
    assert re.fullmatch(r"[0-9a-f]{32}", record["request_id"])
    assert (record["game_id"], record["seat"], record["status"]) == (gid, 1, r.status_code)


def test_other_routes_carry_what_they_name(api: ValidatingClient, lines: io.StringIO) -> None:
    gid, tokens = new_game(api, players=2)
    _records(lines)
    api.get(f"/games/{gid}/seats/0/view", headers=bearer(tokens[0]))
    record = _access(lines)
    assert list(record) == [*HEAD, *ACCESS, "request_id", "game_id", "seat"]
    assert record["route"] == "/games/<gid:game_id>/seats/<int:seat>/view"
    assert (record["game_id"], record["seat"], record["status"]) == (gid, 0, 200)
    # a body's command_id is a command's only
    r = api.post(
        "/games", json={"seats": [{"kind": "human"}] * 2, "command_id": "no"}, validate=False
    )
    record = _access(lines)
    assert list(record) == [*HEAD, *ACCESS, "request_id"]
    assert (record["route"], record["status"]) == ("/games", r.status_code)
    # no route
    api.get("/nowhere", validate=False)
    record = _access(lines)
    assert list(record) == [*HEAD, *ACCESS, "request_id"]
    assert (record["route"], record["status"]) == (None, 404)


def test_every_record_of_a_request_carries_its_context(app: Flask, lines: io.StringIO) -> None:
    log = logging.getLogger("tests.access")
    body = {"command_id": "c-1", "command": {}}
    with app.test_request_context(
        "/games/g0123456789/seats/2/commands",
        method="POST",
        json=body,
        headers={"X-Request-ID": "abc:1"},
    ):
        logs._before()  # noqa: SLF001 - what the app runs before each request
        log.info("one %s", "thing", extra={"k": [1, "é"]})
        log.warning("two", extra={"game_id": "mine"})  # a field of the record's own stays
    log.info("outside")
    one, two, outside = _records(lines)
    context = {"request_id": "abc:1", "game_id": "g0123456789", "seat": 2, "command_id": "c-1"}
    assert one == {
        "time": one["time"],
        "level": "INFO",
        "logger": "tests.access",
        "pid": os.getpid(),
        "message": "one thing",
        "k": [1, "é"],
        **context,
    }
    assert list(one) == [*HEAD, "k", *context]
    assert two["level"] == "WARNING" and two["game_id"] == "mine"
    assert list(two) == [*HEAD, "game_id", "request_id", "seat", "command_id"]
    assert list(outside) == HEAD and outside["message"] == "outside"


def test_gunicorn_builds_no_access_record_of_its_own() -> None:
    """The app's ``service.access`` line is the only one: ``rfg run``'s gunicorn logger class
    does not build gunicorn's access record (its fields of every request, then dropped), even
    with a logging configuration given and its access logger listening."""
    from gunicorn import glogging
    from gunicorn.config import Config

    from service import gunicorn_conf

    cfg = Config()
    cfg.set("logconfig_dict", gunicorn_conf.logconfig_dict)
    cfg.set("logger_class", gunicorn_conf.logger_class)
    assert cfg.logger_class is gunicorn_conf.AppAccessLogger
    seen: list[logging.LogRecord] = []

    class Catch(logging.Handler):
        def emit(self, record: logging.LogRecord) -> None:
            seen.append(record)

    class Resp:
        status = "200 OK"
        sent = 2
        headers: list[tuple[str, str]] = []

    class Req:
        headers: list[tuple[str, str]] = []

    environ = {"REQUEST_METHOD": "GET", "RAW_URI": "/", "SERVER_PROTOCOL": "HTTP/1.1"}
    import datetime

    for cls, expected in ((glogging.Logger, 1), (cfg.logger_class, 0)):
        log = cls(cfg)
        log.access_log.setLevel(logging.DEBUG)
        catch = Catch()
        log.access_log.addHandler(catch)
        seen.clear()
        log.access(Resp(), Req(), environ, datetime.timedelta(milliseconds=1))
        log.access_log.removeHandler(catch)
        assert len(seen) == expected, cls
