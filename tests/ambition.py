"""The tests' Ambition components: the synthetic file (made-up faces and objectives, the shipped
tiles) and how a test process installs it. Tests usually take the ``ambition`` fixture
(tests/conftest.py); code that loops over scenario files calls ``install_synthetic`` itself for
the files that say ``ambition: true``."""

from __future__ import annotations

from pathlib import Path

from engine import catalogue
from engine.ambition import components

#: MADE-UP faces and objectives (the printed ones are not known to the project)
SYNTHETIC = Path(__file__).resolve().parent / "data" / "ambition-synthetic.yaml"


def install_synthetic() -> components.Components:
    """Install the synthetic components in this process (once; they stay installed)."""
    comp = components.load_file(SYNTHETIC)
    catalogue.install(comp)
    return comp
