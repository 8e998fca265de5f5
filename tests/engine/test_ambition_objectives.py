"""Ambition objectives and talent counters, with the synthetic component file (made-up objectives).

Random Ambition games with objectives keep the invariants (talent counters held once, never in a
cup or Citizenry), replay to the same state, and leak no seat's talent counters during Assign;
each condition of the vocabulary means what ``engine.ambition.objectives`` says. The rules
themselves are checked by the conformance scenarios under ``tests/scenarios/ambition``.
"""

from __future__ import annotations

from typing import Any

import pytest

import engine
from bots.arena import play_game
from engine.ambition import objectives
from engine.catalogue import CARDS, OBJECTIVES, TALENT_BASE
from engine.state import GameState, PlayerState

from .invariants import check
from .secrecy import check_event, check_view

OPTIONS = {"ambition": True, "objectives": True}


@pytest.mark.parametrize("players", [2, 3, 4, 5])
def test_objective_playouts_keep_invariants_and_replay(ambition: Any, players: int) -> None:
    claimed = talents_used = 0
    for i in range(4):
        rec = play_game(f"objectives:{players}:{i}", players, options=OPTIONS, on_event=check)
        assert rec.finished and rec.state.winners
        assert engine.state_hash(engine.replay(rec.events)) == engine.state_hash(rec.state)
        kinds = [e["type"] for e in rec.events]
        claimed += kinds.count("ObjectiveClaimed")
        talents_used += sum(
            len(e.get("talents", ())) for e in rec.events if e["type"] == "AssignmentSealed"
        )
        for s in rec.state.scores:  # unused talent counters: 1 VP apiece, not a tie-breaker
            p = rec.state.players[s["seat"]]
            assert s.get("talents", 0) == objectives.owned_talents(p)
            assert s["tiebreak"] == len(p.cup) + p.credits
    assert claimed and talents_used, "the games never claimed an objective or used a talent"


def test_talent_counters_stay_behind_the_screen(ambition: Any) -> None:
    viewers: list[int | str] = ["public", 0, 1, 2]
    seen_assign_with_talents = 0

    def after_event(state: GameState, event: dict[str, Any]) -> None:
        nonlocal seen_assign_with_talents
        for v in viewers:
            check_event(state, v, engine.redact(event, v))
            if event["type"] in ("DiceRolled", "AssignmentSealed", "ObjectiveClaimed"):
                check_view(state, v, engine.observe(state, v))
        if event["type"] == "AssignmentSealed" and event.get("talents"):
            seen_assign_with_talents += 1

    for i in range(4):
        play_game(f"objectives:secrecy:{i}", 3, options=OPTIONS, on_event=after_event)
    assert seen_assign_with_talents, "no seat put a talent to work: the check saw nothing"


def test_the_checker_catches_talents_shown_during_assign(ambition: Any) -> None:
    rec = play_game("objectives:leak", 3, options=OPTIONS)
    events = rec.events
    # the first Assign step after some seat holds talent counters
    st = None
    for n in range(1, len(events)):
        s = engine.replay(events[:n])
        if s.step == "assign" and any(p.talents for p in s.players):
            st = s
            break
    assert st is not None
    holder = next(p for p in st.players if p.talents)
    other = (holder.seat + 1) % 3
    view = engine.observe(st, other)
    assert "talents" not in view["players"][holder.seat]
    assert engine.observe(st, holder.seat)["players"][holder.seat]["talents"] == len(holder.talents)
    view["players"][holder.seat]["talents"] = len(holder.talents)
    with pytest.raises(AssertionError, match="talent counters during Assign"):
        check_view(st, other, view)


def test_the_public_view_shows_the_objectives_and_who_claimed_them(ambition: Any) -> None:
    rec = play_game("objectives:view", 2, options=OPTIONS)
    view = engine.observe(rec.state, "public")
    shown = view["objectives"]
    assert [o["id"] for o in shown] == rec.state.objectives and len(shown) == 6
    claims = {e["objective"]: e["seats"] for e in rec.events if e["type"] == "ObjectiveClaimed"}
    for o in shown:
        assert (o["claimed"] or {}).get("seats") == claims.get(o["id"])


def test_a_base_game_has_no_objectives_in_its_views(ambition: Any) -> None:
    rec = play_game("objectives:base", 2)
    assert "objectives" not in engine.observe(rec.state, "public")
    assert "claims" not in rec.state.to_dict()
    assert not any(e["type"] == "ObjectiveClaimed" for e in rec.events)


# --- the condition vocabulary -------------------------------------------------------------------


