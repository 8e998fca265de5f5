"""Playing with a friend in two browsers: the host creates a game with a seat for a friend and two
bots, makes the friend's invite link and sends it; the friend opens it in another browser, types a
name and sits down; both see each other's names. A third browser opening the used link is told it
was used as the page opens. Then the friend resigns and both see the game end by resignation; the
link now says the game is over. A second game between the host and an invited friend is played to
its end by clicking in both browsers.

Screenshots, each at 1280x800 and at 390x844 (``-phone``), in ``conftest.SHOTS``: invite-host, join,
join-used, resigned and friends-final.
"""

from __future__ import annotations

import json
import time
import urllib.request
from typing import Any

import pytest

from .conftest import Site
from .helpers import PHONE, both_sizes, game_id, new_page, seat_a_friend, wait_taken
from .test_browser import _act

pytestmark = [pytest.mark.browser, pytest.mark.redis, pytest.mark.xdist_group("web")]


def _game(site: Site, gid: str) -> Any:
    with urllib.request.urlopen(f"{site.url}/games/{gid}", timeout=10) as resp:
        return json.loads(resp.read())


def _quiet(page: Any) -> None:
    page.evaluate("document.getElementById('toast').classList.remove('show')")


def test_a_friend_joins_by_invite_link_under_a_name_and_the_link_works_once(
    site: Site, browser: Any
) -> None:
    host_ctx, host = new_page(browser)
    friend_ctx, friend = new_page(browser)
    late_ctx, late = new_page(browser, PHONE)
    try:
        host.goto(site.url + "/play/#/")
        host.get_by_role("heading", name="New game").wait_for()
        host.locator("#create-name").fill("Ada")
        host.locator("select[data-seat='1']").select_option("human")  # "A friend (invite by link)"
        # two seats, so that the friend's resignation below ends the game
        for other in host.locator("select[data-seat]").all()[2:]:
            other.select_option("none")
        host.get_by_role("button", name="Create game and take my seat").click()
        host.wait_for_url("**/play/#/games/*/seats/0")
        gid = game_id(host)
        host.get_by_role("heading", name="You — Ada").wait_for()

        host.get_by_role("button", name="Invite a friend").click()
        link_box = host.locator("input.invite-link[data-seat='1']")
        link_box.wait_for()
        link = link_box.input_value()
        assert f"/play/#/join/{gid}/1/" in link
        assert host.get_by_role("button", name="Copy link").count() == 1
        _quiet(host)
        both_sizes(host, "invite-host")
        assert _game(site, gid)["seats"][1]["invited"] is True

        friend.goto(link)
        friend.get_by_role("heading", name="You are invited").wait_for()
        assert "Ada invites you to seat 1" in friend.locator("form.join").inner_text()
        friend.locator("form.join [name=name]").fill("Grace")
        both_sizes(friend, "join")
        friend.get_by_role("button", name="Take my seat").click()
        friend.wait_for_url(f"**/play/#/games/{gid}/seats/1")
        assert "/join/" not in friend.url  # the used code left the address bar
        friend.get_by_role("heading", name="You — Grace").wait_for()
        assert friend.locator("section.seat h3", has_text="Ada").count() == 1

        # the host's table names the friend once they sat down (looked up again every few s)
        host.locator("section.seat h3", has_text="Grace").wait_for(timeout=15000)
        assert host.get_by_role("button", name="Invite a friend").count() == 0
        seats = _game(site, gid)["seats"]
        assert (seats[0]["name"], seats[1]["name"]) == ("Ada", "Grace")

        # the link works once: a third browser is told so as it opens, before typing a name
        late.goto(link)
        late.get_by_role("heading", name="This invite link was used").wait_for()
        assert "taken already" in late.locator("section.join-closed").inner_text()
        assert late.locator("form.join").count() == 0
        assert late.get_by_role("button", name="Take my seat").count() == 0
        both_sizes(late, "join-used")
        assert _game(site, gid)["seats"][1]["name"] == "Grace"

        # the friend resigns: the game ends for both, by resignation, the friend not winning
        friend.get_by_role("button", name="Resign").click()
        friend.get_by_role("button", name="Yes, resign").click()
        friend.locator("section.scores").wait_for(timeout=15000)
        assert "ended by resignation" in friend.locator("section.scores").inner_text()
        host.locator("section.scores").wait_for(timeout=15000)
        assert "ended by resignation" in host.locator("section.scores").inner_text()
        game = _game(site, gid)
        assert game["end_reason"] == "resigned" and 1 not in game["winners"]
        _quiet(host)
        both_sizes(host, "resigned")

        # the link of a finished game says the game is over, in a player's words
        late.goto(site.url + "/play/#/")
        late.get_by_role("heading", name="Lobby").wait_for()
        late.goto(link)
        late.get_by_role("heading", name="This game is over").wait_for()
        over = late.locator("section.join-closed").inner_text()
        assert "GET " not in over and "/games/" not in over
        assert late.get_by_role("link", name="Watch the replay").count() == 1
        for page in (host, friend, late):
            assert not page.js_errors, page.js_errors
    finally:
        for ctx in (host_ctx, friend_ctx, late_ctx):
            ctx.close()


def _play_both_to_the_end(pages: list[Any]) -> int:
    """Click through every decision of both seats, whichever is owed first, until both show the
    final scores; the number of decisions made."""
    made = 0
    assigns = [0] * len(pages)
    deadline = time.monotonic() + 600
    while time.monotonic() < deadline:
        if all(p.locator("section.scores").count() for p in pages):
            return made
        acted = False
        for i, page in enumerate(pages):
            form = page.locator("form.decision")
            if page.locator("section.scores").count() or not form.count():
                continue
            handle = form.element_handle()
            kind = handle.get_attribute("data-kind")
            if kind == "assign":
                assigns[i] += 1
            _act(page, kind, assigns[i])
            made += 1
            acted = True
            wait_taken(handle, kind)
        if not acted:
            time.sleep(0.1)
    raise AssertionError(f"the game did not end in time ({made} decisions made)")


def test_host_and_invited_friend_play_a_whole_game_to_the_end(site: Site, browser: Any) -> None:
    host_ctx, host = new_page(browser)
    friend_ctx, friend = new_page(browser)
    try:
        gid, _ = seat_a_friend(site, host, friend)

        assert _play_both_to_the_end([host, friend]) > 10
        for page in (host, friend):
            text = page.locator("section.scores").inner_text()
            assert "Ada" in text and "Grace" in text
        game = _game(site, gid)
        assert game["status"] == "finished" and game["end_reason"] not in ("resigned", "abandoned")
        _quiet(friend)
        both_sizes(friend, "friends-final")
        for page in (host, friend):
            assert not page.js_errors, page.js_errors
    finally:
        for ctx in (host_ctx, friend_ctx):
            ctx.close()
