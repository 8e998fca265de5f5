"""Links and lists that must agree with themselves, in a real browser against the real API:

* one bag count: the Explore panel kept on screen while another player scouts shows the same
  number of tiles in the bag as the table's header;
* a score breakdown opened at one table is closed at the next game's table;
* the Replays page lists the recent finished games, newest first, a page at a time;
* on a phone the replay's step buttons stay on screen while the board below is read.
"""

from __future__ import annotations

import json
import time
from typing import Any

import pytest

from .conftest import Site, call
from .helpers import PHONE, new_page

pytestmark = [pytest.mark.browser, pytest.mark.redis, pytest.mark.xdist_group("web")]


def _until_assign(pages: list[Any]) -> None:
    """Answer every decision before the first assign with its first choice, in each browser."""
    deadline = time.monotonic() + 90
    while time.monotonic() < deadline:
        kinds = [
            p.locator("form.decision").get_attribute("data-kind")
            if p.locator("form.decision").count()
            else None
            for p in pages
        ]
        if all(k == "assign" for k in kinds):
            return
        for page, kind in zip(pages, kinds, strict=True):
            if kind and kind != "assign":
                form = page.locator("form.decision")
                handle = form.element_handle()
                form.get_by_role("button", name="Confirm").click()
                for _ in range(100):
                    if not handle.evaluate("e => e.isConnected"):
                        break
                    time.sleep(0.05)
        time.sleep(0.2)
    raise AssertionError("no assign decision came")


def _assign_explore(page: Any) -> None:
    form = page.locator("form.decision[data-kind='assign']")
    form.locator("fieldset.choices").filter(has_text="Pick the worker").locator(
        "label.choice"
    ).first.click()
    phases = form.locator("fieldset.choices").filter(has_text="The phase it selects")
    phases.locator("input[data-value='explore']").check()
    form.get_by_role("button", name="Confirm").click()


def _bag_counts(page: Any) -> tuple[str, str]:
    panel = page.locator("form.decision[data-kind='explore'] [data-bag]").inner_text()
    return panel, page.locator(".bag-count").inner_text()


def test_the_explore_panel_and_the_header_count_the_same_bag(site: Site, browser: Any) -> None:
    game = call(site, "POST", "/games", {"seats": [{"kind": "human"}, {"kind": "human"}]})
    gid = game["game_id"]
    tokens = [
        call(site, "POST", f"/games/{gid}/seats/{n}/claim", {"name": ["Ada", "Grace"][n]})["token"]
        for n in (0, 1)
    ]
    ctxs, pages = [], []
    try:
        for n in (0, 1):
            ctx, page = new_page(browser)
            ctxs.append(ctx)
            # the seat's token is in the browser's storage before the page first loads
            stored = json.dumps({f"{gid}/{n}": tokens[n]})
            ctx.add_init_script(f"localStorage.setItem('rfg.tokens', JSON.stringify({stored}))")
            page.goto(site.url + f"/play/#/games/{gid}/seats/{n}")
            pages.append(page)
        _until_assign(pages)
        for page in pages:
            _assign_explore(page)
        ada, grace = pages
        ada.locator("form.decision[data-kind='explore']").wait_for(timeout=30000)
        grace.locator("form.decision[data-kind='explore']").wait_for(timeout=30000)
        before, header = _bag_counts(ada)
        assert before == header, (before, header)

        # Grace scouts: a tile leaves the bag while Ada's Explore panel stays on her screen
        form = grace.locator("form.decision[data-kind='explore']")
        form.locator("input[data-value^='scout:']").first.check()
        form.get_by_role("button", name="Confirm").click()
        deadline = time.monotonic() + 15
        while ada.locator(".bag-count").inner_text() == before:
            assert time.monotonic() < deadline, "the header never showed the scouted tile"
            time.sleep(0.1)
        panel, header = _bag_counts(ada)
        assert int(header) < int(before)
        assert panel == header, f"the Explore panel says {panel} tiles, the header {header}"
        for page in pages:
            assert not page.js_errors, page.js_errors
    finally:
        for ctx in ctxs:
            ctx.close()


def _new_bot_game(site: Site, page: Any) -> str:
    page.evaluate("location.hash = '#/'")
    page.get_by_role("heading", name="New game").wait_for()
    page.get_by_role("button", name="Create game and take my seat").click()
    page.wait_for_url("**/play/#/games/*/seats/0")
    return str(page.url.split("#/games/")[1].split("/")[0])


