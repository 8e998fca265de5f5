"""Ambition powers beyond what a conformance scenario shows (tests/scenarios/ambition/ has one per
power and per Fine Point): the two powers that act at setup, and the decisions the powers add as
``legal`` offers them (Psi-Crystal Forecasters' at Reveal, Deficit Spending's when Ship ends, the
discounts of Terraforming Specialists and Contact Specialist), and base games without any of it.

Every test takes the ``ambition`` fixture (tests/conftest.py): the synthetic, made-up component
file installed in this process.
"""

from __future__ import annotations

from typing import Any

import pytest

import engine
from engine import catalogue, flow, scenario
from engine.state import GameState

AMBITION = {"ambition": True}


def _dealt(faction: int) -> tuple[GameState, int]:
    """An Ambition game whose setup dealt this faction, and the seat it went to."""
    for i in range(400):
        state = engine.replay(engine.create(f"powers-{faction}-{i}", 4, AMBITION)[:1])
        for p in state.players:
            if p.faction == faction:
                return state, p.seat
    raise AssertionError(f"no seed of 400 deals faction {faction}")  # pragma: no cover


def _start_credits(home: int) -> int:
    return int(catalogue.HOME_WORLDS[home].immediate.get("start_credits") or 1)


def test_interstellar_bank_adds_two_credits_at_setup(ambition: Any) -> None:
    """Interstellar Bank (faction 23): "+$2" on the usual start ($1, or the home world's)."""
    state, seat = _dealt(23)
    p = state.players[seat]
    assert catalogue.CARDS["F23d2"].power_id == "interstellar_bank"
    assert p.credits == min(10, _start_credits(p.home) + 2)
    others = [q for q in state.players if q.seat != seat]
    assert all(q.credits == _start_credits(q.home) for q in others)


def test_negotiators_put_a_consumption_and_an_entrepreneur_die_in_the_cup(ambition: Any) -> None:
    """Negotiators (faction 18): one die removed at setup, one Consumption and one Entrepreneur
    die into the cup."""
    state, seat = _dealt(18)
    p = state.players[seat]
    cup = [catalogue.DIE_COLOR[d] for d in p.cup]
    assert cup.count("purple") >= 1 and cup.count("orange") >= 1
    assert [r["card"] for r in p.start_removals] == ["F18d2"]


def _situation(spec: dict[str, Any]) -> tuple[GameState, dict[str, int]]:
    spec = {"ambition": True, **spec}
    state, labels = scenario.build(spec)
    scenario.enter(state, spec)
    return state, labels


def _play(
    state: GameState, labels: dict[str, int], seat: int, cmd: dict[str, Any]
) -> list[dict[str, Any]]:
    return scenario.flow_play(state, seat, scenario._resolve_labels(cmd, labels))


def _revealed(events: list[dict[str, Any]]) -> list[str]:
    return next(e["phases"] for e in events if e["type"] == "PhasesRevealed")


def test_the_forecast_decision_shows_the_spare_die_rolled_before_it(ambition: Any) -> None:
    """2 players: the spare Home die is rolled when the screens are lifted, so the owner sees it
    in ``legal`` before deciding; the Reveal then uses that roll."""
    state, labels = _situation(
        {
            "step": "assign",
            "chance": {"two_player_die": ["develop"]},
            "seats": [
                {"faction": 10, "home": 9, "tableau": ["T57d"], "columns": {"ship": ["white:s"]}},
                {"faction": 11, "home": 8, "columns": {"ship": ["white:x"]}},
            ],
        }
    )
    _play(state, labels, 0, {"kind": "assign", "select": {"die": "$s", "phase": "ship"}})
    _play(state, labels, 1, {"kind": "assign", "select": {"die": "$x", "phase": "ship"}})
    assert flow.pending(state) == {0: "forecast"}
    offer = flow.legal(state, 0)
    assert offer is not None
    assert offer["kind"] == "forecast"
    assert offer["two_player_die"] == "develop"
    assert offer["selected"] == "ship" and offer["others"] == {"1": "ship"}
    assert state.phases == []  # no phase revealed yet
    events = _play(state, labels, 0, {"kind": "forecast", "phase": "settle"})
    assert _revealed(events) == ["develop", "settle", "ship"]
    assert not any(e["type"] == "ScreensLifted" for e in events)  # rolled once, before


def test_no_forecast_decision_without_the_power(ambition: Any) -> None:
    state, labels = _situation(
        {
            "step": "assign",
            "seats": [
                {"faction": 10, "home": 9, "columns": {"ship": ["white:s"]}},
                {"faction": 11, "home": 8, "columns": {"ship": ["white:x"]}},
            ],
        }
    )
    _play(state, labels, 0, {"kind": "assign", "select": {"die": "$s", "phase": "ship"}})
    events = _play(state, labels, 1, {"kind": "assign", "select": {"die": "$x", "phase": "ship"}})
    assert "ship" in _revealed(events)  # revealed at once
    assert not any(e["type"] in ("ScreensLifted", "PhaseReselected") for e in events)


@pytest.mark.parametrize(("credits", "most"), [(1, 1), (2, 2), (7, 2)])
def test_deficit_spending_offers_up_to_two_dollars_never_more_than_owned(
    ambition: Any, credits: int, most: int
) -> None:
    state, _ = _situation(
        {
            "step": "ship",
            "seats": [
                {"faction": 10, "home": 9, "credits": credits, "tableau": ["T58d"]},
                {"faction": 11, "home": 8},
            ],
        }
    )
    offer = flow.legal(state, 0)
    assert offer is not None
    assert offer["kind"] == "buy_vp"
    assert offer["power"] == "deficit_spending"
    assert offer["spend_max"] == most


def test_discounts_are_offered_with_what_each_costs(ambition: Any) -> None:
    state, labels = _situation(
        {
            "step": "settle",
            "seats": [
                {
                    "faction": 23,
                    "home": 9,
                    "tableau": ["T59d"],
                    "citizenry": ["red:m", "white:w"],
                    "world_stack": [6, 56],  # Malevolent Lifeforms (4), Alien Booby Trap (1)
                    "columns": {"settle": ["white:a"]},
                },
                {"faction": 10, "home": 8},
            ],
        }
    )
    offer = flow.legal(state, 0)
    assert offer is not None and offer["kind"] == "settle"
    by = {(d["tile"], d["via"]): d for d in offer["discounts"]}
    assert set(by) == {(6, "terraforming_specialists"), (6, "contact_specialist")}  # not the 1
    assert by[(6, "terraforming_specialists")]["pay"] == 1
    assert by[(6, "contact_specialist")]["dice"] == [labels["m"]]
    assert by[(6, "contact_specialist")]["discount"] == 3


def test_base_decisions_are_unchanged(ambition: Any) -> None:
    """A base game's decisions carry none of the Ambition offers."""
    state, _ = scenario.build(
        {
            "step": "settle",
            "seats": [
                {"faction": 7, "home": 9, "world_stack": [6], "columns": {"settle": ["white"]}},
                {"faction": 1, "home": 8, "columns": {"settle": ["red", "white"]}},
            ],
        }
    )
    for p in state.players:
        from engine.phases import develop_settle

        assert "discounts" not in develop_settle.legal(state, p, "settle")
