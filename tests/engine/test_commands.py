"""Commands: illegal input gets a specific error naming what is wrong, and changes nothing."""

from __future__ import annotations

import pytest

import engine
from engine import catalogue
from engine.errors import IllegalCommand, NotYourDecision


@pytest.fixture
def game() -> engine.GameState:
    state, _ = engine.new_game("cmd:1", 3, {"first_game": True})
    return state


def test_pending_lists_every_seat_in_assign(game: engine.GameState) -> None:
    assert game.step == "assign"
    assert engine.pending(game) == {0: "assign", 1: "assign", 2: "assign"}
    d = engine.legal(game, 1)
    assert d["kind"] == "assign" and d["seat"] == 1
    assert {x["die"] for x in d["dice"]} == set(
        game.players[1].columns[0]
        + game.players[1].columns[1]
        + game.players[1].columns[2]
        + game.players[1].columns[3]
        + game.players[1].columns[4]
    )


def _die(game: engine.GameState, seat: int) -> int:
    return engine.legal(game, seat)["dice"][0]["die"]


def test_wrong_kind_names_the_owed_decision(game: engine.GameState) -> None:
    with pytest.raises(NotYourDecision, match="owes a 'assign' decision, not 'ship'"):
        engine.play(game, 0, {"kind": "ship", "tasks": []})


def test_another_seats_die_is_refused_and_named(game: engine.GameState) -> None:
    before = engine.state_hash(game)
    other = _die(game, 1)
    with pytest.raises(IllegalCommand) as exc:
        engine.play(game, 0, {"kind": "assign", "select": {"die": other, "phase": "settle"}})
    assert exc.value.field == "select.die" and exc.value.value == other
    assert f"die {other}" in exc.value.message
    assert engine.state_hash(game) == before


def test_unknown_phase_lists_the_phases(game: engine.GameState) -> None:
    with pytest.raises(IllegalCommand, match="select.phase must be one of"):
        engine.play(game, 0, {"kind": "assign", "select": {"die": _die(game, 0), "phase": "trade"}})


def test_missing_selection(game: engine.GameState) -> None:
    with pytest.raises(IllegalCommand, match="'select' is required"):
        engine.play(game, 0, {"kind": "assign"})


@pytest.mark.parametrize("bad", [None, [], "assign", 3])
def test_non_object_commands(game: engine.GameState, bad: object) -> None:
    with pytest.raises(IllegalCommand, match="JSON object"):
        engine.play(game, 0, bad)  # type: ignore[arg-type]


def test_bad_seat(game: engine.GameState) -> None:
    with pytest.raises(IllegalCommand, match="seat must be 0..2"):
        engine.play(game, 7, {"kind": "assign"})


def test_sealed_seat_owes_nothing_until_everyone_seals(game: engine.GameState) -> None:
    engine.play(game, 0, {"kind": "assign", "select": {"die": _die(game, 0), "phase": "explore"}})
    assert 0 not in engine.pending(game)
    with pytest.raises(NotYourDecision, match="owes no decision"):
        engine.play(game, 0, {"kind": "assign", "select": {"die": 0, "phase": "explore"}})


def test_game_config_errors(monkeypatch: pytest.MonkeyPatch) -> None:
    with pytest.raises(IllegalCommand, match="2 to 5 players"):
        engine.create("x", 6)
    with pytest.raises(IllegalCommand, match="unknown option"):
        engine.create("x", 2, {"expansion": True})
    with pytest.raises(IllegalCommand, match="objectives are part of Ambition"):
        engine.create("x", 2, {"objectives": True})
    monkeypatch.setattr(catalogue, "_INSTALLED", [])  # as in a process given no component file
    with pytest.raises(IllegalCommand, match="none is installed") as refused:
        engine.create("x", 2, {"ambition": True})
    assert refused.value.code == "ambition-unavailable"
