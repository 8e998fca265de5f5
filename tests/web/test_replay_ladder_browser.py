"""The replay viewer, the ladder page and the lobby's live games in a real browser (Chromium driven
by Playwright) against the real API, Redis and ``rfg worker`` bots.

A game of bots is replayed as a table: stepped to the middle (by the scrubber, then by phase and by
round) and to the end, each step drawn from the server's view at that event - dice, credits,
construction stacks, phase strips - with the verdict on its log, from any seat's point of view,
and never a raw JSON text, a "null" or a die id. A ladder's page draws one rating chart for every
entrant and lists its games with links to replay them. A paced game of bots is listed in the lobby
to watch. Screenshots at 1280x800 and 390x844 go to ``conftest.SHOTS``.
"""

from __future__ import annotations

import json
import re
import time
import urllib.request
from typing import Any

import pytest

from .conftest import SHOTS, Site
from .helpers import DESKTOP, PHONE
from .test_browser import _page

pytestmark = [pytest.mark.browser, pytest.mark.redis, pytest.mark.xdist_group("web")]

BOTS = [{"kind": "bot", "bot": "heuristic"}, {"kind": "bot", "bot": "random"}]


def _call(site: Site, path: str, body: Any = None) -> Any:
    data = None if body is None else json.dumps(body).encode()
    req = urllib.request.Request(site.url + path, data=data, method="POST" if data else "GET")
    req.add_header("Content-Type", "application/json")
    with urllib.request.urlopen(req, timeout=10) as resp:
        return json.loads(resp.read())


def _finished_bot_game(site: Site) -> dict[str, Any]:
    """A game of two bots, played to its end by the workers (unpaced: a few seconds)."""
    gid = _call(site, "/games", {"seats": BOTS})["game_id"]
    deadline = time.monotonic() + 120
    while time.monotonic() < deadline:
        game: dict[str, Any] = _call(site, f"/games/{gid}")
        if game["status"] == "finished":
            return game
        time.sleep(0.3)
    raise AssertionError(f"game {gid} did not finish")


def _at(page: Any, seq: int) -> None:
    """Wait until the board shows the step at event ``seq``."""
    page.wait_for_selector(f".replay-board[data-at='{seq}']:not([aria-busy])", timeout=20000)


def _check_board(page: Any) -> str:
    """What every step's table must show, and must not; the board's text."""
    board = page.locator(".replay-board")
    text: str = board.inner_text()
    assert board.locator(".seat").count() == 2  # both seats' sides
    assert board.locator(".strip").count() == 2  # their phase strips
    assert board.locator(".die").count() > 0  # dice, by colour letter and face
    assert board.locator(".stack").count() == 4  # each seat's development and world stack
    assert "development stack" in text.lower() and "world stack" in text.lower()
    assert re.search(r"\$\d+", text), text  # credits
    assert re.search(r"VP", text), text
    whole = page.locator("main").inner_text()
    for bad in ("null", "undefined", '{"', "NaN"):
        assert bad not in whole, (bad, whole)
    assert not re.search(r"#\d", text), text  # no internal die ids
    return text


def test_a_replay_is_a_table_at_every_step(site: Site, browser: Any) -> None:
    game = _finished_bot_game(site)
    gid, total = game["game_id"], game["version"]
    page = _page(browser, DESKTOP)
    page.goto(f"{site.url}/play/#/replay/{gid}")
    badge = page.locator(".verdict .badge")
    badge.wait_for(timeout=30000)
    assert badge.get_attribute("data-verdict") == "ok", page.locator(".verdict").inner_text()
    _at(page, 1)
    where = page.locator("output.where")
    assert where.inner_text().startswith(f"Step 1 of {total}")
    # to the middle by the scrubber, then one phase on and one round on
    middle = total // 2
    page.locator("#scrubber").fill(str(middle - 1))
    _at(page, middle)
    assert where.inner_text().startswith(f"Step {middle} of {total}")
    _check_board(page)
    page.get_by_role("button", name="next phase").click()
    page.wait_for_function(
        f"() => Number(document.querySelector('#scrubber').value) > {middle - 1}"
    )
    phase_step = int(page.locator("#scrubber").input_value()) + 1
    _at(page, phase_step)
    phase_text = where.inner_text()
    assert re.search(r"(Explore|Develop|Settle|Produce|Ship|Manage|Assign|Game over)$", phase_text)
    page.get_by_role("button", name="next round").click()
    page.wait_for_function(
        f"() => Number(document.querySelector('#scrubber').value) > {phase_step - 1}"
    )
    round_step = int(page.locator("#scrubber").input_value()) + 1
    _at(page, round_step)
    assert where.inner_text().endswith("Assign") or where.inner_text().endswith("Game over")
    page.get_by_role("button", name="previous round").click()
    page.wait_for_function(
        f"() => Number(document.querySelector('#scrubber').value) < {round_step - 1}"
    )
    page.locator("#scrubber").fill(str(middle - 1))
    _at(page, middle)
    text = _check_board(page)
    assert "final scores" not in text.lower()
    page.evaluate(
        "window.scrollTo(0, document.querySelector('.verdict').getBoundingClientRect().top"
        " + window.scrollY - 8)"
    )
    page.screenshot(path=str(SHOTS / "replay.png"), full_page=False)
    # a seat's point of view: its own side first, drawn in full
    page.locator("#pov").select_option("0")
    page.wait_for_selector(".replay-board .seat.mine[data-seat='0']", timeout=20000)
    _check_board(page)
    page.locator("#pov").select_option("public")
    page.wait_for_selector(".replay-board .board:not(:has(.seat.mine))", timeout=20000)
    # the end: the final scores, the table as it ended
    page.get_by_role("button", name="last event").click()
    _at(page, total)
    end = _check_board(page)
    assert "final scores" in end.lower() and where.inner_text().endswith("Game over")
    assert not page.js_errors, page.js_errors
    page.close()


