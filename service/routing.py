"""URL converters: a game id in a path matches the store's id syntax or the route does not match
(404 instead of an error deeper down); integers (seat numbers) are ASCII digits only."""

from __future__ import annotations

from werkzeug.routing import BaseConverter, IntegerConverter


class GameIdConverter(BaseConverter):
    regex = r"[A-Za-z0-9_.:-]{1,128}"


class AsciiIntConverter(IntegerConverter):
    """``<int:...>`` with ASCII digits only (werkzeug's ``\\d+`` also matches other scripts'
    digits, so ``/seats/٣`` would be seat 3), at most 9 of them."""

    regex = r"[0-9]{1,9}"
