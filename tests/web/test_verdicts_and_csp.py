"""The replay viewer says where a log comes from, and every page works under its CSP.

* A bare ``rfg simulate --export`` log (anyone can write one for any seed) used to get the green
  "✔ Verified: ok" badge; now the viewer says "consistent and complete, not signed by this
  server". The green badge is for a log this server signed only (a finished game's export); the
  same export without its signature line is unsigned, and an altered one is not verified.
* The lobby, the replay viewer, the ladders page and the docs page (Swagger UI) run under the
  Content-Security-Policy the server sends (no inline script): no CSP violation is reported, no
  script error, and the pages do their work.
"""

from __future__ import annotations

import json
import urllib.request
from pathlib import Path
from typing import Any

import pytest

from .conftest import Site

pytestmark = [pytest.mark.browser, pytest.mark.redis, pytest.mark.xdist_group("web")]

# every CSP violation the page sees, kept where the test can read it
WATCH_CSP = """
window.__csp = [];
document.addEventListener("securitypolicyviolation", (e) => {
  window.__csp.push(`${e.violatedDirective} blocked ${e.blockedURI || "inline"} (${e.sourceFile}:${e.lineNumber})`);
});
"""


def _page(browser: Any) -> Any:
    page = browser.new_page(viewport={"width": 1280, "height": 800})
    errors: list[str] = []
    page.on("pageerror", lambda exc: errors.append(str(exc)))
    page.on("console", lambda msg: errors.append(msg.text) if msg.type == "error" else None)
    page.add_init_script(WATCH_CSP)
    page.js_errors = errors
    return page


def _clean(page: Any) -> None:
    """No CSP violation and no error in the console (a refused script or style is both)."""
    violations = page.evaluate("window.__csp")
    assert violations == [], violations
    assert page.js_errors == [], page.js_errors


def _log(site: Site, gid: str) -> str:
    with urllib.request.urlopen(f"{site.url}/games/{gid}/log", timeout=10) as resp:
        text: str = resp.read().decode()
    return text


def _verdict_of_file(page: Any, site: Site, path: Path) -> Any:
    page.goto(f"{site.url}/play/#/replay")
    page.locator("#logfile").set_input_files(str(path))
    badge = page.locator(".verdict .badge")
    badge.wait_for(timeout=30000)
    return badge


def test_an_unsigned_log_is_consistent_and_complete_but_not_shown_verified(
    site: Site, browser: Any, tmp_path: Path
) -> None:
    site.rfg(
        "simulate", "--players", "3", "--games", "1", "--seed", "made-up", "--export", str(tmp_path)
    )
    page = _page(browser)
    badge = _verdict_of_file(page, site, tmp_path / "game-00000.jsonl")
    assert "ok" not in badge.get_attribute("class").split(), badge.get_attribute("class")
    assert "unsigned" in badge.get_attribute("class").split()
    assert badge.get_attribute("data-origin") == "unsigned"
    assert "consistent and complete, not signed by this server" in badge.inner_text().lower()
    assert "Verified" not in badge.inner_text()
    box = page.locator(".verdict").inner_text()
    assert "anyone can write such a log" in box and "null" not in box
    assert "consistent (every event follows from the seed and the commands): yes" in box
    assert "authentic (signed by this server): no" in box
    page.locator("output.where").wait_for()  # the replay itself still steps through the game
    _clean(page)
    page.close()


def test_only_a_log_this_server_signed_gets_the_green_badge(
    site: Site, browser: Any, finished_game: str, tmp_path: Path
) -> None:
    page = _page(browser)
    page.goto(f"{site.url}/play/#/replay/{finished_game}")
    badge = page.locator(".verdict .badge")
    badge.wait_for(timeout=30000)
    assert "ok" in badge.get_attribute("class").split()
    assert badge.get_attribute("data-origin") == "this-server"
    assert badge.inner_text().startswith("✔ Verified")
    assert "null" not in page.locator(".verdict").inner_text()
    _clean(page)

    # the same export, its signature line removed: consistent and complete, unsigned
    text = _log(site, finished_game)
    lines = text.splitlines()
    assert '"signature"' in lines[-1]
    stripped = tmp_path / "stripped.jsonl"
    stripped.write_text("\n".join(lines[:-1]) + "\n")
    badge = _verdict_of_file(page, site, stripped)
    assert badge.get_attribute("class").split() == ["badge", "unsigned"]
    assert "not signed by this server" in badge.inner_text()

    # one event altered, signature kept: not verified at all
    rows = [json.loads(line) for line in lines]
    victim = next(i for i, r in enumerate(rows) if r.get("type") == "DiceRolled" and i > 5)
    rows[victim]["payload"]["tampered"] = True
    altered = tmp_path / "altered.jsonl"
    altered.write_text("".join(json.dumps(r) + "\n" for r in rows))
    badge = _verdict_of_file(page, site, altered)
    assert badge.get_attribute("class").split() == ["badge", "bad"]
    assert badge.inner_text().startswith("✘ Not verified")
    _clean(page)
    page.close()


@pytest.mark.parametrize("where", ["#/", "#/replay", "#/ladders"])
def test_the_web_client_works_under_its_csp(site: Site, browser: Any, where: str) -> None:
    page = _page(browser)
    resp = page.goto(f"{site.url}/play/{where}")
    csp = resp.headers["content-security-policy"]
    assert "frame-ancestors 'none'" in csp and "script-src 'self'" in csp
    assert resp.headers["x-frame-options"] == "DENY"
    assert resp.headers["x-content-type-options"] == "nosniff"
    page.locator("main h1, main h2").first.wait_for(timeout=20000)
    assert "Loading" not in page.locator("main").inner_text()  # the modules ran
    _clean(page)
    page.close()


def test_the_docs_page_works_under_its_csp(site: Site, browser: Any) -> None:
    page = _page(browser)
    resp = page.goto(f"{site.url}/docs")
    assert "script-src 'self'" in resp.headers["content-security-policy"]
    assert resp.headers["x-content-type-options"] == "nosniff"
    page.locator(".opblock").first.wait_for(timeout=30000)  # Swagger UI rendered the spec
    assert page.locator(".opblock").count() >= 40
    page.locator(".opblock-summary").first.click()  # an operation opens
    page.locator(".opblock-body").first.wait_for(timeout=10000)
    _clean(page)
    page.close()
