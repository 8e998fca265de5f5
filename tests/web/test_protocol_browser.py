"""The table speaks the API's protocol, in a real browser against the real API:

* one command id per answer to a decision: an answer resent after a 409 is the same command
  (the same ``command_id``), and every answer names the decision it answers (``decision_id``);
* while the seat's stream is live the table is drawn from the stream (its events and the turn
  signal) and never polls the seat's view.
"""

from __future__ import annotations

import json
import time
import urllib.request
from typing import Any

import pytest

from .conftest import Site
from .test_browser import _act

pytestmark = [pytest.mark.browser, pytest.mark.redis, pytest.mark.xdist_group("web")]

DESKTOP = {"width": 1280, "height": 800}


def _call(site: Site, method: str, path: str, body: Any = None, token: str | None = None) -> Any:
    headers = {"Content-Type": "application/json"}
    if token:
        headers["Authorization"] = f"Bearer {token}"
    data = None if body is None else json.dumps(body).encode()
    req = urllib.request.Request(site.url + path, data=data, method=method, headers=headers)
    with urllib.request.urlopen(req, timeout=10) as resp:
        return json.loads(resp.read())


def _seat_page(site: Site, browser: Any, body: dict[str, Any]) -> tuple[Any, Any, str, str]:
    """A game created with ``body`` whose seat 0 this browser holds, its table open."""
    gid = _call(site, "POST", "/games", body)["game_id"]
    token = _call(site, "POST", f"/games/{gid}/seats/0/claim", {"name": "Ada"})["token"]
    ctx = browser.new_context(viewport=DESKTOP)
    stored = json.dumps({f"{gid}/0": token})
    ctx.add_init_script(f"localStorage.setItem('rfg.tokens', JSON.stringify({stored}))")
    page = ctx.new_page()
    errors: list[str] = []
    page.on("pageerror", lambda exc: errors.append(str(exc)))
    page.js_errors = errors
    return ctx, page, gid, token


def _gone(handle: Any, what: str) -> None:
    """Wait until the decision panel ``handle`` left the page (the server took its command)."""
    deadline = time.monotonic() + 30
    while handle.evaluate("e => e.isConnected"):
        error = handle.evaluate("e => e.querySelector('p.error').textContent")
        assert not error, f"{what} was refused: {error}"
        assert time.monotonic() < deadline, f"the {what} panel stayed after Confirm"
        time.sleep(0.05)


def test_an_answer_resent_after_a_409_is_the_same_command(site: Site, browser: Any) -> None:
    ctx, page, gid, token = _seat_page(
        site, browser, {"seats": [{"kind": "human"}, {"kind": "bot", "bot": "random"}]}
    )
    try:
        sent: list[dict[str, Any]] = []
        page.on(
            "request",
            lambda r: (
                sent.append(r.post_data_json)
                if r.method == "POST" and "/commands" in r.url
                else None
            ),
        )
        refused: list[str] = []

        def once_409(route: Any) -> None:
            # the first answer meets a 409 as if the game had moved before it arrived
            if refused:
                route.continue_()
                return
            refused.append(route.request.url)
            route.fulfill(
                status=409,
                content_type="application/problem+json",
                body=json.dumps(
                    {
                        "type": "/problems/version-conflict",
                        "title": "Version conflict",
                        "status": 409,
                        "detail": "the game moved on: nothing was stored",
                        "current_version": 1,
                    }
                ),
            )

        page.route("**/games/*/seats/0/commands", once_409)
        page.goto(site.url + f"/play/#/games/{gid}/seats/0")
        form = page.locator("form.decision")
        form.wait_for(timeout=30000)
        owed = _call(site, "GET", f"/games/{gid}/seats/0/view", token=token)["view"]["decision"]
        handle = form.element_handle()
        form.get_by_role("button", name="Confirm").click()
        _gone(handle, owed["kind"])

        assert refused, "the first answer never reached the route that refuses it"
        assert len(sent) == 2, sent
        first, again = sent
        assert first["command_id"] == again["command_id"], "the resent answer got a new command id"
        assert first["decision_id"] == again["decision_id"] == owed["decision_id"]
        assert first["command"] == again["command"]
        assert "expected_version" not in first
        # the server applied it: the seat owes another decision now (or none)
        now = _call(site, "GET", f"/games/{gid}/seats/0/view", token=token)["view"]["decision"]
        assert now is None or now["decision_id"] != owed["decision_id"]

        # the next decision is a new command with its own id
        page.locator("form.decision").wait_for(timeout=30000)
        form = page.locator("form.decision")
        handle = form.element_handle()
        _act(page, form.get_attribute("data-kind"), 0)
        _gone(handle, "the second decision")
        assert len(sent) == 3, sent
        assert sent[2]["command_id"] != first["command_id"]
        assert sent[2]["decision_id"] != first["decision_id"]
        assert page.js_errors == []
    finally:
        ctx.close()


def _quiet(site: Site, page: Any, gid: str) -> None:
    """Wait until the game waits on seat 0 alone (the bot decided: no event is coming) and the
    page showed the game's last event; then one tick of the page's clock, for the reads that
    event asked for to end."""
    deadline = time.monotonic() + 30
    while True:
        public = _call(site, "GET", f"/games/{gid}/view")
        last = page.locator("ol.log li").first.get_attribute("value")
        if list(public["view"].get("pending") or {}) == ["0"] and last == str(public["version"]):
            break
        assert time.monotonic() < deadline, "the bot never finished its decision"
        time.sleep(0.1)
    _ticks(page, 1)


def _ticks(page: Any, n: int) -> None:
    """Wait until the page's countdown showed ``n`` new values (it changes once a second)."""
    page.evaluate("window.seenClocks = new Set()")
    page.wait_for_function(
        """(n) => {
          const el = document.querySelector('[data-deadline]');
          if (el) window.seenClocks.add(el.textContent);
          return window.seenClocks.size > n;
        }""",
        arg=n,
        polling=100,
        timeout=20000,
    )


def test_a_live_table_does_not_poll_the_view(site: Site, browser: Any) -> None:
    ctx, page, gid, _token = _seat_page(
        site,
        browser,
        {
            "seats": [{"kind": "human"}, {"kind": "bot", "bot": "random"}],
            "time_control": {"per_decision": 600},
        },
    )
    try:
        reads: list[str] = []
        page.on(
            "request",
            lambda r: (
                reads.append(r.url)
                if r.method == "GET" and r.url.endswith("/seats/0/view")
                else None
            ),
        )
        page.goto(site.url + f"/play/#/games/{gid}/seats/0")
        page.get_by_text("● live").wait_for(timeout=15000)
        for turn in range(3):
            form = page.locator("form.decision")
            form.wait_for(timeout=30000)
            _quiet(site, page, gid)
            # three ticks of the page's clock: a polling table would have read the view three times
            before = len(reads)
            _ticks(page, 3)
            assert page.get_by_text("● live").count() == 1, "the stream dropped"
            assert len(reads) == before, (
                f"turn {turn}: the live table read its view while nothing happened"
            )
            handle = form.element_handle()
            _act(page, form.get_attribute("data-kind"), turn)
            _gone(handle, f"decision {turn}")
        assert page.js_errors == []
    finally:
        ctx.close()
