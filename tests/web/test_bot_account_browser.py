"""Playing a bot account from the browser, without any token but the challenge's: a person sets a
seat of the new-game form to "A bot account" and types its id; the form sends a challenge
(``POST /challenges``) and waits on the challenge's page. The example bot
(``examples/random_bot.py``, a real process following its decisions stream) accepts it; the
person's table opens with the challenge's secret as the seat's token, the bot plays its seat, the
person resigns (four seats: the others play on) and abandons the game as its host (that challenge
made from a ladder's page, where each bot account entrant has a
"play it" link to the form). Another account declines with a reason, which the waiting page shows; a third
challenge is canceled from its page; a malformed id is refused before anything is sent.

Screenshots (``conftest.SHOTS``): challenge-waiting, challenge-declined, at 1280x800 and 390x844.
"""

from __future__ import annotations

import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import pytest

from .conftest import Site, call
from .helpers import both_sizes, game_id, new_page

pytestmark = [pytest.mark.browser, pytest.mark.redis, pytest.mark.xdist_group("web")]

ROOT = Path(__file__).resolve().parents[2]


def _account(site: Site, name: str) -> tuple[str, str]:
    out = call(site, "POST", "/bots/accounts", {"name": name, "contact": "test@example.org"})
    return out["account_id"], out["token"]


def _toast_shown(page: Any) -> bool:
    return bool(page.evaluate("document.getElementById('toast').classList.contains('show')"))


def _challenge_from_the_lobby(page: Any, site: Site, account: str) -> str:
    """The new-game form, under the name Ada, with seat 1 set to the bot account (seats 2 and 3
    built-in bots); returns the challenge id from the waiting page's address."""
    page.goto(site.url + "/play/#/")
    page.get_by_role("heading", name="New game").wait_for()
    page.locator("#create-name").fill("Ada")
    page.locator("select[data-seat='1']").select_option("account")
    page.locator("[name=account]").fill(account)
    page.get_by_role("button", name="Create game and take my seat").click()
    page.wait_for_url("**/play/#/challenges/*")
    return page.url.split("#/challenges/")[1]