def _seat(**kw: Any) -> tuple[GameState, PlayerState]:
    p = PlayerState(seat=0, faction=1, home=1, **kw)
    state = GameState(seed="s", rng=0, players=[p], options=OPTIONS, bag=[], supply=[], vp_pool=0)
    return state, p


def _world(color: str, least: int = 0) -> str:
    return next(k for k, c in CARDS.items() if c.is_world and c.color == color and c.cost >= least)


def test_world_and_development_conditions(ambition: Any) -> None:
    genes = _world("genes", 2)
    state, p = _seat(worlds=[_world("novelty"), genes, _world("gray")])
    assert objectives.met({"type": "worlds", "min": 3}, state, p)
    assert not objectives.met({"type": "worlds", "min": 4}, state, p)
    assert objectives.count({"type": "worlds", "min": 1, "colors": ["genes"]}, state, p) == 1
    cond = {"type": "worlds", "min": 1, "colors": ["genes"], "cost_at_least": CARDS[genes].cost + 1}
    assert not objectives.met(cond, state, p)
    assert objectives.count({"type": "distinct_world_colors", "min": 3}, state, p) == 3
    devs = [k for k, c in CARDS.items() if not c.is_world and k.startswith("T")]
    p.devs = devs[:3]
    least = max(CARDS[k].cost for k in p.devs)
    assert (
        objectives.count({"type": "developments", "min": 0, "cost_at_least": least}, state, p) >= 1
    )
    assert objectives.met({"type": "developments", "min": 3}, state, p)


def test_dice_are_counted_anywhere_in_the_empire_but_talents_are_not(ambition: Any) -> None:
    from engine.catalogue import AMBITION_DICE_OF_COLOR

    white = AMBITION_DICE_OF_COLOR["white"]
    black = AMBITION_DICE_OF_COLOR["black"]
    state, p = _seat(cup=[white[0]], citizenry=[white[1], black[0]], dev_dice=[white[2]])
    p.columns[0] = [white[3], TALENT_BASE]
    p.goods = {"H1": [white[4]]}
    p.talents = [TALENT_BASE + 1]
    assert objectives.count({"type": "dice", "min": 0}, state, p) == 6
    assert objectives.count({"type": "dice", "min": 0, "colors": ["black"]}, state, p) == 1
    # a Leader (black) die is a Home (white) die for a count of die colours
    assert objectives.count({"type": "distinct_die_colors", "min": 0}, state, p) == 1
    assert objectives.count({"type": "citizenry", "min": 0, "colors": ["white"]}, state, p) == 1


def test_goods_credits_chips_shipping_construction_and_phases(ambition: Any) -> None:
    state, p = _seat(credits=8, vp=5, dev_stack=[1, 2], world_stack=[3])
    assert objectives.met({"type": "credits", "min": 8}, state, p)
    assert not objectives.met({"type": "credits", "min": 9}, state, p)
    assert objectives.met({"type": "vp_chips", "min": 5}, state, p)
    assert objectives.met({"type": "construction", "min": 3}, state, p)
    p.marks = {"shipped_trade": 2, "shipped_consume": 1}
    assert objectives.count({"type": "shipped", "min": 0}, state, p) == 3
    assert objectives.count({"type": "shipped", "min": 0, "tasks": ["trade"]}, state, p) == 2
    state.phases = [1, 2]
    only = {"type": "selected_phases", "phases": ["develop", "settle"]}
    assert objectives.met(only, state, p)
    state.phases = [1, 2, 4]
    assert not objectives.met(only, state, p)
    both = {"type": "all_of", "conditions": [{"type": "credits", "min": 8}, only]}
    assert not objectives.met(both, state, p)


def test_a_claimed_objective_is_no_longer_available(ambition: Any) -> None:
    from engine.fold import Ctx

    oid = next(o.id for o in OBJECTIVES.values() if o.condition["type"] == "credits")
    obj = OBJECTIVES[oid]
    state, p = _seat(credits=int(obj.condition["min"]))
    state.objectives = [oid]
    ctx = Ctx(state)
    objectives.check(state, ctx, obj.check)
    assert [e["type"] for e in ctx.events] == ["ObjectiveClaimed"]
    assert p.talents == list(range(TALENT_BASE, TALENT_BASE + obj.talents))
    assert objectives.available(state) == []
    objectives.check(state, ctx, obj.check)  # still met, but the tile is face down
    assert len(ctx.events) == 1 and len(p.talents) == obj.talents
    assert TALENT_BASE not in objectives.talent_supply(state)
