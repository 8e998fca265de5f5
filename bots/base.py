"""The bot interface and the registry of built-in bots by name."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, Protocol

from engine.rng import Rng


class Bot(Protocol):
    name: str
    #: whether ``act`` needs the seat's observation (building it costs time in simulations)
    needs_view: bool

    def act(
        self, decision: dict[str, Any], view: dict[str, Any] | None, rng: Rng
    ) -> dict[str, Any]:
        """Return a command for the pending ``decision`` (from ``engine.legal``)."""
        ...


_BOTS: dict[str, Callable[[], Bot]] = {}


def register_bot(name: str, factory: Callable[[], Bot]) -> None:
    _BOTS[name] = factory


def get_bot(name: str) -> Bot:
    try:
        return _BOTS[name]()
    except KeyError:
        raise ValueError(f"unknown bot {name!r}; built-in bots: {sorted(_BOTS)}") from None


def bot_names() -> list[str]:
    return sorted(_BOTS)
