"""Three friends play one game on their phones: the host (Ada, 390x844) and two friends (Grace,
360x740, and Linus, 390x844), each on a touch screen in a browser of their own, play a 3-seat
game with a 10 s clock through the real pages.

* Grace's browser loses its storage mid-game and she comes back through the host's "New invite",
  in the same seat under the same name.
* Ada steps away for 40 s: her decision panel warns with a quarter of her time left, after three
  timeouts in a row she is away and a bot plays her seat, then she presses "I'm back" and plays
  on; the final scores count the decisions a bot made for her.
* Linus resigns: he leaves the game, Ada and Grace play on to its end, and the final table names
  him and the round he resigned in.

At every decision the page is exactly as wide as the screen. Each step is photographed at 360x740
and 390x844 (``conftest.SHOTS``: three-friends-<step>-360.png and -390.png; the README shows them):
table, signed-out, reinvite, back, clock-warning, away, back-from-away, resigned and final.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from typing import Any

import pytest

from .conftest import SHOTS, Site
from .helpers import new_page, seat_token, wait_taken
from .test_friends_browser import _game, _quiet
from .test_phone_width_browser import _fits
from .test_recover_browser import _view_status

pytestmark = [pytest.mark.browser, pytest.mark.redis, pytest.mark.xdist_group("web")]

SIZES = {"360": {"width": 360, "height": 740}, "390": {"width": 390, "height": 844}}
NAMES = ("Ada", "Grace", "Linus")
PHASES = ("produce", "ship", "settle")


def _shots(page: Any, step: str, showing: Any = None) -> None:
    """The page at both phone sizes, each as wide as the screen, photographed scrolled to
    ``showing`` (else to its top: ``three-friends-<step>-<width>.png``); the page is left at the
    size it had."""
    was = page.viewport_size
    _quiet(page)
    for width, size in SIZES.items():
        page.set_viewport_size(size)
        if showing is None:
            page.evaluate("scrollTo(0, 0)")
        else:
            showing.scroll_into_view_if_needed()
        _fits(page, f"{step} at {width} px")
        page.screenshot(path=str(SHOTS / f"three-friends-{step}-{width}.png"), full_page=False)
    page.set_viewport_size(was)


def _tap(page: Any, kind: str, phase: str) -> None:
    """Tap through the decision on screen: the first worker selects ``phase``, every good shipped
    is consumed for VP (so that the VP pool runs out soon), everything else as offered."""
    form = page.locator("form.decision")
    if kind == "assign":
        form.locator("fieldset.choices").filter(has_text="Pick the worker").locator(
            "label.choice"
        ).first.tap()
        form.locator("fieldset.choices").filter(has_text="The phase it selects").locator(
            f"input[data-value='{phase}']"
        ).check()
    if kind == "ship":
        for action in form.locator("input[data-value='consume']").all():
            action.check()
    form.get_by_role("button", name="Confirm").tap()


class Table:
    """The three browsers at one game: each seat's page, and how many times it assigned."""

    def __init__(self, pages: list[Any]) -> None:
        self.pages = pages
        self.assigns = [0] * len(pages)
        self.made = 0

    def play(self, until: Callable[[], bool], seats: tuple[int, ...] = (0, 1, 2)) -> None:
        """Tap through the decisions of ``seats``, whichever is owed first, until ``until()``
        holds; at every decision the page is as wide as its screen."""
        deadline = time.monotonic() + 240
        while not until():
            assert time.monotonic() < deadline, f"the game stalled ({self.made} decisions made)"
            acted = False
            for seat in seats:
                if until():
                    return
                page = self.pages[seat]
                assert not page.locator("section.away").count(), (
                    f"{NAMES[seat]}'s 10 s clock ran out three times in a row unasked"
                )
                form = page.locator("form.decision")
                if page.locator("section.scores").count() or not form.count():
                    continue
                handle = form.element_handle()
                kind = handle.get_attribute("data-kind")
                _fits(page, f"{NAMES[seat]}'s {kind} decision")
                if kind == "assign":
                    self.assigns[seat] += 1
                # the seats select different phases each round: every round produces and ships
                _tap(page, kind, PHASES[(seat + self.assigns[seat]) % len(PHASES)])
                self.made += 1
                acted = True
                wait_taken(handle, kind, by=f"tapping in {NAMES[seat]}'s browser")
            if not acted:
                time.sleep(0.1)


def _sit_down(page: Any, link: str, name: str, gid: str, seat: int) -> None:
    page.goto(link)
    page.get_by_role("heading", name="You are invited").wait_for()
    page.locator("form.join [name=name]").fill(name)
    page.get_by_role("button", name="Take my seat").tap()
    page.wait_for_url(f"**/play/#/games/{gid}/seats/{seat}")
    page.get_by_role("heading", name=f"You — {name}").wait_for()


