"""The fold itself refuses events that cannot follow the state, even without commands to re-run."""

from __future__ import annotations

import copy

import pytest

import engine
from bots import arena


def test_a_phase_ended_naming_another_phase_is_refused() -> None:
    events = copy.deepcopy(arena.play_game("fold-check", 3, ["random"]).events)
    i = next(k for k, e in enumerate(events) if e["type"] == "PhaseEnded")
    engine.replay(events[: i + 1])  # the genuine event folds
    events[i]["phase"] = "ship" if events[i]["phase"] != "ship" else "explore"
    with pytest.raises(engine.InvalidEvent, match="the phase under way is"):
        engine.replay(events[: i + 1])
