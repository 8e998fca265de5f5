"""The table on a phone: at 390x844 and 360x740 (touch screens) a person plays a game against the
lobby's three bots by tapping, and at every decision

* a strip of the opponents right under the decision panel shows each one's faction, running score
  and credits as the API's view has them, and, once the phases are revealed, the phase each chose;
* the top of the person's own tableau lies within two screens (2 x the viewport's height) of
  the top of the decision panel, where the table starts (the page's header is above it; a late
  round's assignment panel with a full cup is the tallest, so the bound is from the panel);
* the page is exactly as wide as the screen.

The opponents' full boards stay on the page, folded under their names: a name in the strip opens
that opponent's board. At 1280x800 the strip stands beside the decision panel and every board is
open.

Screenshots (``conftest.SHOTS``): the first two screens at a decision, phone-table-390 and
phone-table-360.
"""

from __future__ import annotations

import json
import urllib.request
from typing import Any

import pytest

from .conftest import SHOTS, Site
from .helpers import DESKTOP, decisions, game_id, new_page
from .test_phone_width_browser import WIDTH, _act

pytestmark = [pytest.mark.browser, pytest.mark.redis, pytest.mark.xdist_group("web")]

SIZES = {"360": {"width": 360, "height": 740}, "390": {"width": 390, "height": 844}}
PHASE_NAMES = {
    "explore": "Explore",
    "develop": "Develop",
    "settle": "Settle",
    "produce": "Produce",
    "ship": "Ship",
}

# Where the table's parts lie, in px from the top of the page (the tableau: its top edge).
LAYOUT = """() => {
  const top = (sel) => { const e = document.querySelector(sel); return e ? Math.round(e.getBoundingClientRect().top + scrollY) : null; };
  return { screen: innerHeight, height: document.documentElement.scrollHeight, decision: top("form.decision"),
           strip: top("section.opponents"), tableau: top("section.seat.mine .tableau") };
}"""

# What the strip shows of each opponent, by seat.
STRIP = """() => Object.fromEntries([...document.querySelectorAll("section.opponents li.opponent")].map((li) => [
  li.dataset.seat,
  { name: li.querySelector("button.opponent-name").textContent,
    faction: li.querySelector(".faction").textContent,
    score: li.querySelector("[data-score]").textContent, credits: li.querySelector("[data-credits]").textContent,
    chose: li.querySelector(".chose") ? li.querySelector(".chose").dataset.phase : null,
    chose_words: li.querySelector(".chose") ? li.querySelector(".chose").textContent : null },
]))"""


def _view(site: Site, gid: str) -> dict[str, Any]:
    with urllib.request.urlopen(f"{site.url}/games/{gid}/view", timeout=10) as resp:
        view: dict[str, Any] = json.loads(resp.read())["view"]
    return view


def _exactly_as_wide(page: Any, where: str) -> None:
    w = page.evaluate(WIDTH)
    assert w["scroll"] == w["inner"], (
        f"{where}: the page is {w['scroll']} px wide on a {w['inner']} px screen; "
        f"too wide: {w['wide']}"
    )


def _strip_matches(page: Any, site: Site, gid: str, kind: str) -> bool:
    """The strip against the public view: faction, score and credits of every opponent (they do
    not change while this seat owes a decision of the assign step), the phase each chose once
    revealed (fixed for the round, which cannot end while this seat decides). Whether the chosen
    phases were checked."""
    view = _view(site, gid)
    strip = page.evaluate(STRIP)
    others = [p for p in view["players"] if p["seat"] != 0]
    assert sorted(strip) == sorted(str(p["seat"]) for p in others), strip
    revealed = bool(view["phases"])
    for p in others:
        row = strip[str(p["seat"])]
        assert row["faction"] == p["faction"]["name"], (row, p["faction"])
        if kind == "assign":
            assert row["score"] == f"Score {p['score']['total']}", (row, p["score"])
            assert row["credits"] == f"${p['credits']}", (row, p["credits"])
            assert row["chose"] is None, f"a phase shows before the reveal: {row}"
        elif revealed:
            assert row["chose"] == p["selected"], (row, p["selected"])
            assert row["chose_words"] == f"chose {PHASE_NAMES[p['selected']]}", row
    return revealed and kind != "assign"


