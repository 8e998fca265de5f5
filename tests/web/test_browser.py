"""The web client in a real browser (Debian's Chromium driven by Playwright) against the real API,
Redis and ``rfg worker`` bots: a person creates a game against three bots and plays it to the final
scores by clicking only; a spectator page follows it live; the pages at phone size. (The replay
viewer and the ladder pages: ``test_replay_ladder_browser.py``.)

Screenshots go to ``conftest.SHOTS`` (docs/screenshots/ with ``make screenshots``: committed; the
README shows two of them).
"""

from __future__ import annotations

from typing import Any

import pytest

from .conftest import SHOTS, Site, call
from .helpers import DESKTOP, PHONE, decisions, game_id

pytestmark = [pytest.mark.browser, pytest.mark.redis, pytest.mark.xdist_group("web")]

SHOTS_WANTED = {"assign", "ship", "manage"}


def _page(browser: Any, viewport: dict[str, int] = DESKTOP) -> Any:
    page = browser.new_page(viewport=viewport)
    errors: list[str] = []
    page.on("pageerror", lambda exc: errors.append(str(exc)))
    # script errors only: a refused request (a 409 the client resends, say) is logged too
    page.on(
        "console",
        lambda msg: (
            errors.append(msg.text)
            if msg.type == "error" and not msg.text.startswith("Failed to load resource")
            else None
        ),
    )
    page.js_errors = errors
    return page


def _act(page: Any, kind: str, turn: int) -> None:
    """Answer the decision on screen the way a person would, by clicking: the first worker selects
    Produce and Ship in turn (so that the seat makes goods and ships them), the rest as offered."""
    form = page.locator("form.decision")
    if kind == "assign":
        form.locator("fieldset.choices").filter(has_text="Pick the worker").locator(
            "label.choice"
        ).first.click()
        phases = form.locator("fieldset.choices").filter(has_text="The phase it selects")
        phases.locator(f"input[data-value='{'ship' if turn % 2 else 'produce'}']").check()
        form.get_by_role("button", name="Confirm").click()
    else:  # explore: the first choice stocks (or scouts) with the first explorer
        form.get_by_role("button", name="Confirm").click()


def _new_game(site: Site, page: Any) -> str:
    """Create a game from the lobby's form with its defaults and take seat 0; its id."""
    page.goto(site.url + "/play/#/")
    page.get_by_role("heading", name="New game").wait_for()
    page.get_by_role("button", name="Create game and take my seat").click()
    page.wait_for_url("**/play/#/games/*/seats/0")
    return game_id(page)


def _play_to_the_end(page: Any, shot: set[str]) -> list[str]:
    """Click through every decision of the seat on screen until the final scores show; the
    decision kinds met, in order. The first decision of each wanted kind is photographed."""
    kinds: list[str] = []
    for kind in decisions(page, 300):
        kinds.append(kind)
        if kind in SHOTS_WANTED and kind not in shot:
            page.evaluate("document.getElementById('toast').classList.remove('show')")
            page.screenshot(path=str(SHOTS / f"table-{kind}.png"), full_page=False)
            shot.add(kind)
        _act(page, kind, kinds.count("assign"))
    return kinds


def test_a_person_plays_a_whole_game_against_three_bots_by_clicking(
    site: Site, browser: Any
) -> None:
    page = _page(browser)
    page.goto(site.url + "/")  # the URL `make run` prints: a browser lands on the client
    assert page.url == site.url + "/play/"
    assert call(site, "GET", "/")["links"]["play"] == "/play/"  # API clients still get the index
    page.get_by_role("heading", name="New game").wait_for()
    # the defaults are what a newcomer wants: you against heuristic, random, random
    assert page.locator("select[data-seat='1']").input_value() == "bot:heuristic"
    assert page.locator("select[data-seat='3']").input_value() == "bot:random"
    page.get_by_role("button", name="Create game and take my seat").click()
    page.wait_for_url("**/play/#/games/*/seats/0")
    gid = game_id(page)

    spectator = _page(browser)
    spectator.goto(f"{site.url}/play/#/watch/{gid}")
    spectator.get_by_text("● live").wait_for(timeout=15000)

    shot: set[str] = set()
    kinds = _play_to_the_end(page, shot)
    scores = page.locator("section.scores")
    assert "Final scores" in scores.inner_text()
    assert scores.locator("tbody tr").count() == 4
    summary = call(site, "GET", f"/games/{gid}")
    assert summary["status"] == "finished"
    winners = summary["winners"]
    assert scores.locator("tr.win").count() == len(winners)
    assert {"start_tiles", "assign", "explore", "manage"} <= set(kinds), kinds
    page.screenshot(path=str(SHOTS / "final-scores.png"), full_page=False)

    # the spectator saw the game live to its end: the same final scores, the last events
    spectator.locator("section.scores").wait_for(timeout=20000)
    final = call(site, "GET", f"/games/{gid}/view")
    assert spectator.locator(".live").inner_text() == "game over"
    assert spectator.locator("ol.log li").first.get_attribute("value") == str(final["version"])
    assert spectator.locator(".log li").count() >= 50, (
        "the spectator followed the game event by event"
    )

    # the dice are the server's secret, so a seat may end a game without a Ship decision (its
    # goods never met a shipper); the screenshots want one, so the person plays on a few games
    for _ in range(4):
        if SHOTS_WANTED <= shot:
            break
        _new_game(site, page)
        _play_to_the_end(page, shot)
    assert SHOTS_WANTED <= shot, f"five games never reached {SHOTS_WANTED - shot}"

    page.goto(site.url + "/play/#/")
    page.get_by_role("heading", name="Games").wait_for()
    assert page.get_by_text(gid).count() >= 1
    page.screenshot(path=str(SHOTS / "lobby.png"), full_page=False)
    assert not page.js_errors and not spectator.js_errors, page.js_errors + spectator.js_errors
    page.close()
    spectator.close()


def test_phone_size_and_keyboard(site: Site, browser: Any) -> None:
    """At 390x844 nothing overflows sideways; the first decisions can be made with the keyboard."""
    page = _page(browser, PHONE)
    page.goto(site.url + "/play/")
    page.get_by_role("heading", name="New game").wait_for()
    assert page.evaluate("document.documentElement.scrollWidth <= window.innerWidth + 1")
    page.locator("button.primary").focus()
    page.keyboard.press("Enter")
    page.wait_for_url("**/play/#/games/*/seats/0")
    form = page.locator("form.decision[data-kind='start_tiles']")
    form.wait_for(timeout=20000)
    assert page.evaluate("document.documentElement.scrollWidth <= window.innerWidth + 1")
    form.locator("input[type=radio]").first.focus()
    page.keyboard.press("ArrowDown")  # the other pair of start tiles
    form.get_by_role("button", name="Confirm").focus()
    page.keyboard.press("Enter")
    assign = page.locator("form.decision[data-kind='assign']")
    assign.wait_for(timeout=20000)
    # every die tells its colour in words (aria-label, title) and by a letter, not by colour alone
    first_die = assign.locator(".die").first
    assert first_die.get_attribute("aria-label").startswith("Home (white) die, showing ")
    assert first_die.locator("b").inner_text() == "H"
    page.screenshot(path=str(SHOTS / "phone-assign.png"), full_page=False)
    assert page.evaluate("document.documentElement.scrollWidth <= window.innerWidth + 1")
    assert not page.js_errors, page.js_errors
    page.close()
