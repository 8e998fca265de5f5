"""URL converters: a game id in a path matches the store's id syntax or the route does not match
(404 instead of an error deeper down)."""

from __future__ import annotations

from werkzeug.routing import BaseConverter


class GameIdConverter(BaseConverter):
    regex = r"[A-Za-z0-9_.:-]{1,128}"
