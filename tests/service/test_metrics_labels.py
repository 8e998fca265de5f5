"""/metrics stays bounded whatever clients send: an invented HTTP method is counted as ``other``,
an unknown path as the one route ``unmatched``, and no request makes a new series (every label of
every metric checked against a fixed set)."""

from __future__ import annotations

import re
from http import HTTPStatus

from flask import Flask

from .conftest import ValidatingClient

SERIES = re.compile(r"^(rfg_[a-z_]+)\{(.*)\} ")
METHODS = {"GET", "HEAD", "POST", "PUT", "PATCH", "DELETE", "OPTIONS"}
LABEL = re.compile(r'([a-z_]+)="((?:[^"\\]|\\.)*)"')


def series(api: ValidatingClient) -> dict[str, list[dict[str, str]]]:
    """Every ``rfg_*`` series of the exposition: metric name -> the label sets."""
    out: dict[str, list[dict[str, str]]] = {}
    for line in api.get("/metrics").get_data(as_text=True).splitlines():
        m = SERIES.match(line)
        if m:
            out.setdefault(m.group(1), []).append(dict(LABEL.findall(m.group(2))))
    return out


def test_invented_methods_and_paths_make_no_new_series(app: Flask, api: ValidatingClient) -> None:
    def odd(i: int) -> None:
        api.open("/healthz", method=f"INVENTED{i}", validate=False)
        api.open(f"/nothing/here/{i}", method="GET", validate=False)
        api.open(f"/x{i}", method=f"M{i}", validate=False)
        api.open(f"/x{i}", method="TRACE", validate=False)
        api.open(f"/games/nosuch{i}", method="GET", validate=False)
        api.open(f"/games/nosuch{i}", method=f"LOCK{i}", validate=False)

    # (the registry is the process's: series other tests made are not this test's to judge)
    first = series(api).get("rfg_http_requests_total", [])
    others = {tuple(sorted(labels.items())) for labels in first}
    odd(0)  # the series such requests use exist now (and that of /metrics itself)
    series(api)
    before = series(api)
    for i in range(1, 300):
        odd(i)
    after = series(api)
    assert {k: len(v) for k, v in after.items()} == {k: len(v) for k, v in before.items()}

    requests = after["rfg_http_requests_total"]
    assert {"method": "other", "route": "unmatched", "status": "405"} in requests
    assert {"method": "GET", "route": "unmatched", "status": "404"} in requests
    routes = {r.rule for r in app.url_map.iter_rules()} | {"unmatched"}
    statuses = {str(s.value) for s in HTTPStatus} | {"other"}
    for labels in requests:
        if tuple(sorted(labels.items())) in others:
            continue
        assert labels["method"] in {*METHODS, "other"}, labels
        assert labels["route"] in routes, labels
        assert labels["status"] in statuses, labels
    fixed = {
        "rfg_commands_total": {
            "result": {"applied", "duplicate", "conflict", "rejected", "refused", "error"}
        },
        "rfg_job_latency_seconds_bucket": {"kind": {"bot", "timeout"}},
        "rfg_job_latency_seconds_count": {"kind": {"bot", "timeout"}},
        "rfg_job_latency_seconds_sum": {"kind": {"bot", "timeout"}},
        "rfg_games": {"status": {"open", "active", "finished"}},
        "rfg_queue_jobs": {"state": {"queued", "scheduled", "started", "failed"}},
    }
    for name, labels_of in after.items():
        for labels in labels_of:
            for label, allowed in fixed.get(name, {}).items():
                assert labels[label] in allowed, (name, labels)
