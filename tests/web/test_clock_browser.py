"""A clock that warns and waits, in a real browser: a person creates a game with a 10 s clock from
the lobby (the form says what happens to a seat whose time runs out: away, "I'm back", by
default), then walks away. The decision panel counts down and warns when a quarter of the time is
left (an alert in an aria-live region); the table's policy plays each timed-out decision; after
three timeouts in a row the seat is away and a bot plays it; the person presses "I'm back", the
decision panel is theirs again with its countdown, and they play on by clicking. The final scores
and the replay say which decisions a bot made for them.

Screenshots, each at 1280x800 and at 390x844 (``-phone``), in ``conftest.SHOTS``: clock-warning
and clock-away.
"""

from __future__ import annotations

import time
from typing import Any

import pytest

from .conftest import Site, call
from .helpers import both_sizes, game_id
from .test_browser import _act, _page

pytestmark = [pytest.mark.browser, pytest.mark.redis, pytest.mark.xdist_group("web")]


def _until(what: str, check: Any, seconds: float) -> Any:
    """Wait for ``check()`` to give something true (an API condition), up to ``seconds``."""
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        got = check()
        if got:
            return got
        time.sleep(0.2)
    raise AssertionError(f"waited {seconds} s for {what}")


def test_a_ten_second_clock_warns_goes_away_and_waits_for_i_am_back(
    site: Site, browser: Any
) -> None:
    page = _page(browser)
    page.goto(site.url + "/play/#/")
    page.get_by_role("heading", name="New game").wait_for()
    for i in (1, 2, 3):  # you against one bot
        page.locator(f"select[data-seat='{i}']").select_option("none" if i > 1 else "bot:random")
    # the bots move a second apart, so the game is still on when the person is back
    page.locator("[name=bot_pace]").fill("1")
    choice = page.locator("fieldset.hand-over")
    assert choice.is_hidden()  # no clock, nothing to say
    page.locator("[name=per_decision]").fill("10")
    choice.wait_for()
    assert "I\u2019m back" in choice.inner_text() or "I'm back" in choice.inner_text()
    assert choice.locator("input[value=away]").is_checked()
    page.get_by_role("button", name="Create game and take my seat").click()
    page.wait_for_url("**/play/#/games/*/seats/0")
    gid = game_id(page)

    # the person walks away: the panel counts down, then warns with a quarter of the time left
    page.locator("form.decision").wait_for()
    clock = page.locator("[data-decision-clock]")
    clock.wait_for()
    assert "left" in clock.inner_text()
    warning = page.locator("[data-clock-warning]")
    warning.wait_for(timeout=20000)
    assert warning.get_attribute("role") == "alert"
    assert page.locator(".clock-warning-region[aria-live=assertive] [data-clock-warning]").count()
    assert "quarter" in warning.inner_text()
    both_sizes(page, "clock-warning")

    # three timeouts in a row: the seat is away, a bot plays it and the panel offers "I'm back"
    back = page.get_by_role("button", name="I'm back")
    back.wait_for(timeout=90000)
    assert page.get_by_role("heading", name="You are away").is_visible()
    assert call(site, "GET", f"/games/{gid}")["away"] == [0]
    made = _until(
        "a bot to play the away seat",
        lambda: (n := call(site, "GET", f"/games/{gid}")["bot_decisions"][0]) > 3 and n,
        60,
    )
    both_sizes(page, "clock-away")

    back.click()
    page.locator("section.away").wait_for(state="detached")
    assert call(site, "GET", f"/games/{gid}")["away"] == []

    # the person plays on: the decisions are theirs again, timed as before
    played = 0
    while played < 3:
        page.wait_for_selector("form.decision, section.scores", timeout=60000)
        if page.locator("section.scores").count():
            break
        assert page.locator("[data-decision-clock]").is_visible()
        form = page.locator("form.decision").element_handle()
        _act(page, form.get_attribute("data-kind"), played)
        page.wait_for_function("f => !f.isConnected", arg=form, timeout=20000)
        played += 1
    feed: list[Any] = []
    while True:
        page_ = call(site, "GET", f"/games/{gid}/events?limit=1000&after={len(feed)}")
        feed += page_["events"]
        if not page_["more"]:
            break
    mine = [x for x in feed if x["type"] == "CommandSubmitted" and x["event"]["seat"] == 0]
    actors = [x["actor"] for x in mine]
    assert actors[:3] == ["timeout"] * 3 and "seat:0" not in actors[:made]
    came = next(i for i, x in enumerate(mine) if x["event"].get("kind") == "back")
    assert mine[came]["actor"] == "seat:0" and set(actors[came:]) == {"seat:0"}
    summary = call(site, "GET", f"/games/{gid}")
    assert summary["away"] == [] and summary["bot_decisions"][0] >= made
    assert not page.js_errors, page.js_errors


def test_the_final_scores_and_the_replay_mark_what_a_bot_decided_for_a_person(
    site: Site, browser: Any
) -> None:
    """A seat whose 50 ms clock runs out once is handed over (``hand_over``): the bots finish the
    game at once. The final scores count the decisions a bot made for the person; the replay marks
    the timed-out step and the bot's steps for them, and no step of the bot seat."""
    game = call(
        site,
        "POST",
        "/games",
        {
            "seats": [{"kind": "human"}, {"kind": "bot", "bot": "random"}],
            "time_control": {"per_decision": 0.05},
            "abandon_after": 1,
            "hand_over": True,
        },
    )
    gid = game["game_id"]
    summary = _until(
        "the bots to finish the game",
        lambda: (g := call(site, "GET", f"/games/{gid}"))["status"] == "finished" and g,
        120,
    )
    assert summary["abandoned"] == [0] and summary["bot_decisions"][1] == 0
    made = summary["bot_decisions"][0]
    assert made > 10

    page = _page(browser)
    page.goto(f"{site.url}/play/#/watch/{gid}")
    scores = page.locator("section.scores")
    scores.wait_for(timeout=20000)
    assert scores.get_by_role("columnheader", name="Decisions a bot made for them").count() == 1
    assert scores.locator("tr[data-seat='0'] td[data-bot-decisions]").inner_text() == str(made)
    assert scores.locator("tr[data-seat='1'] td[data-bot-decisions]").inner_text() == "0"

    feed = call(site, "GET", f"/games/{gid}/events?limit=1000")["events"]
    submitted = [x for x in feed if x["type"] == "CommandSubmitted"]
    timeout = next(x for x in submitted if x["actor"] == "timeout")
    by_bot = next(x for x in submitted if x["actor"].startswith("bot:") and x["event"]["seat"] == 0)
    of_bot_seat = next(x for x in submitted if x["event"]["seat"] == 1)
    page.goto(f"{site.url}/play/#/replay/{gid}")
    scrubber = page.locator("#scrubber")
    scrubber.wait_for()
    now = page.locator("p.now-event")
    for item, mark in ((timeout, "timeout"), (by_bot, by_bot["actor"]), (of_bot_seat, None)):
        scrubber.fill(str(item["seq"] - 1))
        page.wait_for_function(
            "n => document.querySelector('output.where').textContent.startsWith(`Step ${n} `)",
            arg=item["seq"],
        )
        listed = page.locator(".replay-log li[aria-current='step'] [data-bot-decided]")
        if mark is None:
            assert now.locator("[data-bot-decided]").count() == 0 and listed.count() == 0
        else:
            assert now.locator("[data-bot-decided]").get_attribute("data-bot-decided") == mark
            assert listed.get_attribute("data-bot-decided") == mark
        if mark == "timeout":
            assert "time ran out" in now.inner_text()
    assert not page.js_errors, page.js_errors
