"""What every request goes through, as a client sees it: the answer's headers in their order and
the charset check of a body's Content-Type."""

from __future__ import annotations

import pytest

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
