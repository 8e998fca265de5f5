"""Visibility: what the rules hide stays hidden in every view and redacted event."""

from __future__ import annotations

import json

import engine
from bots.arena import play_game


def test_screens_hide_dice_during_assign() -> None:
    state, _ = engine.new_game("obs:1", 3, {"first_game": True})
    pub = engine.observe(state, "public")
    mine = engine.observe(state, 0)
    rolled = sum(len(c) for c in state.players[0].columns)
    assert rolled >= 3
    assert "columns" not in pub["players"][0] and pub["players"][0]["behind_screen"] == rolled
    assert "columns" in mine["players"][0] and "columns" not in mine["players"][1]
    assert mine["decision"]["kind"] == "assign"
    assert "seed" not in pub and "seed" not in mine
    assert pub["seed_commitment"] == mine["seed_commitment"]


def test_stacks_show_only_their_top_to_others() -> None:
    rec = play_game("obs:2", 4)
    for seat in range(4):
        view = engine.observe(rec.state, seat)
        for p in view["players"]:
            for stack in p["construction"].values():
                assert ("tiles" in stack) == (p["seat"] == seat)


def test_seed_is_revealed_at_the_end() -> None:
    rec = play_game("obs:3", 2)
    pub = engine.observe(rec.state, "public")
    assert pub["seed"] == "obs:3"
    assert pub["result"]["winners"] == rec.state.winners
    for p in pub["players"]:
        assert p["dice_by_color"]


def test_redacted_events_hide_private_content() -> None:
    rec = play_game("obs:4", 3)
    for e in rec.events:
        if engine.visibility(e).startswith("seat:"):
            owner = e["seat"]
            other = (owner + 1) % 3
            red = engine.redact(e, other)
            for secret in ("faces", "columns", "drawn", "abandoned", "placements", "tile"):
                if secret in e and not isinstance(e[secret], int):
                    assert secret not in red or red[secret] != e[secret], (e["type"], secret)
            assert engine.redact(e, owner) == e
        if e["type"] == "GameCreated":
            assert "seed" not in engine.redact(e, "public")
            assert "seed" not in json.dumps(engine.redact(e, 0)).replace("seed_commitment", "")


def test_observe_all_is_observe_for_every_viewer() -> None:
    """The projections render every view in one pass; each must be the viewer's own observe."""
    for players in (2, 3, 5):
        checked = 0

        def check(state: engine.GameState, _event: dict) -> None:
            nonlocal checked
            views = engine.observe_all(state)
            assert set(views) == {"public", *range(len(state.players))}
            for viewer, view in views.items():
                assert json.dumps(view, sort_keys=True) == json.dumps(
                    engine.observe(state, viewer), sort_keys=True
                )
            checked += 1

        play_game(f"obs:all:{players}", players, on_event=check)
        assert checked > 100