def _boards_fold_and_open(page: Any, gid: str, site: Site) -> None:
    """Every opponent's board is on the page, folded; a tap on a name in the strip opens that
    board (with its running score), a tap on its summary folds it again."""
    boards = page.locator("details.opponent-board")
    assert boards.count() == 3
    assert page.locator("details.opponent-board[open]").count() == 0
    first = page.locator("section.opponents li.opponent").first
    seat = first.get_attribute("data-seat")
    first.locator("button.opponent-name").tap()
    board = page.locator(f"details.opponent-board[data-seat='{seat}'][open]")
    board.wait_for()
    panel = board.locator(f"section.seat[data-seat='{seat}']")
    panel.locator(".tableau").wait_for(state="visible")
    score = next(p for p in _view(site, gid)["players"] if str(p["seat"]) == seat)["score"]
    assert panel.locator("details.score").get_attribute("data-score") == str(score["total"])
    page.locator(f"details.opponent-board[data-seat='{seat}'] > summary").tap()
    page.locator(f"details.opponent-board[data-seat='{seat}']:not([open])").wait_for(
        state="attached"
    )
    page.evaluate("window.scrollTo(0, 0)")


def _play(site: Site, page: Any, size: str) -> tuple[list[str], int]:
    """Create a game against the lobby's three bots, tap through it to the final scores checking
    the table at every decision; the decision kinds met and how often the chosen phases were
    checked."""
    page.goto(site.url + "/play/#/")
    page.get_by_role("heading", name="New game").wait_for()
    page.get_by_role("button", name="Create game and take my seat").tap()
    page.wait_for_url("**/play/#/games/*/seats/0")
    gid = game_id(page)
    kinds: list[str] = []
    chosen = 0
    for kind in decisions(page, 420, by="tapping"):
        kinds.append(kind)
        where = f"the {kind} decision (round {kinds.count('assign')})"
        _exactly_as_wide(page, where)
        at = page.evaluate(LAYOUT)
        assert at["strip"] is not None and at["tableau"] is not None, at
        assert at["decision"] < at["strip"] < at["tableau"], f"{where}: {at}"
        assert at["tableau"] - at["decision"] <= 2 * at["screen"], (
            f"{where}: the own tableau starts {at['tableau'] - at['decision']} px below the "
            f"decision panel's top on a {at['screen']} px screen: {at}"
        )
        chosen += _strip_matches(page, site, gid, kind)
        if kind == "assign" and kinds.count("assign") == 1:
            _boards_fold_and_open(page, gid, site)
        if kind == "assign" and kinds.count("assign") == 3:
            page.evaluate("window.scrollTo(0, 0)")
            page.screenshot(
                path=str(SHOTS / f"phone-table-{size}.png"),
                clip={"x": 0, "y": 0, "width": SIZES[size]["width"], "height": 2 * at["screen"]},
                full_page=True,
            )
        _act(page, kind, kinds.count("assign"))
    _exactly_as_wide(page, "the final scores")
    return kinds, chosen


@pytest.mark.parametrize("size", sorted(SIZES))
def test_the_phone_table_shows_the_opponents_and_your_side_in_two_screens(
    site: Site, browser: Any, size: str
) -> None:
    ctx, page = new_page(browser, SIZES[size], touch=True)
    try:
        kinds, chosen = _play(site, page, size)
        assert kinds.count("assign") >= 3 and chosen, (chosen, kinds)
        assert not page.js_errors, page.js_errors
    finally:
        ctx.close()


def test_the_desktop_table_puts_the_strip_beside_the_decision(site: Site, browser: Any) -> None:
    ctx, page = new_page(browser, DESKTOP)
    try:
        page.goto(site.url + "/play/#/")
        page.get_by_role("heading", name="New game").wait_for()
        page.get_by_role("button", name="Create game and take my seat").click()
        page.wait_for_url("**/play/#/games/*/seats/0")
        page.locator("form.decision").wait_for(timeout=60000)
        page.locator("section.opponents li.opponent").first.wait_for()
        panel = page.locator("form.decision").bounding_box()
        strip = page.locator("section.opponents").bounding_box()
        assert strip["x"] >= panel["x"] + panel["width"], (panel, strip)
        assert abs(strip["y"] - panel["y"]) < 2, (panel, strip)
        assert page.locator("details.opponent-board[open]").count() == 3
        mine = page.locator("section.seat.mine").bounding_box()
        first = page.locator("details.opponent-board").first.bounding_box()
        assert mine["y"] < first["y"], (mine, first)
        _exactly_as_wide(page, "the desktop table")
        assert not page.js_errors, page.js_errors
    finally:
        ctx.close()
