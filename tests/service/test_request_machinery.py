"""What every request goes through, as a client and the logs see it: the answer's headers in
their order, the charset check of a body's Content-Type, the app's own functions called as they
are (an ``async def`` still refused without Flask's async extra), and the JSON log lines exactly
as python-json-logger's ``JsonFormatter`` writes them."""

from __future__ import annotations

import datetime
import importlib
import logging
import sys
from typing import Any

import pytest
from flask import Flask
from pythonjsonlogger.json import JsonFormatter

from service import logs

from .conftest import ValidatingClient


def test_healthz_answers_these_headers_in_this_order(api: ValidatingClient) -> None:
    r = api.get("/healthz", headers={"X-Request-ID": "probe-1"})
    assert r.status_code == 200 and r.get_data() == b'{"status":"ok"}'
    assert list(r.headers.items()) == [
        ("Content-Type", "application/json"),
        ("Content-Length", "15"),
        ("Cache-Control", "no-store"),
        ("X-Content-Type-Options", "nosniff"),
        ("X-Frame-Options", "DENY"),
        ("Content-Security-Policy", "default-src 'none'; frame-ancestors 'none'"),
        ("X-Request-ID", "probe-1"),
    ]


@pytest.mark.parametrize(
    "content_type,refused",
    [
        ("application/json", False),
        ("application/json; charset=utf-8", False),
        ("application/json;charset=UTF8", False),
        ("application/json; version=2", False),
        ("application/json;charset=latin-1", True),
        ('application/json; charset="utf-16"', True),
        ("application/json; CHARSET=ascii", True),
    ],
)
def test_only_a_charset_other_than_utf8_is_refused(
    api: ValidatingClient, content_type: str, refused: bool
) -> None:
    r = api.post(
        "/games",
        data=b'{"seats": [{"kind": "human"}, {"kind": "human"}]}',
        content_type=content_type,
        validate=False,
    )
    if refused:
        assert r.status_code == 415, r.get_json()
        assert r.get_json()["type"] == "/problems/unsupported-media-type"
    else:
        assert r.status_code == 201, r.get_json()


def test_the_apps_functions_are_called_as_they_are(app: Flask) -> None:
    funcs: list[Any] = [*app.view_functions.values()]
    for table in (app.before_request_funcs, app.after_request_funcs):
        for registered in table.values():
            funcs.extend(registered)
    assert len(funcs) > 10
    for func in funcs:
        assert app.ensure_sync(func) is func

    async def later() -> str:
        return "never"

    app.add_url_rule("/later", "later", later)
    with pytest.raises(RuntimeError, match="async"):  # Flask's own answer without asgiref
        app.ensure_sync(app.view_functions["later"])


class _Opaque:
    """An object without a JSON form of its own."""


def _formatter() -> logging.Formatter:
    """The formatter ``service.logs.logconfig`` gives the handler, built as dictConfig does."""
    spec = dict(logs.logconfig("json", "INFO")["formatters"]["main"])
    module, _, name = spec.pop("()").rpartition(".")
    built: logging.Formatter = getattr(importlib.import_module(module), name)(**spec)
    return built


def _record(created: float, **extra: Any) -> logging.LogRecord:
    exc_info = None
    if extra.pop("failed", False):
        try:
            raise ValueError("boom é")
        except ValueError:
            exc_info = sys.exc_info()
    record = logging.getLogger("tests.lines").makeRecord(
        "tests.lines", logging.INFO, __file__, 1, "%s %d", ("a", 2), exc_info, extra=extra
    )
    record.created = created
    record.msecs = int((created - int(created)) * 1000) + 0.0
    return record


def test_json_lines_are_python_json_loggers_own() -> None:
    doc = logs.logconfig("json", "INFO")["formatters"]["main"]
    theirs = JsonFormatter(**{k: v for k, v in doc.items() if k != "()"})
    ours = _formatter()
    extras: list[dict[str, Any]] = [
        {},
        {"method": "GET", "path": "/é/\u2028", "status": 200, "duration_ms": 0.25, "seat": None},
        {"when": datetime.datetime(2024, 5, 6, 7, 8, 9), "raw": b"\x00\xff", "n": float("nan")},
        {"obj": _Opaque(), "nested": {"a": [1, (2, 3)], "b": {1, 2}}},
        {"failed": True, "request_id": "rq-1"},
    ]
    # records in one second, the next, and back: the time's cache never shows
    for created in (1_700_000_000.0, 1_700_000_000.999, 1_700_000_001.5, 1_699_999_999.004):
        for extra in extras:
            mine, other = _record(created, **extra), _record(created, **extra)
            line = ours.format(mine)
            if "obj" in extra:  # (an object without a JSON form is written by its repr)
                assert "_Opaque" in line
            assert line == theirs.format(other)
