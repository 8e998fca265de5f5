"""docs/powers.md is the registry as it is: every power id, hook, handler and caller."""

from __future__ import annotations

from pathlib import Path

from engine.powers.registry import registered
from engine.powers.table import markdown

DOC = Path(__file__).resolve().parents[2] / "docs" / "powers.md"


def test_the_power_table_in_docs_is_current() -> None:
    assert DOC.read_text(encoding="utf-8") == markdown(), (
        "docs/powers.md is stale: run python -m engine.powers.table > docs/powers.md"
    )


def test_every_registered_power_is_in_the_table_with_a_caller() -> None:
    text = markdown()
    assert all(f"| `{pid}` |" in text for pid in registered())
    assert "(not called)" not in text  # a hook nobody consults would be a power that never fires