def test_a_replay_at_phone_size(site: Site, browser: Any) -> None:
    game = _finished_bot_game(site)
    gid, total = game["game_id"], game["version"]
    page = _page(browser, PHONE)
    page.goto(f"{site.url}/play/#/replay/{gid}")
    _at(page, 1)
    page.locator("#scrubber").fill(str(total // 2 - 1))
    _at(page, total // 2)
    _check_board(page)
    assert page.evaluate("document.documentElement.scrollWidth <= window.innerWidth + 1")
    page.evaluate(
        "window.scrollTo(0, document.querySelector('.replay .controls').getBoundingClientRect().top"
        " + window.scrollY - 8)"
    )
    page.evaluate("document.activeElement.blur()")
    page.screenshot(path=str(SHOTS / "replay-phone.png"), full_page=False)
    assert not page.js_errors, page.js_errors
    page.close()


def test_the_ladder_page_draws_one_chart_and_lists_its_games(site: Site, browser: Any) -> None:
    ladder = "web-demo"
    base = ("ladder", "--url", site.redis_url, "--prefix", site.prefix)
    site.rfg(*base, "create", ladder, "--players", "2")
    for name, bot in (("heuristic", "heuristic"), ("random", "random"), ("cautious", "random")):
        site.rfg(*base, "add", ladder, name, "--bot", bot)
    site.rfg(*base, "run", ladder, "--games", "5")
    listed = _call(site, f"/ladders/{ladder}/games")["games"]
    assert len(listed) == 5
    for viewport, shot in ((DESKTOP, "ladder.png"), (PHONE, "ladder-phone.png")):
        page = _page(browser, viewport)
        page.goto(f"{site.url}/play/#/ladders")
        page.get_by_role("link", name=ladder).click()
        page.locator("table.leaderboard").wait_for()
        assert page.locator("table.leaderboard tbody tr").count() == 3
        chart = page.locator("figure.chart")
        chart.wait_for(timeout=20000)
        assert chart.count() == 1  # one chart for every entrant, on one scale
        played = [
            e
            for e in ("heuristic", "random", "cautious")
            if any(e in g["entrants"] for g in listed)
        ]
        assert chart.locator("svg polyline, svg circle").count() >= len(played)
        assert int(chart.get_attribute("data-lines")) == len(played)
        assert chart.locator(".legend li").count() == 3
        rows = page.locator("table.ladder-games tbody tr")
        rows.first.wait_for()
        assert rows.count() == 5
        assert [rows.nth(i).get_attribute("data-game") for i in range(5)] == [
            g["game_id"] for g in listed
        ]
        replay = rows.first.get_by_role("link", name="Replay")
        assert replay.get_attribute("href") == f"#/replay/{listed[0]['game_id']}"
        assert page.evaluate("document.documentElement.scrollWidth <= window.innerWidth + 1")
        text = page.locator("main").inner_text()
        assert "null" not in text and "undefined" not in text
        page.evaluate(
            "window.scrollTo(0, document.getElementById('hist').getBoundingClientRect().top"
            " + window.scrollY - 8)"
        )
        page.screenshot(path=str(SHOTS / shot), full_page=False)
        if viewport is DESKTOP:  # its Replay link opens the replay of that game
            replay.click()
            _at(page, 1)
        assert not page.js_errors, page.js_errors
        page.close()


def test_the_lobby_lists_a_paced_game_of_bots_to_watch(site: Site, browser: Any) -> None:
    game = _call(site, "/games", {"seats": BOTS, "bot_pace_seconds": 5})
    gid = game["game_id"]
    assert game["bot_pace_seconds"] == 5
    page = _page(browser, DESKTOP)
    page.goto(f"{site.url}/play/#/")
    item = page.locator(f".live-games li[data-game='{gid}']")
    item.wait_for(timeout=20000)
    assert "every 5 s" in item.inner_text()
    item.get_by_role("link", name="Watch").click()
    page.wait_for_url(f"**/play/#/watch/{gid}")
    page.locator(".board .seat").first.wait_for(timeout=20000)
    assert not page.js_errors, page.js_errors
    page.close()
