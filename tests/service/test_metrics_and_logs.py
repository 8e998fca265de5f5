"""/metrics matches openapi.yaml and counts what happened; every response carries a request id
and the log records written while serving a request carry its context."""

from __future__ import annotations

import logging

import pytest

from bots import get_bot
from engine.rng import Rng

from .conftest import ValidatingClient, bearer, new_game


def _value(text: str, line_start: str) -> float:
    for line in text.splitlines():
        if line.startswith(line_start):
            return float(line.rsplit(" ", 1)[1])
    return 0.0


def test_metrics_follow_the_contract_and_count_commands(api: ValidatingClient) -> None:
    before = api.get("/metrics").get_data(as_text=True)
    gid, tokens = new_game(api, players=2)
    view = api.get(f"/games/{gid}/seats/0/view", headers=bearer(tokens[0])).get_json()
    bad = api.post(
        f"/games/{gid}/seats/0/commands",
        headers=bearer(tokens[0]),
        json={
            "command_id": "m1",
            "expected_version": view["version"] + 5,
            "command": get_bot("random").act(view["view"]["decision"], None, Rng(1)),
        },
    )
    assert bad.status_code == 409
    r = api.get("/metrics")
    assert r.status_code == 200 and r.mimetype == "text/plain"
    text = r.get_data(as_text=True)
    key = 'rfg_commands_total{result="conflict"}'
    assert _value(text, key) == _value(before, key) + 1
    assert (
        _value(text, "rfg_store_append_seconds_count")
        >= _value(before, "rfg_store_append_seconds_count") + 1
    )
    assert 'rfg_games{status="active"}' in text
    assert "rfg_job_latency_seconds_bucket" in text and "rfg_queue_jobs" in text


@pytest.mark.parametrize(
    "sent,kept", [("abc-123", True), ("bad id with spaces", False), ("x" * 300, False)]
)
def test_every_response_carries_a_request_id(api: ValidatingClient, sent: str, kept: bool) -> None:
    r = api.get("/healthz", headers={"X-Request-ID": sent})
    rid = r.headers["X-Request-ID"]
    assert (rid == sent) is kept and 1 <= len(rid) <= 128 and " " not in rid


def test_log_records_carry_the_request_context(
    api: ValidatingClient, caplog: pytest.LogCaptureFixture
) -> None:
    from service.logs import RequestContextFilter

    gid, tokens = new_game(api, players=2)
    view = api.get(f"/games/{gid}/seats/1/view", headers=bearer(tokens[1])).get_json()
    handler_filter = RequestContextFilter()
    caplog.handler.addFilter(handler_filter)
    with caplog.at_level(logging.INFO, logger="service.access"):
        api.post(
            f"/games/{gid}/seats/1/commands",
            headers={**bearer(tokens[1]), "X-Request-ID": "rq-9"},
            json={
                "command_id": "cmd-9",
                "expected_version": view["version"],
                "command": get_bot("random").act(view["view"]["decision"], None, Rng(1)),
            },
        )
    caplog.handler.removeFilter(handler_filter)
    [rec] = [r for r in caplog.records if getattr(r, "request_id", None) == "rq-9"]
    assert (rec.game_id, rec.seat, rec.command_id) == (gid, 1, "cmd-9")  # type: ignore[attr-defined]
    assert rec.route == "/games/<gid:game_id>/seats/<int:seat>/commands"  # type: ignore[attr-defined]


def test_queue_depth_is_read_from_the_queue_redis() -> None:
    """With RFG_QUEUE_URL the jobs live on another Redis: /metrics counts them there."""
    import uuid

    from rq import Queue

    import events.store
    from tests.service.conftest import make_app

    store_url, queue_url = f"memory://{uuid.uuid4().hex}", f"memory://{uuid.uuid4().hex}"
    app = make_app(store_url, QUEUE_URL=queue_url)
    Queue("rfg", connection=events.store.connect(queue_url)).enqueue("math.floor", 1.5)
    text = app.test_client().get("/metrics").get_data(as_text=True)
    assert 'rfg_queue_jobs{queue="rfg",state="queued"} 1.0' in text
