"""Tiles at a glance, in a real browser: every tableau row and each construction stack's top tile
shows its phase icons (named for a screen reader) and its one-line power, as the catalogue
serves them, on a desktop and on a 360 px phone without sideways scroll; the tile card still
opens on a tap for the full wording."""

from __future__ import annotations

import json
import urllib.request
from typing import Any

import pytest

from .conftest import Site

pytestmark = [pytest.mark.browser, pytest.mark.redis, pytest.mark.xdist_group("web")]

# The faction developments, as their effects make them read (the seat's own tableau from the start).
KNOWN = {
    "F1d": (["Ship phase"], "Ship end: +$1 per 2 Military in Citizenry"),
    "F2d": (["Explore phase"], "Stock by Alien Technology explorer: $4"),
    "F3d": (["Produce phase"], "Produce end: +$1 per good on Novelty worlds"),
    "F4d": (["Explore phase"], "Scout: new tiles may go on top of stacks"),
    "F5d": (["Produce phase"], "Produce end: +$2 per Genes good"),
    "F6d": (["Develop phase"], "Develop end: +$1 per Novelty in Citizenry"),
    "F7d": (["Develop phase"], "Reassign developments cost -1 (min 1)"),
    "F8d": (["Ship phase"], "Consume from Rare Elements world: +$1"),
}

# Every tile row and stack top on the page: its card key, its icons' spoken names, its line.
ROWS = """() => [...document.querySelectorAll("li.card, .stack .top")].map((row) => ({
  card: row.querySelector("button.card-ref").dataset.card,
  top: row.matches(".stack .top"),
  icons: [...row.querySelectorAll(".phase-icon")].map((i) => i.getAttribute("aria-label")),
  line: (row.querySelector(".power-line") || {}).textContent || "",
}))"""
NAMES = {
    "explore": "Explore",
    "develop": "Develop",
    "settle": "Settle",
    "produce": "Produce",
    "ship": "Ship",
}


def _call(site: Site, method: str, path: str, body: Any = None) -> Any:
    data = json.dumps(body).encode() if body is not None else None
    req = urllib.request.Request(site.url + path, data=data, method=method)
    req.add_header("Content-Type", "application/json")
    with urllib.request.urlopen(req, timeout=10) as resp:
        return json.loads(resp.read())


def _icons(c: dict[str, Any]) -> list[str]:
    out = [f"{NAMES[p]} phase" for p in c["phases"]]
    if c.get("development_kind") == "reassign":
        out.append("Reassign power, used while assigning")
    if c.get("endgame_bonus"):
        out.append("End-game bonus")
    return out


@pytest.mark.parametrize("size", [{"width": 1280, "height": 800}, {"width": 360, "height": 740}])
def test_each_tableau_row_shows_its_phase_icons_and_power_line(
    site: Site, browser: Any, size: dict[str, int]
) -> None:
    cat = _call(site, "GET", "/catalogue")
    cards = [c for t in cat["tiles"] for c in (t["development"], t["world"])]
    cards += [c for f in cat["factions"] for c in f["cards"]] + cat["home_worlds"]
    by_key = {c["card"]: c for c in cards}
    game = _call(
        site, "POST", "/games", {"seats": [{"kind": "human"}] * 2, "options": {"first_game": True}}
    )
    phone = size["width"] < 800
    ctx = browser.new_context(viewport=size, has_touch=phone)
    page = ctx.new_page()
    errors: list[str] = []
    page.on("pageerror", lambda exc: errors.append(str(exc)))
    try:
        page.goto(f"{site.url}/play/#/watch/{game['game_id']}")
        page.locator("li.card .power-line").first.wait_for(timeout=20000)
        rows = page.evaluate(ROWS)
        assert any(r["card"].startswith("H") for r in rows), rows  # the home worlds
        assert any(r["top"] for r in rows), rows  # the construction stacks' top tiles
        known = [r for r in rows if r["card"] in KNOWN]
        assert known, f"no faction development on the table: {rows}"  # one seat at most has F9
        for r in known:
            assert (r["icons"], r["line"]) == KNOWN[r["card"]], r
        for r in rows:
            c = by_key[r["card"]]
            assert r["line"] == c["summary"] and r["line"].strip(), r
            assert r["icons"] == _icons(c), r
        assert page.evaluate("document.documentElement.scrollWidth <= window.innerWidth"), (
            "the table scrolls sideways"
        )
        ref = page.locator("li.card button.card-ref").first
        ref.tap() if phone else ref.click()
        dialog = page.locator("dialog#card-dialog")
        dialog.wait_for()
        assert by_key[ref.get_attribute("data-card")]["description"] in dialog.inner_text()
        assert not errors, errors
    finally:
        ctx.close()
