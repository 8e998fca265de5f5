"""Ambition in the API: the host's component file, installed when the app starts, and the tables
that ask for the expansion.

The printed Ambition components the project does not have (the Leader and Entrepreneur die faces,
the objective tiles) come from one file the host names in ``RFG_AMBITION_COMPONENTS``
(``docs/ambition.md``). ``init_app`` loads and installs it (``engine.catalogue.install``); a bad
file stops the start with an error naming the file and the field. Without one, a table asking for
Ambition is refused: 422 ``ambition-unavailable``, saying what is missing and how to supply it.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from flask import Flask

from engine import catalogue
from events import config as environment
from service.errors import Problem

UNAVAILABLE = (
    "this server cannot play Ambition: it has no Ambition component file. The Leader and "
    "Entrepreneur die faces and the objective tiles are not shipped with the server; the host "
    "supplies them in a component file (docs/ambition.md) named by RFG_AMBITION_COMPONENTS, "
    "and restarts the server. Leave out expansions to play the base game."
)


def init_app(app: Flask) -> None:
    """Install the component file ``AMBITION_COMPONENTS`` names (``RFG_AMBITION_COMPONENTS``),
    if any. Raises ``ValueError`` naming the variable, the file and the field of a bad file."""
    environment.install_ambition(app.config.get("AMBITION_COMPONENTS"))


def require_available(options: Mapping[str, Any]) -> None:
    """Refuse a table whose options ask for Ambition when no component file is installed."""
    if "ambition" in options.get("expansions", ()) and catalogue.installed() is None:
        raise Problem("ambition-unavailable", UNAVAILABLE, errors={"expansions": [UNAVAILABLE]})
