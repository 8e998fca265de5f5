"""The ``--components FILE`` option of the commands that play or re-run Ambition games
(``rfg simulate``, ``rfg replay``): which Ambition component file the process installs."""

from __future__ import annotations

import argparse

from events import config


def add_argument(p: argparse.ArgumentParser, what: str) -> None:
    p.add_argument(
        "--components",
        metavar="FILE",
        default=config.value("RFG_AMBITION_COMPONENTS"),
        help=f"the Ambition component file {what} (default: $RFG_AMBITION_COMPONENTS; the "
        "tests use tests/data/ambition-synthetic.yaml)",
    )


def install(path: str | None) -> str | None:
    """Install the component file at ``path`` (None: nothing to install); what is wrong, or None."""
    if not path:
        return None
    from engine import catalogue
    from engine.ambition import components

    try:
        catalogue.install(components.load_file(path))
    except (components.ComponentsError, catalogue.CatalogueError) as exc:
        return str(exc)
    return None
