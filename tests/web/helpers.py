"""What the browser tests do with a page as a person would, and what they check on every page:
a browser profile of its own whose script errors are kept, a press (a click, or a tap on a touch
screen), the seat's decisions in turn, each panel leaving once the server took the command made
on it, a friend seated by invite link, no internal id or missing value in any text a person
reads, the game and the seat token the page holds, screenshots at both sizes. (The site, the
browser and JSON requests to the API: ``conftest``.)"""

from __future__ import annotations

import json
import time
from collections.abc import Iterator
from typing import Any

from .conftest import SHOTS, Site

DESKTOP = {"width": 1280, "height": 800}
PHONE = {"width": 390, "height": 844}

# Every text a person reads: text nodes, and the titles and labels read out or shown on hover.
BAD_WORDS = """() => {
  const bad = [];
  const check = (t, where) => {
    if (/#\\d+/.test(t) || t.includes("undefined") || t.includes("null")) bad.push(`${where}: ${t.trim().slice(0, 160)}`);
  };
  const walker = document.createTreeWalker(document.body, NodeFilter.SHOW_TEXT);
  for (let n = walker.nextNode(); n; n = walker.nextNode()) check(n.textContent, n.parentElement.tagName);
  for (const el of document.querySelectorAll("[title], [aria-label], [placeholder]")) {
    for (const a of ["title", "aria-label", "placeholder"]) {
      const v = el.getAttribute(a);
      if (v) check(v, `${el.tagName}[${a}]`);
    }
  }
  return bad;
}"""

# A decision panel: null once it left the page, else the error it shows (empty while none).
_PANEL_LEFT = "e => e.isConnected ? (e.querySelector('p.error').textContent || '') : null"


def new_page(
    browser: Any, viewport: dict[str, int] = DESKTOP, touch: bool = False
) -> tuple[Any, Any]:
    """A separate browser profile (its own local storage: its own seat tokens) and its page, whose
    uncaught script errors collect in ``page.js_errors``; with ``touch``, a touch screen's."""
    ctx = browser.new_context(viewport=viewport, has_touch=touch)
    page = ctx.new_page()
    errors: list[str] = []
    page.on("pageerror", lambda exc: errors.append(str(exc)))
    page.js_errors = errors
    return ctx, page


def both_sizes(page: Any, name: str) -> None:
    """Screenshots of what ``page`` shows at the desktop size (``<name>.png``) and the phone's
    (``<name>-phone.png``) in ``conftest.SHOTS``; the page is left at the size it had."""
    was = page.viewport_size
    for size, file in ((DESKTOP, f"{name}.png"), (PHONE, f"{name}-phone.png")):
        page.set_viewport_size(size)
        page.screenshot(path=str(SHOTS / file), full_page=False)
    page.set_viewport_size(was)


def press(locator: Any, touch: bool) -> None:
    """A tap on a touch screen, a click elsewhere."""
    if touch:
        locator.tap()
    else:
        locator.click()


def no_bad_words(page: Any, when: str) -> None:
    bad = page.evaluate(BAD_WORDS)
    assert not bad, f"{when}: text a person reads shows internal ids or missing values: {bad[:8]}"


def game_id(page: Any) -> str:
    """The game of the page's address (``.../play/#/games/<id>/seats/<n>``)."""
    return str(page.url.split("#/games/")[1].split("/")[0])


def seat_a_friend(site: Site, host: Any, friend: Any) -> tuple[str, str]:
    """In the host's page Ada creates a game with seat 1 for a friend (the lobby's bots in the
    others) and makes its invite link; in the friend's page Grace opens it and takes the seat.
    The game's id and the (now used) invite link."""
    host.goto(site.url + "/play/#/")
    host.get_by_role("heading", name="New game").wait_for()
    host.locator("#create-name").fill("Ada")
    host.locator("select[data-seat='1']").select_option("human")
    host.get_by_role("button", name="Create game and take my seat").click()
    host.wait_for_url("**/play/#/games/*/seats/0")
    gid = game_id(host)
    host.get_by_role("button", name="Invite a friend").click()
    link = host.locator("input.invite-link[data-seat='1']").input_value()
    friend.goto(link)
    friend.locator("form.join [name=name]").fill("Grace")
    friend.get_by_role("button", name="Take my seat").click()
    friend.wait_for_url(f"**/play/#/games/{gid}/seats/1")
    return gid, link


def seat_token(page: Any, gid: str, seat: int) -> str:
    """The seat's token as the page keeps it (local storage ``rfg.tokens``: ``{"<game>/<seat>":
    token}``)."""
    tokens = json.loads(page.evaluate("localStorage.getItem('rfg.tokens') || '{}'"))
    token: str = tokens[f"{gid}/{seat}"]
    return token


def wait_taken(panel: Any, kind: str, by: str = "clicking") -> None:
    """Wait for the decision panel (an element handle) to leave the page, as it does when the
    server took the command made on it (``by`` clicking or tapping); a refusal stays on it in words
    and fails the test, and so does a panel still there after 20 s."""
    for _ in range(400):
        left = panel.evaluate(_PANEL_LEFT)
        if left is None:
            return
        assert not left.strip(), f"the server refused a {kind} made by {by}: {left}"
        time.sleep(0.05)
    raise AssertionError(f"the {kind} panel stayed after {by}")


def decisions(page: Any, seconds: float, by: str = "clicking") -> Iterator[str]:
    """The kind of each decision the seat's page asks for, in turn, until the final scores show:
    the caller answers it on the page (``by`` clicking or tapping), and the next is looked for
    once its panel left (``wait_taken``). A game still going after ``seconds`` fails the test."""
    kinds: list[str] = []
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        page.wait_for_selector("form.decision, section.scores", timeout=60000)
        if page.locator("section.scores").count():
            return
        panel = page.locator("form.decision").element_handle()
        kind = panel.get_attribute("data-kind")
        kinds.append(kind)
        yield kind
        wait_taken(panel, kind, by)
    raise AssertionError(f"the game did not end in time; decisions so far: {kinds}")
