"""Coming back to a seat (house rule, engine/presence.py): the command ``back`` is taken from any
seat of a game under way, owed decision or not, causes no event and changes nothing in the game;
it is refused with extra fields and once the game is over."""

from __future__ import annotations

import pytest

import engine
from bots import get_bot
from engine.canonical import canonical_json
from engine.rng import Rng


def _midgame(players: int) -> engine.GameState:
    """A game some rounds in, played by random bots."""
    state, _events = engine.new_game("presence", players)
    bot, rng = get_bot("random"), Rng(3)
    for _ in range(40):
        seat = min(engine.pending(state))
        decision = engine.legal(state, seat)
        assert decision is not None
        engine.play(state, seat, bot.act(decision, None, rng))
    return state


def test_back_changes_nothing_from_any_seat() -> None:
    state = _midgame(players=3)
    before = canonical_json(engine.to_dict(state))
    for seat in range(3):  # pending or not
        assert engine.decide(state, seat, {"kind": "back"}) == []
    assert canonical_json(engine.to_dict(state)) == before


def test_back_is_just_its_kind_and_not_after_the_end() -> None:
    state = _midgame(players=2)
    with pytest.raises(engine.IllegalCommand) as exc:
        engine.decide(state, 0, {"kind": "back", "seat": 1})
    assert exc.value.code == "fields"
    engine.play(state, 1, {"kind": "resign"})
    with pytest.raises(engine.IllegalCommand) as exc:
        engine.decide(state, 0, {"kind": "back"})
    assert exc.value.code == "game_over"
