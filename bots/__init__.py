"""Bot policies: pure functions of (what a seat may see, its legal choices, an rng) -> command.

Bots see only their own seat's decision (``engine.legal``) and, when they ask for it, their own
seat's view (``engine.observe(state, seat)``); they never read hidden state.
"""

from __future__ import annotations

from .base import Bot, get_bot, register_bot
from .heuristic import HeuristicBot
from .ismcts import IsmctsBot
from .random_bot import RandomBot

__all__ = ["Bot", "HeuristicBot", "IsmctsBot", "RandomBot", "get_bot", "register_bot"]