def test_a_score_breakdown_closes_when_the_table_shows_another_game(
    site: Site, browser: Any
) -> None:
    ctx, page = new_page(browser)
    try:
        page.goto(site.url + "/play/#/")
        first = _new_bot_game(site, page)
        mine = page.locator("section.seat.mine details.score")
        mine.locator("summary").click()
        page.locator("section.seat.mine ul.breakdown").wait_for(state="visible")
        page.wait_for_timeout(1500)  # the table is drawn again as the bots move: it stays open
        assert mine.evaluate("e => e.open")

        second = _new_bot_game(site, page)  # the same page (its script state), another game
        assert second != first
        page.locator("section.seat.mine details.score").wait_for()
        page.wait_for_timeout(1000)
        opened = page.eval_on_selector_all(
            "details.score", "els => els.filter((e) => e.open).length"
        )
        assert opened == 0, "a breakdown opened at the previous game's table is open at this one"
        assert not page.js_errors, page.js_errors
    finally:
        ctx.close()


def _finished_quickly(site: Site) -> str:
    """A game that is over at once: a person sits down and resigns (two seats: it ends)."""
    gid: str = call(site, "POST", "/games", {"seats": [{"kind": "human"}, {"kind": "human"}]})[
        "game_id"
    ]
    token = call(site, "POST", f"/games/{gid}/seats/0/claim", {"name": "Quick"})["token"]
    call(site, "POST", f"/games/{gid}/seats/0/resign", {}, token)
    return gid


def test_the_replays_page_lists_recent_finished_games_a_page_at_a_time(
    site: Site, browser: Any
) -> None:
    made = [_finished_quickly(site) for _ in range(11)]  # more than a page
    ctx, page = new_page(browser)
    try:
        page.goto(site.url + "/play/#/replay")
        page.get_by_role("heading", name="Recent finished games").wait_for()
        rows = page.locator(".recent-list li")
        rows.first.wait_for()
        first_page = rows.evaluate_all("els => els.map((e) => e.dataset.game)")
        assert first_page[0] == made[-1], "the newest finished game comes first"
        assert len(first_page) == 10
        page.get_by_role("link", name="Older games →").click()
        page.wait_for_url("**/play/#/replay?cursor=*")
        page.locator(".recent-list li").first.wait_for()
        second_page = page.locator(".recent-list li").evaluate_all(
            "els => els.map((e) => e.dataset.game)"
        )
        assert made[0] in second_page and not set(second_page) & set(first_page)

        # a listed game opens its replay
        page.evaluate("location.hash = '#/replay'")
        page.locator(f".recent-list li[data-game='{made[-1]}'] a").click()
        page.wait_for_url(f"**/play/#/replay/{made[-1]}")
        page.locator("#scrubber").wait_for()
        assert not page.js_errors, page.js_errors
    finally:
        ctx.close()


def test_on_a_phone_the_replay_steps_stay_in_reach_of_the_board(
    site: Site, browser: Any, finished_game: str
) -> None:
    ctx, page = new_page(browser, PHONE, touch=True)
    try:
        page.goto(site.url + f"/play/#/replay/{finished_game}")
        board = page.locator(".replay-board")
        board.locator("section.seat").first.wait_for(timeout=20000)
        controls = page.locator(".replay .controls")
        assert controls.bounding_box()["height"] < PHONE["height"] * 0.4
        # read the board well below the first screen, then step
        page.evaluate("window.scrollTo(0, document.body.scrollHeight / 2)")
        page.wait_for_timeout(200)
        step = page.get_by_role("button", name="next event")
        box = step.bounding_box()
        assert box and 0 <= box["y"] and box["y"] + box["height"] <= PHONE["height"], box
        at = board.get_attribute("data-at")
        step.tap()
        page.wait_for_function(
            "was => document.querySelector('.replay-board').dataset.at !== was", arg=at
        )
        shown = board.bounding_box()
        assert shown and shown["y"] < PHONE["height"] and shown["y"] + shown["height"] > 0, (
            "the board left the screen after a step"
        )
        assert not page.js_errors, page.js_errors
    finally:
        ctx.close()
