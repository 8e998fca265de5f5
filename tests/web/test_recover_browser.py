"""Getting a seat back in the browser: a friend sits down, loses their browser storage (a new
profile), and returns through the host's "New invite"; the browser that lost it is signed out.
Then the friend moves the seat to a phone with "Move to another device", signing that browser out.

Screenshots, at 1280x800 and 390x844 (``-phone``), in ``conftest.SHOTS``: reinvite-host and
move-link."""

from __future__ import annotations

import urllib.error
import urllib.request
from typing import Any

import pytest

from .conftest import SHOTS, Site
from .helpers import DESKTOP, PHONE, new_page, seat_a_friend, seat_token
from .test_friends_browser import _game, _quiet

pytestmark = [pytest.mark.browser, pytest.mark.redis, pytest.mark.xdist_group("web")]


def _both_sizes(page: Any, name: str, showing: Any) -> None:
    """Screenshots at the desktop size (``<name>.png``) and the phone's (``-phone``), each
    scrolled to ``showing``; the page is left at the size it had."""
    was = page.viewport_size
    for size, file in ((DESKTOP, f"{name}.png"), (PHONE, f"{name}-phone.png")):
        page.set_viewport_size(size)
        showing.scroll_into_view_if_needed()
        page.screenshot(path=str(SHOTS / file), full_page=False)
    page.set_viewport_size(was)


def _view_status(site: Site, gid: str, seat: int, token: str) -> int:
    req = urllib.request.Request(
        f"{site.url}/games/{gid}/seats/{seat}/view", headers={"Authorization": f"Bearer {token}"}
    )
    try:
        with urllib.request.urlopen(req, timeout=10) as resp:
            status: int = resp.status
            return status
    except urllib.error.HTTPError as exc:
        return exc.code


def test_a_friend_returns_by_a_new_invite_and_moves_to_a_phone(site: Site, browser: Any) -> None:
    host_ctx, host = new_page(browser)
    friend_ctx, friend = new_page(browser)
    fresh_ctx, fresh = new_page(browser)
    phone_ctx, phone = new_page(browser, PHONE)
    try:
        gid, link = seat_a_friend(site, host, friend)
        lost = seat_token(friend, gid, 1)

        # a new browser without the token: told how to come back
        fresh.goto(f"{site.url}/play/#/games/{gid}/seats/1")
        fresh.get_by_role("heading", name="Not your seat").wait_for()
        assert "new invite" in fresh.locator("main").inner_text()

        # the host's table offers a new invite for the claimed seat, asked twice
        again = host.get_by_role("button", name="New invite", exact=True)
        again.wait_for(timeout=15000)
        assert host.get_by_role("button", name="New invite", exact=True).count() == 1  # not seat 0
        again.click()
        host.get_by_role("button", name="Yes, new invite").click()
        box = host.locator("input.invite-link[data-seat='1']")
        box.wait_for()
        new_link = box.input_value()
        assert new_link != link and f"/play/#/join/{gid}/1/" in new_link
        assert "signed out" in host.locator("section.invites").inner_text()
        assert _view_status(site, gid, 1, lost) == 401
        _quiet(host)
        _both_sizes(host, "reinvite-host", host.locator("section.invites li[data-seat='1']"))

        # the browser that lost the seat says so (it looks again every second while no
        # stream is live, or when the stream ends with its token)
        friend.locator("[data-signed-out='1']").wait_for(timeout=20000)

        fresh.goto(new_link)
        fresh.get_by_role("heading", name="You are invited").wait_for()
        fresh.locator("form.join [name=name]").fill("Grace")
        fresh.get_by_role("button", name="Take my seat").click()
        fresh.wait_for_url(f"**/play/#/games/{gid}/seats/1")
        fresh.get_by_role("heading", name="You — Grace").wait_for()
        back = seat_token(fresh, gid, 1)
        assert _view_status(site, gid, 1, back) == 200
        assert _game(site, gid)["seats"][1]["name"] == "Grace"

        # the friend moves the seat to a phone: the link there, this browser signed out
        fresh.get_by_text("Move to another device").click()
        fresh.get_by_role("button", name="Make a move link").click()
        move_box = fresh.locator("input[aria-label='Move link for your seat']")
        move_box.wait_for()
        move_link = move_box.input_value()
        assert f"/play/#/move/{gid}/1/" in move_link
        _quiet(fresh)
        _both_sizes(fresh, "move-link", fresh.locator("details.move"))
        assert _view_status(site, gid, 1, back) == 200  # until the phone uses it
        phone.goto(move_link)
        phone.get_by_role("button", name="Move my seat here").click()
        phone.wait_for_url(f"**/play/#/games/{gid}/seats/1")
        phone.get_by_role("heading", name="You — Grace").wait_for()
        assert _view_status(site, gid, 1, back) == 401
        assert _view_status(site, gid, 1, seat_token(phone, gid, 1)) == 200

        # the move link works once
        host_ctx2, other = new_page(browser)
        try:
            other.goto(move_link)
            other.get_by_role("button", name="Move my seat here").click()
            error = other.locator("form.join p.error")
            error.wait_for()
            assert "used already" in error.inner_text()
        finally:
            host_ctx2.close()
        for page in (host, fresh, phone):
            assert not page.js_errors, page.js_errors
    finally:
        for ctx in (host_ctx, friend_ctx, fresh_ctx, phone_ctx):
            ctx.close()
