"""``RFG_DISPATCH=1`` on the app that cannot dispatch fails at start, naming the one that can.

``service:create_app()`` is the API alone (the service never imports the workers); only
``rfgcli.wsgi:create_app()`` attaches the workers' dispatcher. Served with ``RFG_DISPATCH=1``,
the former used to start and enqueue nothing: bot games crawled on the workers' sweep."""

from __future__ import annotations

import os
import subprocess
import sys
import uuid
from pathlib import Path

import pytest
from rq import Queue

import service
from rfgcli import wsgi

ROOT = Path(__file__).resolve().parents[2]
TWO_BOTS = {"seats": [{"kind": "human"}, {"kind": "bot", "bot": "random"}]}


def test_the_plain_factory_refuses_dispatch_and_names_the_wsgi_app(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    url = f"memory://{uuid.uuid4().hex}"
    with pytest.raises(ValueError, match=r"rfgcli\.wsgi:create_app\(\)"):
        service.create_app({"STORE_URL": url, "DISPATCH_TURNS": True})
    monkeypatch.setenv("RFG_DISPATCH", "1")  # as a host sets it
    with pytest.raises(ValueError, match="RFG_DISPATCH"):
        service.create_app({"STORE_URL": url})
    monkeypatch.setenv("RFG_DISPATCH", "0")
    assert service.create_app({"STORE_URL": url}).config["DISPATCH_TURNS"] is False


def test_the_wsgi_app_dispatches(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("RFG_DISPATCH", "1")
    app = wsgi.create_app({"STORE_URL": f"memory://{uuid.uuid4().hex}", "RATE_LIMITS": False})
    r = app.test_client().post("/games", json=TWO_BOTS)
    assert r.status_code == 201, r.get_json()
    b = app.extensions["rfg"]
    assert Queue(b.store.prefix, connection=b.client).count == 1  # the bot's turn, at once


def test_gunicorn_serving_the_plain_factory_with_dispatch_exits_at_start(tmp_path: Path) -> None:
    env = {
        **os.environ,
        "RFG_DISPATCH": "1",
        "RFG_STORE_URL": f"memory://{uuid.uuid4().hex}",
        "RFG_DATA_DIR": str(tmp_path),
    }
    env.pop("PROMETHEUS_MULTIPROC_DIR", None)
    done = subprocess.run(
        [
            sys.executable,
            "-m",
            "gunicorn",
            "--bind",
            "127.0.0.1:0",
            "--workers",
            "1",
            "service:create_app()",
        ],
        cwd=ROOT,
        env=env,
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert done.returncode != 0, done.stderr
    assert "rfgcli.wsgi:create_app()" in done.stderr, done.stderr