def test_three_friends_play_on_phones_through_a_lost_seat_a_clock_and_a_resignation(
    site: Site, browser: Any
) -> None:
    made = [
        new_page(browser, SIZES["390"], touch=True),
        new_page(browser, SIZES["360"], touch=True),
        new_page(browser, SIZES["390"], touch=True),
    ]
    ctxs = [c for c, _ in made]
    ada, grace, linus = pages = [p for _, p in made]
    try:
        ada.goto(site.url + "/play/#/")
        ada.get_by_role("heading", name="New game").wait_for()
        _fits(ada, "the lobby")
        ada.locator("#create-name").fill("Ada")
        for seat, kind in ((1, "human"), (2, "human"), (3, "none"), (4, "none")):
            ada.locator(f"select[data-seat='{seat}']").select_option(kind)
        ada.locator("[name=per_decision]").fill("10")
        # the form says what a seat's timeouts lead to: away until "I'm back", unless chosen
        assert ada.locator("fieldset.hand-over input[value=away]").is_checked()
        ada.get_by_role("button", name="Create game and take my seat").tap()
        ada.wait_for_url("**/play/#/games/*/seats/0")
        gid = ada.url.split("#/games/")[1].split("/")[0]
        links = {}
        for seat in (1, 2):
            ada.locator(f"section.invites li[data-seat='{seat}'] button[data-invite]").tap()
            box = ada.locator(f"input.invite-link[data-seat='{seat}']")
            box.wait_for()
            links[seat] = box.input_value()
        for seat, page in ((1, grace), (2, linus)):
            _sit_down(page, links[seat], NAMES[seat], gid, seat)
        for name in NAMES[1:]:  # the host's table names both friends once they sat down
            ada.locator("section.opponents .opponent-name", has_text=name).wait_for(timeout=15000)
        assert [s["name"] for s in _game(site, gid)["seats"]] == list(NAMES)

        table = Table(pages)
        table.play(lambda: _game(site, gid)["round"] >= 2)
        grace.locator("form.decision, section.waiting").first.wait_for()
        _shots(grace, "table")

        # Grace's browser loses its storage mid-game: the seat's page says how to come back
        lost = seat_token(grace, gid, 1)
        ctxs[1].clear_cookies()
        grace.evaluate("localStorage.clear(); sessionStorage.clear()")
        grace.reload()
        grace.get_by_role("heading", name="Not your seat").wait_for()
        assert "new invite" in grace.locator("main").inner_text()
        _shots(grace, "signed-out")

        # the host makes a new invite for her seat; the old token is refused from then on
        ada.locator("section.invites li[data-seat='1'] button[data-invite='1']").tap()
        ada.locator("button[data-reinvite='1']").tap()
        box = ada.locator("input.invite-link[data-seat='1']")
        box.wait_for()
        assert _view_status(site, gid, 1, lost) == 401
        _shots(ada, "reinvite", ada.locator("section.invites li[data-seat='1']"))
        _sit_down(grace, box.input_value(), "Grace", gid, 1)
        assert _view_status(site, gid, 1, seat_token(grace, gid, 1)) == 200
        assert _game(site, gid)["seats"][1]["name"] == "Grace"
        grace.locator("form.decision, section.waiting").first.wait_for()
        _shots(grace, "back")

        # Ada steps away from her 10 s clock while the friends play on: her decision panel counts
        # down and warns with a quarter of her time left; after three timeouts in a row she is
        # away and a bot plays her seat; 40 s after she left she is back, and plays on herself
        left = time.monotonic()
        warning = ada.locator("[data-clock-warning]")
        table.play(lambda: warning.count() > 0, seats=(1, 2))
        assert "quarter" in warning.inner_text()
        _shots(ada, "clock-warning", ada.locator("[data-decision-clock]"))
        back = ada.get_by_role("button", name="I'm back")
        table.play(lambda: back.count() > 0 and time.monotonic() - left >= 40, seats=(1, 2))
        game = _game(site, gid)
        assert game["away"] == [0] and game["bot_decisions"][0] > 0, game
        grace.locator("section.seat .pending", has_text="away").wait_for(state="attached")
        _shots(ada, "away", ada.locator("section.away"))
        back.tap()
        ada.locator("section.away").wait_for(state="detached")
        assert _game(site, gid)["away"] == []
        table.play(lambda: ada.locator("form.decision").count() > 0, seats=(1, 2))
        assert ada.locator("[data-decision-clock]").is_visible()
        _shots(ada, "back-from-away")

        # Linus resigns: he leaves the game, and Ada and Grace play on to its end
        linus.get_by_role("button", name="Resign").tap()
        linus.get_by_role("button", name="Yes, resign").tap()
        note = linus.locator("section.waiting.resigned")
        note.wait_for(timeout=20000)
        resigned_in = int(note.inner_text().split("You resigned in round ")[1].split(":")[0])
        assert "the others play on" in note.inner_text()
        game = _game(site, gid)
        assert game["status"] == "active" and game["resigned"] == [2], game
        ada.locator(".pending.resigned", has_text=f"resigned in round {resigned_in}").wait_for(
            state="attached"
        )
        _shots(linus, "resigned", note)
        table.play(lambda: all(p.locator("section.scores").count() for p in pages), seats=(0, 1))
        game = _game(site, gid)
        assert game["status"] == "finished" and game["end_reason"] not in ("resigned", "abandoned")
        assert 2 not in game["winners"] and game["resigned"] == [2]
        for page in pages:
            scores = page.locator("section.scores")
            _fits(page, "the final scores")
            text = scores.inner_text()
            assert all(name in text for name in NAMES)
            assert f"Resigned: Linus in round {resigned_in}." in text, text
            assert f"Linus — resigned in round {resigned_in}" in text, text
        ada_row = ada.locator("section.scores tbody tr", has_text="Ada")
        assert int(ada_row.locator("[data-bot-decisions]").inner_text()) >= 3
        _shots(linus, "final", linus.locator("section.scores"))
        for page in pages:
            assert not page.js_errors, page.js_errors
    finally:
        for ctx in ctxs:
            ctx.close()