def test_a_person_plays_a_bot_account_from_its_challenge(
    site: Site, browser: Any, tmp_path: Path
) -> None:
    ctx, page = new_page(browser)
    bot_id, bot_token = _account(site, "random-example")
    shy_id, shy_token = _account(site, "shy-bot")
    log = open(tmp_path / "random-bot.log", "w")  # noqa: SIM115
    bot = subprocess.Popen(
        [sys.executable, str(ROOT / "examples" / "random_bot.py")]
        + ["--url", site.url, "--token", bot_token],
        stdout=log,
        stderr=subprocess.STDOUT,
    )
    try:
        # a malformed id: said in words, nothing sent
        page.goto(site.url + "/play/#/")
        page.get_by_role("heading", name="New game").wait_for()
        page.locator("select[data-seat='1']").select_option("account")
        page.locator("[name=account]").fill("not-an-id")
        page.get_by_role("button", name="Create game and take my seat").click()
        assert "16 hex digits" in page.locator("form.create [role=alert]").inner_text()
        assert "#/challenges/" not in page.url

        # from a ladder's page ("play it" by a bot account entrant: the lobby's form comes with
        # that account in seat 1), the example bot accepts: the table opens on the person's
        # seat, the bot plays its own
        base = ("ladder", "--url", site.redis_url, "--prefix", site.prefix)
        site.rfg(*base, "create", "open-bots", "--players", "2")
        site.rfg(*base, "pause", "open-bots")  # (no ladder game: the account plays only ours)
        site.rfg(*base, "add", "open-bots", "random-example", "--account", bot_id)
        site.rfg(*base, "add", "open-bots", "heuristic", "--bot", "heuristic")
        page.goto(site.url + "/play/#/ladders/open-bots")
        page.locator("table.leaderboard").wait_for()
        assert page.get_by_role("link", name="play it").count() == 1  # not by the built-in bot
        page.get_by_role("link", name="play it").click()
        page.get_by_role("heading", name="New game").wait_for()
        assert page.locator("[name=account]").input_value() == bot_id
        assert page.locator("select[data-seat='1']").input_value() == "account"
        page.locator("#create-name").fill("Ada")
        page.get_by_role("button", name="Create game and take my seat").click()
        page.wait_for_url("**/play/#/games/*/seats/0", timeout=20000)
        gid = game_id(page)
        game = call(site, "GET", f"/games/{gid}")
        assert game["seats"][1]["kind"] == "external" and game["seats"][1]["account"] == bot_id
        assert [s["kind"] for s in game["seats"]] == ["human", "external", "bot", "bot"]
        page.get_by_role("heading", name="You — Ada").wait_for()  # the name given in the form
        page.locator("form.decision").wait_for()  # the seat's token works: its decision shows
        assert game["seats"][0]["name"] == "Ada"
        assert page.locator("section.seat h3", has_text=f"bot account {bot_id}").count() == 1
        deadline = time.monotonic() + 30
        while "1" in call(site, "GET", f"/games/{gid}/view")["view"].get("pending", {}):
            assert time.monotonic() < deadline, "the bot account never answered its decision"
            time.sleep(0.3)
        challenge = call(site, "GET", "/bots/me/challenges", token=bot_token)
        assert challenge == {"in": [], "out": []}  # nothing left open
        # four seats: the person leaves and the others play on; then the host abandons it
        page.get_by_role("button", name="Resign").click()
        page.get_by_role("button", name="Yes, resign").click()
        page.locator("#toast.show", has_text="You resigned: the others play on.").wait_for(
            timeout=15000
        )
        page.locator("section.waiting.resigned", has_text="You resigned in round").wait_for()
        page.locator("section.seat.mine span.resigned", has_text="resigned in round").wait_for()
        assert call(site, "GET", f"/games/{gid}")["resigned"] == [0]
        assert page.get_by_role("button", name="Resign").count() == 0
        page.get_by_role("button", name="Abandon game").click()
        page.get_by_role("button", name="Yes, abandon game").click()
        page.locator("#toast.show", has_text="The game is over.").wait_for(timeout=15000)
        page.goto(site.url + "/play/#/")  # the finished table's notice stays with its page
        page.get_by_role("heading", name="New game").wait_for()
        assert not _toast_shown(page)
        page.go_back()
        page.locator("section.scores").wait_for(timeout=15000)
        assert "Resigned: Ada in round" in page.locator("section.scores").inner_text()
        assert call(site, "GET", f"/games/{gid}")["end_reason"] == "abandoned"
        # the accepted challenge's secret is the seat's token now, no longer a challenge's
        assert page.evaluate("localStorage.getItem('rfg.challenges')") == "{}"

        # an account that declines: the waiting page says so, with its reason
        cid = _challenge_from_the_lobby(page, site, shy_id)
        status = page.locator("p.challenge-state")
        status.filter(has_text=f"Waiting for bot account {shy_id} to accept").wait_for()
        both_sizes(page, "challenge-waiting")
        page.goto(site.url + "/play/#/")  # the lobby lists the challenge still waiting
        page.locator(f"a[href='#/challenges/{cid}']").click()
        status.filter(has_text="Waiting for").wait_for()
        inbox = call(site, "GET", "/bots/me/challenges", token=shy_token)["in"]
        assert [c["challenge_id"] for c in inbox] == [cid]
        body = {"reason": "not-now", "text": "busy"}
        call(site, "POST", f"/challenges/{cid}/decline", body, token=shy_token)
        status.filter(has_text="declined your challenge").wait_for(timeout=10000)
        assert "declined your challenge (not now): “busy”." in status.inner_text()
        both_sizes(page, "challenge-declined")

        # one the person cancels from its page
        cid = _challenge_from_the_lobby(page, site, shy_id)
        status.filter(has_text="Waiting for").wait_for()
        page.get_by_role("button", name="Cancel the challenge").click()
        status.filter(has_text="the challenge was canceled").wait_for(timeout=10000)
        assert call(site, "GET", "/bots/me/challenges", token=shy_token)["in"] == []
        assert page.js_errors == [], page.js_errors
    finally:
        bot.terminate()
        bot.wait(timeout=10)
        log.close()
        ctx.close()
