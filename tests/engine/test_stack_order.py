"""Develop / Settle ``stack_order``: which of the dice already on a construction stack complete a
top tile that is complete when the phase starts ("choosing which developers to return to the
Citizenry", base rulebook, Develop and Settle)."""

from __future__ import annotations

from typing import Any

import pytest

import engine
from bots.random_bot import RandomBot
from engine import flow, scenario
from engine.errors import IllegalCommand
from engine.fold import Ctx
from engine.rng import Rng
from engine.state import GameState

# Export Duties (2), Robot Surveyors (5): three developers on the stack, one to spare
DEVELOP: dict[str, Any] = {
    "step": "develop",
    "seats": [
        {
            "faction": 1,
            "home": 9,
            "dev_stack": [10, 44],
            "dev_dice": ["red:a", "white:b", "blue:c"],
            "columns": {"develop": ["brown:d"]},
        },
        {},
    ],
}


def _open(spec: dict[str, Any]) -> tuple[GameState, dict[str, int]]:
    """The situation at the start of the scenario's phase: (state, die labels)."""
    state, labels = scenario.build(spec)
    before = state.copy()
    events = scenario.enter(state, spec)
    assert engine.state_hash(_fold(before, events)) == engine.state_hash(state)
    return state, labels


def _fold(state: GameState, events: list[dict[str, Any]]) -> GameState:
    for e in events:
        engine.evolve(state, e)
    return state


def _resolved_by_itself(state: GameState) -> bool:
    """Develop went by without asking seat 0 (the round has moved on to Manage)."""
    return state.step == "manage" and engine.pending(state).get(0) != "develop"


def _seat(**over: Any) -> dict[str, Any]:
    spec: dict[str, Any] = {"step": DEVELOP["step"], "seats": [dict(DEVELOP["seats"][0]), {}]}
    spec["seats"][0].update(over)
    return spec


def test_the_decision_describes_the_choice() -> None:
    state, lab = _open(DEVELOP)
    assert engine.pending(state) == {0: "develop"}
    d = engine.legal(state, 0)
    assert d["dice_on_stack"] == [lab["a"], lab["b"], lab["c"]]
    assert d["stack_choice"] == {
        "dice": [
            {"die": lab["a"], "color": "red"},
            {"die": lab["b"], "color": "white"},
            {"die": lab["c"], "color": "blue"},
        ],
        "ready": [{"tile": 10, "card": "T10d", "cost": 2}],
        "take": 2,
        "stay": 1,
    }
    assert "stack_order" in d["help"]


def test_the_chosen_dice_complete_the_tile_and_the_event_carries_them() -> None:
    state, lab = _open(DEVELOP)
    start = state.copy()
    cmd = {"kind": "develop", "order": [lab["d"]], "stack_order": [lab["c"], lab["a"], lab["b"]]}
    events = engine.decide(state, 0, cmd)
    done = [e for e in events if e["type"] == "TileCompleted"]
    assert [(e["tile"], e["dice"]) for e in done] == [(10, [lab["c"], lab["a"]])]
    played = engine.play(state, 0, cmd)
    assert played == events
    p = state.players[0]
    # the spare developer keeps its place on the stack, ahead of the new developer
    assert p.dev_stack == [44] and p.dev_dice == [lab["b"], lab["d"]]
    assert sorted(p.citizenry) == sorted([lab["a"], lab["c"]])
    # folding the events reproduces the state (replay)
    assert engine.state_hash(_fold(start, events)) == engine.state_hash(state)


def test_without_the_field_the_oldest_dice_complete_the_tile() -> None:
    state, lab = _open(DEVELOP)
    events = engine.play(state, 0, {"kind": "develop", "order": [lab["d"]]})
    done = [e for e in events if e["type"] == "TileCompleted"]
    assert done[0]["dice"] == [lab["a"], lab["b"]]
    assert "stack_order" not in engine.canonical_json(events)
    same = engine.play(
        _open(DEVELOP)[0], 0, {"kind": "develop", "order": [lab["d"]], "stack_order": None}
    )
    assert same == events


