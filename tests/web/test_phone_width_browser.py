"""No page scrolls sideways on a phone: at 360x740 and 390x844 (touch screens) a person plays games
against a bot by tapping, and at every decision (Ship among them, Settle when one comes), on the
final scores, the lobby, a replay, the replays page and the ladder pages the document is no wider
than the viewport.
"""

from __future__ import annotations

from typing import Any

import pytest

from .conftest import Site
from .helpers import decisions, game_id, new_page

pytestmark = [pytest.mark.browser, pytest.mark.redis, pytest.mark.xdist_group("web")]

SIZES = {"360": {"width": 360, "height": 740}, "390": {"width": 390, "height": 844}}
WANTED = {"ship", "settle"}
LADDER = "phone-width"

# The document's width against the viewport's, and the elements that reach past the viewport's
# right edge (the deepest ones first), to say what stretched the page.
WIDTH = """() => {
  const vw = window.innerWidth, wide = [];
  for (const el of document.body.querySelectorAll("*")) {
    const r = el.getBoundingClientRect();
    if (r.right > vw + 0.5 && !el.querySelector("*:not(option)")) {
      wide.push(`${el.tagName.toLowerCase()}.${el.className} right=${Math.round(r.right)}`);
    }
  }
  return { scroll: document.documentElement.scrollWidth, inner: vw, wide: wide.slice(0, 6) };
}"""


# Where the table's parts lie on the page (px from its top), and its height.
LAYOUT = """() => {
  const top = (sel) => { const e = document.querySelector(sel); return e ? Math.round(e.getBoundingClientRect().top + scrollY) : null; };
  return { height: document.documentElement.scrollHeight, screen: innerHeight, decision: top("form.decision"),
           tableau: top("section.seat.mine .tableau"), opponents: top("section.seat:not(.mine)") };
}"""


def _fits(page: Any, where: str) -> None:
    w = page.evaluate(WIDTH)
    assert w["scroll"] <= w["inner"], (
        f"{where}: the page is {w['scroll']} px wide on a {w['inner']} px screen; "
        f"too wide: {w['wide']}"
    )


def _act(page: Any, kind: str, turn: int) -> None:
    """Tap through the decision: the selecting worker picks Settle, Produce, Settle and Ship in
    turn (so that the seat settles, makes goods and ships them); everything else as offered."""
    form = page.locator("form.decision")
    if kind == "assign":
        form.locator("fieldset.choices").filter(has_text="Pick the worker").locator(
            "label.choice"
        ).first.tap()
        phase = ("settle", "produce", "settle", "ship")[turn % 4]
        form.locator("fieldset.choices").filter(has_text="The phase it selects").locator(
            f"input[data-value='{phase}']"
        ).check()
    form.get_by_role("button", name="Confirm").tap()


def _play(page: Any, seen: set[str]) -> str:
    """Create a two-seat game (you against the heuristic bot) from the lobby and tap through it
    to the final scores, checking the width at every decision; the game's id."""
    page.goto(page.site.url + "/play/#/")
    page.get_by_role("heading", name="New game").wait_for()
    _fits(page, "the lobby")
    for seat in (2, 3):
        page.locator(f"select[data-seat='{seat}']").select_option("none")
    page.get_by_role("button", name="Create game and take my seat").tap()
    page.wait_for_url("**/play/#/games/*/seats/0")
    gid = game_id(page)
    turn = 0
    for kind in decisions(page, 240, by="tapping"):
        seen.add(kind)
        _fits(page, f"the {kind} decision")
        if kind == "assign":
            turn += 1
            if turn == 3:
                print(f"layout at {page.viewport_size}, round 3:", page.evaluate(LAYOUT))
        _act(page, kind, turn)
    _fits(page, "the final scores")
    return gid


@pytest.fixture(scope="module")
def ladder(site: Site) -> str:
    base = ("ladder", "--url", site.redis_url, "--prefix", site.prefix)
    site.rfg(*base, "create", LADDER, "--players", "2")
    for name in ("heuristic", "random"):
        site.rfg(*base, "add", LADDER, name, "--bot", name)
    site.rfg(*base, "run", LADDER, "--games", "2")
    return LADDER


@pytest.mark.parametrize("size", sorted(SIZES))
def test_no_page_scrolls_sideways_on_a_phone(
    site: Site, browser: Any, ladder: str, size: str
) -> None:
    ctx, page = new_page(browser, SIZES[size], touch=True)
    page.site = site
    try:
        seen: set[str] = set()
        games = [_play(page, seen)]
        while not WANTED <= seen and len(games) < 4:
            games.append(_play(page, seen))
        # a Settle decision comes only when the seat's settlers have a choice to make: seldom
        # enough that four games may miss it; its width is checked whenever one came
        assert "ship" in seen, f"{len(games)} games never reached Ship: {seen}"

        page.goto(f"{site.url}/play/#/replay/{games[0]}")
        page.locator(".replay .controls").wait_for(timeout=20000)
        page.locator(".replay-board section.seat").first.wait_for(timeout=20000)
        _fits(page, "a replay")
        page.goto(f"{site.url}/play/#/replay")
        page.get_by_role("heading", name="Replay viewer").wait_for()
        _fits(page, "the replays page")
        page.goto(f"{site.url}/play/#/ladders")
        page.get_by_role("link", name=ladder).wait_for()
        _fits(page, "the ladders page")
        page.get_by_role("link", name=ladder).tap()
        page.locator("table.ladder-games tbody tr").first.wait_for(timeout=20000)
        _fits(page, "a ladder's page")
        page.goto(f"{site.url}/play/#/watch/{games[-1]}")
        page.locator("section.scores").wait_for(timeout=20000)
        _fits(page, "a finished game watched")
        assert not page.js_errors, page.js_errors
    finally:
        ctx.close()
