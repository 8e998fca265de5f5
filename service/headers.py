"""Security headers on every response the app makes (an ``after_request`` hook).

* ``X-Content-Type-Options: nosniff`` everywhere: a browser takes each body as the type it is
  sent as (a JSON answer or an uploaded-looking text is never run as a script or a page);
* ``X-Frame-Options: DENY`` and CSP ``frame-ancestors 'none'``: no page of this server can be
  framed by another site (clickjacking a seat's buttons);
* ``Content-Security-Policy`` on HTML (the web client under ``/play/``, the docs page ``/docs``):
  scripts, styles, images and requests from this server only, no inline script or style (the
  pages load theirs from files), no plugins, no ``<base>``, forms post here only. Every other
  body gets ``default-src 'none'``: an SVG chart or a JSON answer opened as a page runs nothing.

A view that sets a header itself keeps its value.
"""

from __future__ import annotations

from flask import Flask, Response

PAGE_POLICY = (
    "default-src 'self'; script-src 'self'; style-src 'self'; img-src 'self' data:; "
    "font-src 'self'; connect-src 'self'; object-src 'none'; base-uri 'none'; "
    "form-action 'self'; frame-ancestors 'none'"
)
"""The CSP of the HTML pages (``data:`` images: Swagger UI's icons are data URLs in its CSS)."""
OTHER_POLICY = "default-src 'none'; frame-ancestors 'none'"
"""The CSP of every other body: nothing is loaded or run if one is opened as a page."""

_ALWAYS = {"X-Content-Type-Options": "nosniff", "X-Frame-Options": "DENY"}


def init_app(app: Flask) -> None:
    app.after_request(secure)


def secure(resp: Response) -> Response:
    """Add the security headers to ``resp`` (those it does not set itself)."""
    headers = resp.headers
    for name, value in _ALWAYS.items():
        if name not in headers:
            headers[name] = value
    if "Content-Security-Policy" not in headers:
        html = resp.mimetype == "text/html"
        headers["Content-Security-Policy"] = PAGE_POLICY if html else OTHER_POLICY
    return resp
