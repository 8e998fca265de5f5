"""URL converters: a game id in a path matches the store's id syntax or the route does not match
(404 instead of an error deeper down); integers (seat numbers) are ASCII digits only."""

from __future__ import annotations

from werkzeug.routing import BaseConverter, IntegerConverter

from events.store.port import GAME_ID_PATTERN


class GameIdConverter(BaseConverter):
    regex = GAME_ID_PATTERN


class AsciiIntConverter(IntegerConverter):
    """``<int:...>`` with ASCII digits only (werkzeug's ``\\d+`` also matches other scripts'
    digits, so ``/seats/٣`` would be seat 3), at most 9 of them."""

    regex = r"[0-9]{1,9}"
