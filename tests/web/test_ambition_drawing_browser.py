"""Ambition's pieces drawn in a real browser from a canned seat view (the shapes engine/observe.py
and the decisions' legal() give): the Leader and Entrepreneur dice in their colours, two-phase
faces with both phases, $ faces with a $ mark, the seat's talent counters behind its screen and
every count the view shows, the six objectives with their condition, check, reward and claimer;
and the panels of the decisions Ambition adds or extends build the commands the API takes,
offering only the choices the decision lists.

The catalogue's Ambition words (objective conditions) come from ``service.catalogue`` with the
synthetic component file installed in this process (the ``ambition`` fixture); the page's own
site runs without a component file, so the test hands those words to the page's catalogue.
"""

from __future__ import annotations

from typing import Any

import pytest

from service.catalogue import _ambition

from .conftest import SHOTS, Site

pytestmark = [pytest.mark.browser, pytest.mark.redis, pytest.mark.xdist_group("web")]

# Die ids: Ambition's are numbered from 111, the box's extra base-colour dice (24) first, then
# the Leader (black) dice, then the Entrepreneur (orange) dice (engine.catalogue.install)
LEADER, LEADER2, ENTRE, ENTRE2, HOME, HOME2 = 135, 136, 140, 141, 0, 1
TALENTS = [2000, 2001]


def _die(d: int, color: str, face: str | None = None) -> dict[str, Any]:
    return {"die": d, "color": color, **({"face": face} if face else {})}


def _view(objectives: list[dict[str, Any]]) -> dict[str, Any]:
    """Seat 0's view during Assign of round 2: its dice rolled behind its screen, two unused
    talent counters; seat 1 claimed an objective in round 1 (its count is hidden during Assign)."""
    cols = {
        "explore": [_die(HOME, "white", "explore"), _die(LEADER, "black", "explore/produce")],
        "develop": [_die(LEADER2, "black", "develop/settle$")],
        "settle": [_die(ENTRE, "orange", "settle$")],
        "produce": [_die(ENTRE2, "orange", "produce/ship")],
        "ship": [],
    }
    me = {
        "seat": 0,
        "name": "Ada",
        "credits": 3,
        "vp_chips": 0,
        "tile_squares": 2,
        "columns": cols,
        "dictate": [],
        "cup": [],
        "citizenry": [_die(HOME2, "white")],
        "construction": {"development": None, "world": None},
        "worlds": [],
        "developments": [],
        "goods": {},
        "talents": 2,
        "talent_counters": TALENTS,
    }
    other = {
        "seat": 1,
        "name": "Bob",
        "credits": 1,
        "vp_chips": 0,
        "tile_squares": 2,
        "behind_screen": 4,
        "cup": [],
        "citizenry": [],
        "construction": {},
        "worlds": [],
        "developments": [],
        "goods": {},
    }
    shown = [
        {
            "id": o["id"],
            "name": o["name"],
            "check": o["check"],
            "condition": {},
            "talents": o["talents"],
            "claimed": {"round": 1, "seats": [1]} if i == 0 else None,
        }
        for i, o in enumerate(objectives[:6])
    ]
    return {
        "round": 2,
        "step": "assign",
        "phases": [],
        "vp_pool": 24,
        "bag": 80,
        "players": [me, other],
        "pending": {"0": "assign", "1": "assign"},
        "objectives": shown,
    }


ASSIGN = {
    "kind": "assign",
    "decision_id": "d1",
    "dice": [
        {"die": HOME, "color": "white", "face": "explore", "column": "explore"},
        {"die": LEADER, "color": "black", "face": "explore/produce", "column": "explore"},
        {"die": LEADER2, "color": "black", "face": "develop/settle$", "column": "develop"},
        {"die": ENTRE, "color": "orange", "face": "settle$", "column": "settle"},
        {"die": ENTRE2, "color": "orange", "face": "produce/ship", "column": "produce"},
    ],
    "wild_dice": [],
    "phases": ["explore", "develop", "settle", "produce", "ship"],
    "means": [],
    "two_phase_dice": [
        {"die": LEADER, "phases": ["explore", "produce"]},
        {"die": LEADER2, "phases": ["develop", "settle"]},
        {"die": ENTRE2, "phases": ["produce", "ship"]},
    ],
    "talents": TALENTS,
}

START = {
    "kind": "start_tiles",
    "decision_id": "d0",
    "options": [
        {"development": 1, "world": 2, "development_card": "T1d", "world_card": "T2w"},
        {"development": 2, "world": 1, "development_card": "T2d", "world_card": "T1w"},
    ],
    "removals": [{"card": "H10", "choices": [HOME, HOME2, LEADER]}],
    "default_remove": [HOME2],
}

FORECAST = {
    "kind": "forecast",
    "decision_id": "d2",
    "selected": "develop",
    "selector": LEADER2,
    "phases": ["explore", "develop", "settle", "produce", "ship"],
    "others": {"1": "ship"},
    "two_player_die": "produce",
}