@pytest.mark.parametrize(
    "bad",
    [
        ["c", "a"],  # one left out
        ["c", "a", "b", "d"],  # a developer is not on the stack yet
        ["c", "c", "a"],  # twice
        ["c", "a", "b", "b"],
        "c",
        [True, "a", "b"],
        [],
    ],
)
def test_a_bad_stack_order_is_refused_and_changes_nothing(bad: Any) -> None:
    state, lab = _open(DEVELOP)
    before = engine.state_hash(state)
    value = scenario._resolve_labels(
        [f"${x}" if x in lab else x for x in bad] if isinstance(bad, list) else f"${bad}", lab
    )
    with pytest.raises(IllegalCommand) as exc:
        engine.play(state, 0, {"kind": "develop", "order": [lab["d"]], "stack_order": value})
    err = exc.value
    assert (err.code, err.field, err.value) == ("stack_order", "stack_order", value)
    assert str([lab["a"], lab["b"], lab["c"]]) in err.message
    assert "development stack" in err.message and "oldest first" in err.message
    assert engine.state_hash(state) == before


def test_a_seat_whose_dice_on_the_stack_all_complete_tiles_is_not_asked() -> None:
    # Export Duties (2) then Galactic Demand (2): the spare die and the developer complete the
    # second tile too, so every die on the stack reaches the Citizenry whatever the order
    spec = _seat(dev_stack=[10, 14])
    state, lab = _open(spec)
    assert _resolved_by_itself(state)
    p = state.players[0]
    assert p.devs[-2:] == ["T10d", "T14d"] and p.dev_stack == [] and p.dev_dice == []


def test_dice_of_one_colour_are_not_asked_about() -> None:
    spec = _seat(dev_dice=["red:a", "red:b", "red:c"])
    state, lab = _open(spec)
    assert _resolved_by_itself(state)
    assert state.players[0].dev_dice == [lab["c"], lab["d"]]


def test_without_a_spare_die_there_is_no_choice() -> None:
    spec = _seat(dev_dice=["red:a", "white:b"])
    state, lab = _open(spec)
    assert _resolved_by_itself(state)
    assert state.players[0].dev_dice == [lab["d"]]


def test_several_tiles_complete_at_the_start_take_the_dice_in_the_chosen_order() -> None:
    # Star Nomad Lair (1), Artist Colony (1), Silicon World (4); no settlers
    spec = {
        "step": "settle",
        "seats": [
            {
                "faction": 1,
                "home": 9,
                "world_stack": [15, 16, 10],
                "world_dice": ["white:a", "red:b", "green:c"],
            },
            {},
        ],
    }
    state, lab = _open(spec)
    d = engine.legal(state, 0)
    assert [x["tile"] for x in d["stack_choice"]["ready"]] == [15, 16]
    assert (d["stack_choice"]["take"], d["stack_choice"]["stay"]) == (2, 1)
    events = engine.play(
        state, 0, {"kind": "settle", "order": [], "stack_order": [lab["b"], lab["c"], lab["a"]]}
    )
    done = [(e["tile"], e["dice"]) for e in events if e["type"] == "TileCompleted"]
    assert done == [(15, [lab["b"]]), (16, [lab["c"]])]
    assert state.players[0].world_dice == [lab["a"]]


def test_when_the_stack_empties_the_dice_left_go_to_the_cup() -> None:
    # Runaway Robots (2) alone: the die not chosen returns to the cup
    spec = {
        "step": "settle",
        "seats": [
            {
                "faction": 1,
                "home": 9,
                "world_stack": [23],
                "world_dice": ["white:a", "red:b", "green:c"],
            },
            {},
        ],
    }
    state, lab = _open(spec)
    assert engine.pending(state) == {0: "settle"}
    events = engine.play(
        state, 0, {"kind": "settle", "order": [], "stack_order": [lab["c"], lab["b"], lab["a"]]}
    )
    back = [e for e in events if e["type"] == "WorkersReturned"]
    assert [(e["source"], e["dice"]) for e in back] == [("stack", [lab["a"]])]
    p = state.players[0]
    assert lab["a"] in p.cup and sorted(p.citizenry) == sorted([lab["b"], lab["c"]])


