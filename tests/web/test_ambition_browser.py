"""An Ambition game with objectives played to its end in a real browser: the server started with
the synthetic, made-up component file (``RFG_AMBITION_COMPONENTS``), the lobby's form offers
Ambition and its objectives, a person in seat 0 clicks through every decision against a random
bot, placing dice showing two phases in their second column and talent counters as workers. At every decision the page draws what the seat's view holds: the Leader and Entrepreneur
dice in their colours, each two-phase face with both phases and each $ face with its mark, the
seat's unused talent counters and their count, and the six objectives with who claimed them;
the game reaches its final scores, with the talent counters' column.

Screenshots in ``conftest.SHOTS``: ambition-lobby, ambition-assign, ambition-final.
"""

from __future__ import annotations

from typing import Any

import pytest

from .conftest import SHOTS, Site, call
from .helpers import decisions, game_id, new_page, seat_token
from .test_browser import _act

pytestmark = [pytest.mark.browser, pytest.mark.redis, pytest.mark.xdist_group("web")]

# What the page draws of the seat's own side: each die's colour class and face, the talent
# counters behind the screen, the count beside the credits, the objectives and their claimers.
DRAWN = """() => {
  const mine = document.querySelector(".own-board .seat.mine");
  const dice = [...mine.querySelectorAll(".strip .die")].map((d) => ({
    cls: d.className, face: d.dataset.face || null, shown: d.textContent,
    dollar: !!d.querySelector(".dollar-mark"),
  }));
  const stat = mine.querySelector(".stat.talents");
  return {
    dice,
    counters: mine.querySelectorAll(".talent-counters .die-talent").length,
    talents: stat ? Number(stat.dataset.talents) : null,
    objectives: [...document.querySelectorAll("section.objectives li.objective")].map((o) => ({
      id: Number(o.dataset.objective),
      claimed: o.querySelector(".claimed-by") ? o.querySelector(".claimed-by").dataset.claimed : null,
    })),
  };
}"""


def _check_drawn(page: Any, view: dict[str, Any]) -> dict[str, int]:
    """The page draws what the seat's view holds (the view read at the same version); what it saw
    of Ambition's pieces, counted."""
    drawn = page.evaluate(DRAWN)
    me = next(p for p in view["players"] if p["seat"] == 0)
    faces = [d["face"] for col in (me.get("columns") or {}).values() for d in col if d.get("face")]
    seen = {"black": 0, "orange": 0, "two_phase": 0, "dollar": 0, "talents": 0}
    on_page = [d for d in drawn["dice"] if d["face"]]
    assert sorted(d["face"] for d in on_page) == sorted(faces), (drawn["dice"], faces)
    for d in on_page:
        phases = d["face"].rstrip("$").split("/")
        assert ("two-phase" in d["cls"]) == (len(phases) == 2), d
        assert d["dollar"] == d["face"].endswith("$"), d
        seen["two_phase"] += len(phases) == 2
        seen["dollar"] += d["dollar"]
        seen["black"] += "die-black" in d["cls"]
        seen["orange"] += "die-orange" in d["cls"]
    assert drawn["counters"] == len(me.get("talent_counters") or [])
    assert drawn["talents"] == me.get("talents"), (drawn["talents"], me.get("talents"))
    seen["talents"] = drawn["counters"]
    claimed = {
        o["id"]: ",".join(map(str, o["claimed"]["seats"])) if o["claimed"] else None
        for o in view["objectives"]
    }
    assert {o["id"]: o["claimed"] for o in drawn["objectives"]} == claimed
    assert len(drawn["objectives"]) == 6
    return seen


def _place_ambition_workers(page: Any) -> int:
    """On the assign panel, by clicking: the first die showing two phases goes to its second
    phase, the first unused talent counter becomes a worker in Produce; how many were placed."""
    form = page.locator("form.decision[data-kind=assign]")
    placed = 0
    two = form.locator("fieldset.two-phase-choice")
    if two.count():
        two.first.locator("input").nth(1).check()
        placed += 1
    talent = form.locator("fieldset.talent-choice")
    if talent.count():
        talent.first.locator("input[data-value=produce]").check()
        placed += 1
    return placed


def test_a_person_plays_an_ambition_game_with_objectives_to_the_end(
    ambition_site: Site, browser: Any
) -> None:
    site = ambition_site
    cat = call(site, "GET", "/catalogue")
    assert cat["ambition"].get("available", True), cat["ambition"]
    ctx, page = new_page(browser, {"width": 1280, "height": 900})
    try:
        page.goto(site.url + "/play/#/")
        page.get_by_role("heading", name="New game").wait_for()
        form = page.locator("form.create")
        form.locator("#create-name").fill("Ada")
        form.locator("select[data-seat='1']").select_option("bot:random")
        for other in form.locator("select[data-seat]").all()[2:]:
            other.select_option("none")
        assert "made up" in form.locator("fieldset.expansions").inner_text()
        form.locator("input[name=ambition]").check()
        form.locator("input[name=objectives]").check()
        page.screenshot(path=str(SHOTS / "ambition-lobby.png"))
        form.get_by_role("button", name="Create game and take my seat").click()
        page.wait_for_url("**/play/#/games/*/seats/0")
        gid = game_id(page)
        game = call(site, "GET", f"/games/{gid}")
        # the game resource says what the engine plays: an Ambition game with objectives
        assert game["options"].get("ambition") and game["options"].get("objectives"), game[
            "options"
        ]
        token = seat_token(page, gid, 0)

        seen = {"black": 0, "orange": 0, "two_phase": 0, "dollar": 0, "talents": 0}
        kinds: list[str] = []
        placed = 0
        shot = False
        for kind in decisions(page, 600):
            kinds.append(kind)
            if kind == "assign":
                view = call(site, "GET", f"/games/{gid}/seats/0/view", token=token)["view"]
                for k, n in _check_drawn(page, view).items():
                    seen[k] += n
                if not shot:
                    page.screenshot(path=str(SHOTS / "ambition-assign.png"), full_page=True)
                    shot = True
            if kind == "assign":
                placed += _place_ambition_workers(page)
            _act(page, kind, kinds.count("assign"))

        scores = page.locator("section.scores")
        assert "Talent counters" in scores.inner_text()
        assert page.locator("section.objectives li.objective").count() == 6
        page.screenshot(path=str(SHOTS / "ambition-final.png"), full_page=True)
        assert call(site, "GET", f"/games/{gid}")["status"] == "finished"
        # the Leader die starts in the cup: the seat's first roll shows it, in black
        assert seen["black"] > 0, seen
        assert kinds.count("assign") > 3, kinds
        assert placed > 0, "no die showing two phases nor talent counter to place in the game"
        assert not page.js_errors, page.js_errors
    finally:
        ctx.close()
