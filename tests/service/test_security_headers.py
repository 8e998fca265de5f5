"""Security headers on every page and answer (``service.headers``), and pages that need no inline
script or style to work under their Content-Security-Policy.

Before: ``/play/`` sent no Content-Security-Policy and could be framed by any site (no
``frame-ancestors``, no ``X-Frame-Options``); ``/docs`` sent no ``nosniff`` and started Swagger UI
from an inline script. The browser test (tests/web) checks that the pages work under the policy.
"""

from __future__ import annotations

import re

import pytest
from flask import Flask
from flask.testing import FlaskClient

from service.headers import PAGE_POLICY

PAGES = ["/play/", "/docs"]
NOT_PAGES = ["/", "/healthz", "/openapi.yaml", "/play/app.js", "/play/style.css", "/docs/docs.css"]


def _directives(policy: str) -> dict[str, list[str]]:
    out = {}
    for part in policy.split(";"):
        name, *values = part.split()
        out[name] = values
    return out


@pytest.fixture
def client(app: Flask) -> FlaskClient:
    return app.test_client()


@pytest.mark.parametrize("path", PAGES)
def test_every_page_has_a_csp_without_inline_script_and_cannot_be_framed(
    client: FlaskClient, path: str
) -> None:
    r = client.get(path)
    assert r.status_code == 200 and r.mimetype == "text/html"
    policy = _directives(r.headers["Content-Security-Policy"])
    assert policy["script-src"] == ["'self'"] and policy["style-src"] == ["'self'"]
    assert policy["frame-ancestors"] == ["'none'"] and policy["object-src"] == ["'none'"]
    assert r.headers["X-Frame-Options"] == "DENY"
    assert r.headers["X-Content-Type-Options"] == "nosniff"
    assert r.headers["Content-Security-Policy"] == PAGE_POLICY


@pytest.mark.parametrize("path", NOT_PAGES + ["/games/000000000000", "/no-such-route"])
def test_every_other_answer_is_nosniff_unframeable_and_runs_nothing(
    client: FlaskClient, path: str
) -> None:
    r = client.get(path, headers={"Accept": "application/json"})
    assert r.headers["X-Content-Type-Options"] == "nosniff", path
    assert r.headers["X-Frame-Options"] == "DENY", path
    if r.mimetype != "text/html":
        assert _directives(r.headers["Content-Security-Policy"])["default-src"] == ["'none'"]


def _inline(page: str) -> list[str]:
    """What a page has inline: script bodies, <style>, style="" and on...="" attributes."""
    found = [f"inline script {body.strip()[:40]!r}" for body in _SCRIPT.findall(page)]
    found += ["<style>"] * len(re.findall(r"<style\b", page, re.I))
    for tag in re.findall(r"<[a-zA-Z][^>]*>", page):
        found += [f"{tag[:30]}: {a}=" for a in _ATTR.findall(tag)]
    return [f for f in found if f != "inline script ''"]


_SCRIPT = re.compile(r"<script\b[^>]*>(.*?)</script>", re.I | re.S)
_ATTR = re.compile(r"\s(style|on[a-z]+)\s*=", re.I)


@pytest.mark.parametrize("path", PAGES)
def test_pages_have_no_inline_script_or_style(client: FlaskClient, path: str) -> None:
    found = _inline(client.get(path).get_data(as_text=True))
    assert found == [], found


def test_the_web_client_sets_no_inline_style_or_handler_attributes() -> None:
    """The client builds the DOM itself (``h``): a ``style`` or ``on...`` string attribute
    would be refused by the CSP (``h`` turns ``on...`` functions into listeners)."""
    from service.web import STATIC

    for js in STATIC.glob("*.js"):
        text = js.read_text(encoding="utf-8")
        assert not re.search(r"""setAttribute\(\s*["'](style|on\w+)["']""", text), js.name
        assert not re.search(r"""\b(eval|new Function)\s*\(""", text), js.name
