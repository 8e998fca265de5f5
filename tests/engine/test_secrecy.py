"""Secrecy: after every event of random games, no view and no redacted event shows a tile hidden
in another seat's stacks (or the bag, or abandoned), another seat's unrevealed dice, or the seed
before the end."""

from __future__ import annotations

import pytest

import engine
from bots.arena import play_game

from .secrecy import check_event, check_view


@pytest.mark.parametrize("players", [2, 3, 4, 5])
def test_views_and_redacted_events_leak_nothing(players: int) -> None:
    viewers: list[int | str] = ["public", *range(players)]

    def after_event(state: engine.GameState, event: dict) -> None:
        for v in viewers:
            check_event(state, v, engine.redact(event, v))
            if event["type"] in (
                "DiceRolled",
                "AssignmentSealed",
                "TilesPlaced",
                "PhasesRevealed",
                "TileCompleted",
                "RoundStarted",
                "GameEnded",
                "TilesScouted",
            ):
                check_view(state, v, engine.observe(state, v))

    for i in range(6):
        play_game(f"secrecy:{players}:{i}", players, on_event=after_event)


def test_the_checker_catches_a_leak() -> None:
    rec = play_game("secrecy:leak", 3)
    state = engine.replay(rec.events[:200])
    seat = next(p for p in state.players if len(p.dev_stack) > 1 or len(p.world_stack) > 1)
    other = (seat.seat + 1) % 3
    view = engine.observe(state, other)
    stack = seat.dev_stack if len(seat.dev_stack) > 1 else seat.world_stack
    view["players"][seat.seat]["construction"]["leak"] = {"tile": stack[1]}
    with pytest.raises(AssertionError, match="hidden tiles"):
        check_view(state, other, view)