# Develop with an Ambition discount on offer: the power that makes the top tile cheaper by
# returning one of the listed dice (the shape of develop_settle.legal's ``discounts``)
DEVELOP = {
    "kind": "develop",
    "decision_id": "d3",
    "workers": [{"die": HOME, "color": "white"}],
    "stack": [{"tile": 3, "card": "T3d", "cost": 2}],
    "dice_on_stack": [],
    "completes": [],
    "completions": [],
    "removals": [],
    "removable": [],
    "stack_choice": None,
    "discounts": [
        {"tile": 3, "card": "T3d", "via": "T56d", "discount": 1, "pay": 0, "dice": [HOME2, ENTRE]}
    ],
}

BUY_VP = {
    "kind": "buy_vp",
    "decision_id": "d4",
    "power": "T56d",
    "spend_max": 6,
    "credits": 7,
    "rate": {"credits": 3, "vp": 1},
    "other_powers": ["F1d"],
}

# Draw the canned table and one decision panel into the page; a confirmed command is kept in
# window.sent instead of being sent.
DRAW = """async ([view, decision, ambition]) => {
  const ui = await import("/play/ui.js");
  const table = await import("/play/table.js");
  const panels = await import("/play/panels.js");
  await ui.loadCatalogue();
  ui.cat.ambition = ambition;
  for (const d of ambition.dice) for (const id of d.ids) ui.cat.colors.set(id, d.color);
  window.sent = [];
  const me = view.players.find((p) => p.seat === 0);
  const box = document.createElement("div");
  box.id = "canned";
  box.append(
    panels.decisionPanel(decision, async (cmd) => { window.sent.push(cmd); },
                         { where: ui.whereDice(me), player: me, view }),
    table.drawTable(view, { seat: 0 }),
  );
  document.getElementById("main").replaceChildren(box);
}"""

DICE = """() => [...document.querySelectorAll("#canned .table-view .die")].map((d) => ({
  cls: d.className, face: d.dataset.face || null, label: d.getAttribute("aria-label"),
  shown: d.textContent, dollar: !!d.querySelector(".dollar-mark"),
}))"""


def _open(site: Site, browser: Any) -> tuple[Any, Any, list[str]]:
    ctx = browser.new_context(viewport={"width": 1280, "height": 900})
    page = ctx.new_page()
    errors: list[str] = []
    page.on("pageerror", lambda exc: errors.append(str(exc)))
    page.goto(f"{site.url}/play/#/")
    page.locator("form.create").wait_for(timeout=20000)
    return ctx, page, errors


def test_ambition_dice_talents_and_objectives_are_drawn(
    site: Site, browser: Any, ambition: Any
) -> None:
    words = _ambition(ambition)
    ids = {d["color"]: d["ids"] for d in words["dice"]}
    assert {LEADER, LEADER2} <= set(ids["black"]) and {ENTRE, ENTRE2} <= set(ids["orange"])
    view = _view(words["objectives"])
    ctx, page, errors = _open(site, browser)
    try:
        page.evaluate(DRAW, [view, ASSIGN, words])
        dice = page.evaluate(DICE)
        by_face = {d["face"]: d for d in dice if d["face"]}
        # Leader (black) and Entrepreneur (orange) dice in their colours, told in words too
        leader = by_face["explore/produce"]
        assert "die-black" in leader["cls"] and "two-phase" in leader["cls"], leader
        assert leader["label"].startswith("Leader (black) die, showing Explore or Produce"), leader
        assert "Exp" in leader["shown"] and "Pro" in leader["shown"] and not leader["dollar"]
        assert "die-orange" in by_face["settle$"]["cls"] and by_face["settle$"]["dollar"]
        assert by_face["settle$"]["label"].startswith(
            "Entrepreneur (orange) die, showing Settle, with $"
        )
        both = by_face["develop/settle$"]
        assert "two-phase" in both["cls"] and both["dollar"] and "Dev" in both["shown"]
        assert "Set" in both["shown"] and "$" in both["shown"]
        # the seat's unused talent counters behind its screen, and its count; the other's is hidden
        mine = page.locator("#canned .seat.mine")
        assert mine.locator(".talent-counters .die-talent").count() == 2
        assert mine.locator(".stat.talents").get_attribute("data-talents") == "2"
        assert page.locator("#canned .seat:not(.mine) .stat.talents").count() == 0
        # the six objectives: name, condition in words, when checked, reward, claimer
        objs = page.locator("#canned .objectives li.objective")
        assert objs.count() == 6
        first, o = objs.nth(0), words["objectives"][0]
        assert o["name"] in first.inner_text() and o["text"] in first.inner_text()
        assert o["when"] in first.inner_text()
        assert first.locator(".reward").get_attribute("data-talents") == str(o["talents"])
        assert "claimed by Bob in round 1" in first.inner_text()
        assert page.locator("#canned li.objective.open").count() == 5
        page.screenshot(path=str(SHOTS / "ambition-table.png"), full_page=True)
        assert not errors, errors
    finally:
        ctx.close()


