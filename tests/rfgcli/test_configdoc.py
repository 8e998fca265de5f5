"""docs/configuration.md is the environment as events/config.py reads it, and the one table of it."""

from __future__ import annotations

import re
from pathlib import Path

from events.config import VARIABLES
from rfgcli import configdoc

ROOT = Path(__file__).resolve().parents[2]


def test_the_configuration_table_in_docs_is_current() -> None:
    assert configdoc.DOC.read_text(encoding="utf-8") == configdoc.markdown(), (
        "docs/configuration.md is stale: run python -m rfgcli.configdoc"
    )


def test_the_table_has_a_row_per_variable_with_its_default() -> None:
    rows = re.findall(r"^\| `(\w+)` \|.*\| (.*) \|$", configdoc.markdown(), re.M)
    assert [name for name, _ in rows] == list(VARIABLES)
    assert dict(rows)["RFG_STORE_PREFIX"] == "`rfg`"
    assert dict(rows)["RFG_RATE_LIMITS"] == "on"
    assert dict(rows)["RFG_LIMIT_CLAIM"] == "`30 per minute`"


def test_no_other_page_keeps_a_table_of_the_variables() -> None:
    """A row that starts with a variable's name is a hand-kept copy of the generated table: link to
    docs/configuration.md instead."""
    pages = [ROOT / "README.md", *sorted((ROOT / "docs").glob("*.md"))]
    pages += [ROOT / "events" / "config.py", ROOT / "service" / "config.py"]
    row = re.compile(r"^\| *`{1,2}(RFG_\w+|REDIS_URL)`{1,2}", re.M)
    copies = [
        f"{page.relative_to(ROOT)}: {m.group(1)}"
        for page in pages
        if page != configdoc.DOC
        for m in row.finditer(page.read_text(encoding="utf-8"))
    ]
    assert not copies, copies
