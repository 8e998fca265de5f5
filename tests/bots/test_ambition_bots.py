"""Every built-in bot plays Ambition (synthetic components, tests/data/ambition-synthetic.yaml):
the setup's die removal, dice showing two phases, talent counters and the phases' new dice, with
legal commands only, and the heuristic bot values the new dice simply but sensibly."""

from __future__ import annotations

from typing import Any

import pytest

import engine
from bots import get_bot
from bots.arena import play_game
from bots.base import bot_names
from bots.heuristic import HeuristicBot
from bots.ismcts import IsmctsBot
from engine.rng import Rng
from engine.sampler import Sampler, SamplerError
from tests.engine.invariants import check

OPTIONS = {"ambition": True, "objectives": True}


def _commands(events: list[dict[str, Any]], seats: set[int]) -> list[dict[str, Any]]:
    return [e["command"] for e in events if e["type"] == "CommandSubmitted" and e["seat"] in seats]


@pytest.mark.parametrize("name", bot_names())
def test_every_bot_plays_ambition_games_to_the_end(ambition: Any, name: str) -> None:
    bot = IsmctsBot(iterations=8) if name == "ismcts" else get_bot(name)
    for players in (2, 4):
        rec = play_game(
            f"ambition-bots:{name}:{players}",
            players,
            [bot, "random"],
            options=OPTIONS,
            on_event=check,
        )  # an illegal command would raise
        assert rec.finished and rec.state.winners


def test_the_heuristic_uses_two_phase_dice_talents_and_removes_a_home_die(ambition: Any) -> None:
    seen = {"two_phase": 0, "talents": 0, "remove": 0}
    for i in range(12):
        rec = play_game(f"ambition-heuristic:{i}", 3, ["heuristic"], options=OPTIONS)
        assert rec.finished
        for cmd in _commands(rec.events, {0, 1, 2}):
            for key in seen:
                seen[key] += bool(cmd.get(key))
    assert all(seen.values()), seen


def test_random_removal_chooses_among_the_allowed_dice(ambition: Any) -> None:
    decision = {
        "kind": "start_tiles",
        "options": [{"development": 1, "world": 2}, {"development": 2, "world": 1}],
        "removals": [{"card": "F10d", "choices": [3, 4]}, {"card": "H10", "choices": [3, 4]}],
        "default_remove": [3, 4],
    }
    picks = {
        tuple(get_bot("random").act(decision, None, Rng.from_seed(f"r{i}"))["remove"])
        for i in range(30)
    }
    assert picks == {(3, 4), (4, 3)}


def test_the_heuristic_recruits_a_leader_before_home_and_entrepreneur_dice(ambition: Any) -> None:
    decision = {
        "kind": "manage",
        "citizenry": [
            {"die": 1, "color": "white"},
            {"die": 140, "color": "orange"},
            {"die": 130, "color": "black"},
        ],
        "recruit_count": 2,
        "recallable": [],
        "cup": 3,
    }
    cmd = HeuristicBot._manage(HeuristicBot(), decision, {}, Rng.from_seed("m"))
    assert cmd["recruit"] == [130, 140]


def test_the_heuristic_consumes_with_a_leader_which_matches_every_world() -> None:
    decision = {
        "kind": "ship",
        "count": 1,
        "actions": ["trade", "consume"],
        "shippers": [{"die": 1, "color": "white"}, {"die": 130, "color": "black"}],
        "goods": [{"die": 2, "color": "white", "world_color": "genes", "world": "T1w"}],
    }
    view = {"seat": 0, "round": 9, "vp_pool": 2, "players": [{"credits": 9}]}
    cmd = HeuristicBot._ship(HeuristicBot(), decision, view, Rng.from_seed("s"))
    assert cmd["tasks"] == [{"shipper": 130, "good": 2, "action": "consume"}]
    view["players"] = [{"credits": 1}]  # trading: the Leader is kept out of it
    cmd = HeuristicBot._ship(HeuristicBot(), decision, view, Rng.from_seed("s"))
    assert cmd["tasks"] == [{"shipper": 1, "good": 2, "action": "trade"}]


def test_the_heuristic_puts_talents_to_work_only_to_finish_a_tile() -> None:
    me = {"construction": {"development": {"top": {"tile": 5, "cost": 4}, "dice": [7]}}}
    decision = {"talents": [2000, 2001, 2002]}
    col = {1: "develop", 2: "explore"}
    # 4 to finish: 1 on the stack, 1 worker; 2 talents finish it
    assert HeuristicBot._talents(decision, me, "develop", col) == [2000, 2001]
    me["construction"]["development"]["top"]["cost"] = 6  # 4 missing: not finished, kept
    assert HeuristicBot._talents(decision, me, "develop", col) == []
    assert HeuristicBot._talents(decision, me, "explore", col) == []


def test_the_sampler_refuses_ambition_views_so_ismcts_plays_as_the_heuristic(
    ambition: Any,
) -> None:
    rec = play_game("ambition-ismcts", 2, ["heuristic"], options=OPTIONS, max_rounds=2)
    view = engine.observe(rec.state, 0)
    assert view["ambition"] is True
    with pytest.raises(SamplerError, match="Ambition"):
        Sampler(view, Rng.from_seed("x"))
    decision = engine.legal(rec.state, 0) or engine.legal(rec.state, 1)
    assert decision is not None
    seat = 0 if engine.legal(rec.state, 0) else 1
    view = engine.observe(rec.state, seat)
    r1, r2 = Rng.from_seed("a"), Rng.from_seed("a")
    assert IsmctsBot(iterations=8).act(decision, view, r1) == HeuristicBot().act(decision, view, r2)


def test_a_base_game_view_says_nothing_of_ambition() -> None:
    state, _ = engine.new_game("base-view", 2)
    assert "ambition" not in engine.observe(state, 0)


def test_the_heuristic_forecasts_only_when_its_phase_was_selected_anyway() -> None:
    me = {
        "credits": 5,
        "worlds": [{"card": "T1w", "color": "genes"}],
        "goods": {},
        "columns": {"explore": [1], "develop": [], "settle": [], "produce": [], "ship": []},
        "construction": {
            "development": {"top": None, "dice": [], "count": 0},
            "world": {"top": None, "dice": [], "count": 0},
        },
    }
    view = {"seat": 0, "round": 3, "vp_pool": 20, "players": [me, None]}
    decision = {
        "kind": "forecast",
        "selected": "explore",
        "phases": ["explore", "develop", "settle", "produce", "ship"],
        "others": {"1": "ship"},
    }
    bot = HeuristicBot()
    assert bot._forecast(decision, view, Rng.from_seed("f")) == {"kind": "forecast"}
    decision["others"] = {"1": "explore"}  # explore occurs anyway: produce on the empty world
    assert bot._forecast(decision, view, Rng.from_seed("f")) == {
        "kind": "forecast",
        "phase": "produce",
    }


def test_the_heuristic_buys_vp_with_spare_credits_and_all_of_them_late() -> None:
    decision = {"kind": "buy_vp", "spend_max": 6, "credits": 7, "rate": {"credits": 2, "vp": 1}}
    bot = HeuristicBot()
    early = {"vp_pool": 30, "players": [{}, {}]}
    assert bot._buy_vp(decision, early, Rng.from_seed("b")) == {"kind": "buy_vp", "spend": 2}
    late = {"vp_pool": 5, "players": [{}, {}]}
    assert bot._buy_vp(decision, late, Rng.from_seed("b")) == {"kind": "buy_vp", "spend": 6}