def test_the_assign_panel_places_two_phase_dice_and_talent_counters(
    site: Site, browser: Any, ambition: Any
) -> None:
    words = _ambition(ambition)
    ctx, page, errors = _open(site, browser)
    try:
        page.evaluate(DRAW, [_view(words["objectives"]), ASSIGN, words])
        form = page.locator("#canned form.decision[data-kind=assign]")
        # each two-phase die offers exactly its two columns, as the decision lists them
        choices = form.locator("fieldset.two-phase-choice")
        assert choices.count() == 3
        offered = [
            [i.get_attribute("data-value") for i in c.locator("input").all()] for c in choices.all()
        ]
        assert offered == [x["phases"] for x in ASSIGN["two_phase_dice"]]
        choices.nth(0).locator("input[data-value=produce]").check()
        # a talent counter becomes a worker in Ship, the other stays behind the screen
        talents = form.locator("fieldset.talent-choice")
        assert talents.count() == 2
        talents.nth(0).locator("input[data-value=ship]").check()
        assert form.locator(".preview .die-talent").count() == 1
        form.locator("fieldset.workers input").first.check()
        form.locator("button[type=submit]").click()
        page.wait_for_function("window.sent.length === 1")
        cmd = page.evaluate("window.sent[0]")
        assert cmd["kind"] == "assign" and cmd["select"] == {"die": HOME, "phase": "explore"}
        assert cmd["two_phase"] == [
            {"die": LEADER, "to": "produce"},
            {"die": LEADER2, "to": "develop"},
            {"die": ENTRE2, "to": "produce"},
        ]
        assert cmd["talents"] == [{"die": TALENTS[0], "to": "ship"}]
        assert not errors, errors
    finally:
        ctx.close()


def test_start_tile_die_removal_and_forecast_panels(
    site: Site, browser: Any, ambition: Any
) -> None:
    words = _ambition(ambition)
    view = _view(words["objectives"])
    ctx, page, errors = _open(site, browser)
    try:
        page.evaluate(DRAW, [view, START, words])
        form = page.locator("#canned form.decision[data-kind=start_tiles]")
        removal = form.locator("fieldset.removal")
        assert [i.get_attribute("data-value") for i in removal.locator("input").all()] == [
            str(d) for d in START["removals"][0]["choices"]
        ]
        assert removal.locator(f"input[data-value='{HOME2}']").is_checked()  # the default
        assert removal.locator(".die-black").count() == 1  # the Leader die, in its colour
        removal.locator(f"input[data-value='{LEADER}']").check()
        form.locator("button[type=submit]").click()
        page.wait_for_function("window.sent.length === 1")
        assert page.evaluate("window.sent[0]") == {
            "kind": "start_tiles",
            "development": 1,
            "remove": [LEADER],
        }

        page.evaluate(DRAW, [view, FORECAST, words])
        form = page.locator("#canned form.decision[data-kind=forecast]")
        assert "Bob Ship" in form.inner_text() and "spare Home die shows" in form.inner_text()
        assert form.locator("input[data-value=develop]").is_checked()
        form.locator("input[data-value=ship]").check()
        form.locator("button[type=submit]").click()
        page.wait_for_function("window.sent.length === 1")
        assert page.evaluate("window.sent[0]") == {"kind": "forecast", "phase": "ship"}
        assert not errors, errors
    finally:
        ctx.close()


def test_develop_discount_and_buy_vp_panels(site: Site, browser: Any, ambition: Any) -> None:
    words = _ambition(ambition)
    view = _view(words["objectives"])
    ctx, page, errors = _open(site, browser)
    try:
        page.evaluate(DRAW, [view, DEVELOP, words])
        form = page.locator("#canned form.decision[data-kind=develop]")
        offer = form.locator("fieldset.discounts .discount")
        assert offer.count() == 1 and "costs 1 less" in offer.inner_text()
        # the dice it may return are the decision's, named by colour, never by id
        assert offer.locator("option").all_inner_texts()[1].startswith("E · Entrepreneur (orange)")
        offer.locator("input[type=checkbox]").check()
        offer.locator("select").select_option(str(ENTRE))
        form.locator("button[type=submit]").click()
        page.wait_for_function("window.sent.length === 1")
        assert page.evaluate("window.sent[0]") == {
            "kind": "develop",
            "order": [HOME],
            "remove": [],
            "discounts": [{"tile": 3, "via": "T56d", "die": ENTRE}],
        }

        page.evaluate(DRAW, [view, BUY_VP, words])
        form = page.locator("#canned form.decision[data-kind=buy_vp]")
        form.locator("input[name=spend]").fill("4")
        form.locator("button[type=submit]").click()  # not a multiple of the $3 price: kept
        assert not form.locator("input[name=spend]").evaluate("e => e.validity.valid")
        assert page.evaluate("window.sent.length") == 0
        form.locator("input[name=spend]").fill("6")
        form.locator("input[name=first]").uncheck()
        form.locator("button[type=submit]").click()
        page.wait_for_function("window.sent.length === 1")
        assert page.evaluate("window.sent[0]") == {"kind": "buy_vp", "spend": 6, "first": False}
        assert not errors, errors
    finally:
        ctx.close()
