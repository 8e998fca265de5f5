"""Ambition's dice rules beside the conformance scenarios (tests/scenarios/ambition): what a
scenario cannot show - a base game left exactly as it was, the Reaching Zero Credits reset as an
effect's fold, faces kept from round to round - and random play-outs of Ambition games through
every rule, checking the invariants (dice neither created nor lost) after every event."""

from __future__ import annotations

from typing import Any

import pytest

import engine
from bots.arena import play_game
from engine import scenario
from engine.fold import evolve
from engine.phases import assign
from engine.powers import effects  # noqa: F401 - registers the PowerPaid fold
from engine.state import GameState

from .invariants import check


def _situation(spec: dict[str, Any]) -> tuple[GameState, dict[str, int]]:
    return scenario.build({"ambition": True, "seats": [spec, {}], "step": "ship"})


def _paid(state: GameState, credits: int) -> None:
    evolve(
        state,
        {
            "type": "PowerPaid",
            "v": 1,
            "seat": 0,
            "power": "galactic_bankers",
            "credits": credits,
            "vp": 1,
            "why": "test",
            "powers": ["galactic_bankers"],
        },
    )


def test_an_effect_bringing_credits_to_zero_resets_them_to_one_at_once(ambition: Any) -> None:
    state, _ = _situation({"credits": 2})
    _paid(state, -2)
    assert state.players[0].credits == 1
    _paid(state, -1)  # again in the same phase: "reset multiple times"
    assert state.players[0].credits == 1


def test_a_base_game_waits_for_manage_to_reset_zero_credits() -> None:
    state, _ = scenario.build({"seats": [{"credits": 2}, {}], "step": "ship"})
    _paid(state, -2)
    assert state.players[0].credits == 0


def test_faces_of_dice_on_stacks_and_goods_are_kept_into_the_next_round(ambition: Any) -> None:
    state, labels = scenario.build(
        {
            "ambition": True,
            "step": "manage",
            "seats": [
                {
                    "faction": 1,
                    "home": 5,
                    "dev_stack": [13],
                    "dev_dice": ["orange:d@develop$"],
                    "goods": {"H5": ["black:g@produce$"]},
                    "cup": ["white:c"],
                },
                {"cup": ["white"]},
            ],
        }
    )
    p = state.players[0]
    p.faces[labels["c"]] = 0  # a face left from the round before: rolled again
    evolve(state, {"type": "RoundStarted", "v": 1, "round": 2})
    assert p.faces == {labels["d"]: 1, labels["g"]: 3}


def test_a_base_game_forgets_every_face_at_the_next_round() -> None:
    state, labels = scenario.build(
        {"step": "manage", "seats": [{"dev_stack": [13], "dev_dice": ["white:d@develop"]}, {}]}
    )
    state.players[0].faces[labels["d"]] = 1
    evolve(state, {"type": "RoundStarted", "v": 1, "round": 2})
    assert state.players[0].faces == {}


def test_only_ambition_decisions_list_two_phase_dice(ambition: Any) -> None:
    base, _ = scenario.build({"seats": [{"columns": {"explore": ["white"]}}, {}]})
    assert "two_phase_dice" not in assign.legal(base, base.players[0])
    amb, labels = scenario.build(
        {
            "ambition": True,
            "seats": [
                {"columns": {"explore": ["black:a@explore/produce", "black:b@produce$"]}},
                {},
            ],
        }
    )
    legal = engine.legal(amb, 0)
    assert legal is not None
    assert legal["two_phase_dice"] == [{"die": labels["a"], "phases": ["explore", "produce"]}]


@pytest.mark.parametrize("players", [2, 3, 4, 5])
def test_random_ambition_playouts_keep_the_invariants(ambition: Any, players: int) -> None:
    """Random bots through Ambition games: two-phase placements, Reveal shifts and $ faces
    happen (checked below), dice are conserved and credits never sit at $0."""
    seen: dict[str, int] = {"two_phase": 0, "dollar_to_cup": 0}
    for i in range(12):
        rec = play_game(
            f"ambition-playout:{players}:{i}", players, options={"ambition": True}, on_event=check
        )
        assert rec.finished and rec.state.scores and rec.state.winners
        assert engine.state_hash(engine.replay(rec.events)) == engine.state_hash(rec.state)
        for e in rec.events:
            if e["type"] == "CommandSubmitted" and (e.get("command") or {}).get("two_phase"):
                seen["two_phase"] += 1
        seen["dollar_to_cup"] += _dollar_finishes(rec.events)
    assert seen["two_phase"] > 0 and seen["dollar_to_cup"] > 0, seen


def test_heuristic_bots_play_ambition_games(ambition: Any) -> None:
    """The heuristic bot places two-phase dice too (into the phase it selects when it can)."""
    for i in range(3):
        rec = play_game(
            f"ambition-heuristic:{i}", 3, ["heuristic"], options={"ambition": True}, on_event=check
        )
        assert rec.finished
        placed = [
            e["command"]["two_phase"]
            for e in rec.events
            if e["type"] == "CommandSubmitted" and e["command"].get("two_phase")
        ]
        assert placed


def _dollar_finishes(events: list[dict[str, Any]]) -> int:
    """How many times a die went to the cup by its $ face (replayed from the log)."""
    from engine.economy import finishes_to_cup

    state: GameState | None = None
    n = 0
    for e in events:
        if state is not None and e["type"] in ("ExplorerStocked", "TilesScouted"):
            n += finishes_to_cup(state.players[e["seat"]], e["explorer"], "explore")
        if state is not None and e["type"] == "GoodShipped":
            p = state.players[e["seat"]]
            n += finishes_to_cup(p, e["shipper"], "ship") + finishes_to_cup(p, e["good"], "produce")
        state = evolve(state, e)
    return n