def test_returns_are_checked_against_the_chosen_dice() -> None:
    # Galactic Exchange: up to 2 of a completed world's settlers may go to the cup
    spec = {
        "step": "settle",
        "seats": [
            {
                "faction": 1,
                "home": 9,
                "tableau": ["T15d"],
                "world_stack": [23, 10],
                "world_dice": ["white:a", "red:b", "green:c"],
            },
            {},
        ],
    }
    state, lab = _open(spec)
    cmd: dict[str, Any] = {
        "kind": "settle",
        "order": [],
        "stack_order": [lab["c"], lab["b"], lab["a"]],
    }
    with pytest.raises(IllegalCommand) as exc:
        engine.play(state, 0, {**cmd, "returns": [[lab["a"]]]})
    assert exc.value.code == "returns" and exc.value.value == [lab["a"]]
    events = engine.play(state, 0, {**cmd, "returns": [[lab["c"]]]})
    done = [e for e in events if e["type"] == "TileCompleted"]
    assert done[0]["dice"] == [lab["c"], lab["b"]] and done[0]["returned"] == [lab["c"]]
    p = state.players[0]
    assert lab["c"] in p.cup and lab["b"] in p.citizenry and p.world_dice == [lab["a"]]


def test_a_removal_may_take_a_chosen_die_still_on_the_stack() -> None:
    # Former Penal Colony (1) removes a die when it completes; Silicon World (4) stays
    spec = {
        "step": "settle",
        "seats": [
            {
                "faction": 1,
                "home": 9,
                "world_stack": [13, 10],
                "world_dice": ["white:a", "red:b", "green:c"],
            },
            {},
        ],
    }
    state, lab = _open(spec)
    engine.play(
        state,
        0,
        {
            "kind": "settle",
            "order": [],
            "stack_order": [lab["b"], lab["c"], lab["a"]],
            "remove": [lab["c"]],
        },
    )
    p = state.players[0]
    assert p.citizenry == [lab["b"]] and p.world_dice == [lab["a"]]
    assert lab["c"] not in p.owned_dice()


def test_the_random_bot_sends_legal_stack_orders() -> None:
    sent = 0
    for i in range(40):
        state, _ = _open(DEVELOP)
        d = engine.legal(state, 0)
        cmd = RandomBot().act(d, None, Rng.from_seed(f"stack:{i}"))
        sent += "stack_order" in cmd
        ctx = Ctx(state)
        flow.apply_command(state, 0, cmd, ctx)
    assert 0 < sent < 40


def test_a_game_played_under_rules_version_1_keeps_its_oldest_first_rule() -> None:
    """A log recorded before the choice existed (no ``rules`` in GameCreated: version 1) must
    re-run to the same events: seat 0 is not asked, the oldest dice complete the tile, and a
    stack_order is refused."""
    spec = dict(DEVELOP, rules=1)
    state, lab = _open(spec)
    assert state.rules == 1 and _resolved_by_itself(state)
    done = [
        e for e in scenario.enter(scenario.build(spec)[0], spec) if e["type"] == "TileCompleted"
    ]
    assert done[0]["dice"] == [lab["a"], lab["b"]]

    # asked for another reason (one of two workers of different colours completes Export
    # Duties' successor, a 2-cost tile): under version 1 there is no stack choice to make
    two = _seat(columns={"develop": ["brown:d", "green:e"]}, dev_stack=[10, 6, 44])
    state, lab = _open(dict(two, rules=1))
    decision = engine.legal(state, 0)
    assert decision is not None and decision["kind"] == "develop"
    assert decision["stack_choice"] is None
    with pytest.raises(IllegalCommand, match="rules version 1"):
        engine.play(
            state,
            0,
            {
                "kind": "develop",
                "order": [lab["d"], lab["e"]],
                "stack_order": [lab["c"], lab["a"], lab["b"]],
            },
        )
    assert engine.legal(_open(two)[0], 0)["stack_choice"] is not None  # version 2 asks


def test_new_games_record_the_rules_version_and_old_logs_fold_as_version_1() -> None:
    from engine.phases.setup import RULES_VERSION

    events = engine.create("rules-version", 2, {}, None)
    assert events[0]["rules"] == RULES_VERSION == engine.replay(events).rules
    # versions 1 and 2 share a generator, so a version 2 log without its field folds as version 1
    events = engine.create("rules-version", 2, {}, None, 2)
    old = [dict(events[0])] + events[1:]
    del old[0]["rules"]
    assert engine.replay(old).rules == 1
