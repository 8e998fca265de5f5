"""docs/events.md and docs/events.schema.json are the events as the code makes them: every type the
engine folds, its fields and their JSON types, its visibility, the modules that emit and fold it."""

from __future__ import annotations

import json
import re

import pytest
from jsonschema import Draft202012Validator

from engine import fold
from rfgcli import eventdoc, logschema

STALE = "is stale: run python -m rfgcli.eventdoc"


@pytest.fixture(scope="module")
def events() -> list[dict]:
    return list(eventdoc.samples())


@pytest.fixture(scope="module")
def catalogue(events: list[dict]) -> dict[str, eventdoc.Entry]:
    return eventdoc.catalogue(events)


def folded() -> set[str]:
    return set(fold._FOLDS) | set(fold._CREATORS)


def test_the_event_catalogue_in_docs_is_current(catalogue: dict[str, eventdoc.Entry]) -> None:
    assert eventdoc.DOC.read_text(encoding="utf-8") == eventdoc.markdown(catalogue), (
        f"docs/events.md {STALE}"
    )
    assert eventdoc.SCHEMA.read_text(encoding="utf-8") == eventdoc.schema_json(catalogue), (
        f"docs/events.schema.json {STALE}"
    )
    events = eventdoc.schema(catalogue)
    assert logschema.LOG_SCHEMA.read_text(encoding="utf-8") == logschema.log_schema_json(events), (
        f"docs/log.schema.json {STALE}"
    )
    spec = logschema.OPENAPI.read_text(encoding="utf-8")
    assert spec == logschema.openapi_text(events, spec), (
        f"openapi.yaml's generated log-line components {STALE}"
    )


def test_every_folded_event_type_is_in_the_doc_and_the_schema() -> None:
    text = eventdoc.DOC.read_text(encoding="utf-8")
    sections = set(re.findall(r"^## (\w+)$", text, re.M))
    rows = set(re.findall(r"^\| \[`(\w+)`\]", text, re.M))
    defs = set(json.loads(eventdoc.SCHEMA.read_text(encoding="utf-8"))["$defs"])
    for where, found in (("sections", sections), ("summary rows", rows), ("schema", defs)):
        assert folded() <= found, f"missing from docs/events {where}: {sorted(folded() - found)}"


def test_every_folded_type_is_sampled_and_emitted(catalogue: dict[str, eventdoc.Entry]) -> None:
    """A type no sample shows would be documented without fields: add a scenario that makes it."""
    assert set(catalogue) == folded()
    assert [t for t, e in catalogue.items() if not e.shape.seen] == []
    assert [t for t, e in catalogue.items() if not e.emitted_by] == []
    assert set(eventdoc.emitters()) <= folded(), "an ev() call makes a type nothing folds"
    assert [(t, e.unseen) for t, e in catalogue.items() if e.unseen] == []


def test_the_schema_accepts_what_the_engine_emits(events: list[dict]) -> None:
    schema = json.loads(eventdoc.SCHEMA.read_text(encoding="utf-8"))
    Draft202012Validator.check_schema(schema)
    validator = Draft202012Validator(schema)
    per_type: dict[str, int] = {}
    for e in events:  # the first 50 of each type is plenty, and quick
        if per_type.setdefault(e["type"], 0) < 50:
            per_type[e["type"]] += 1
            assert not list(validator.iter_errors(e)), e
    bad = {"type": "GoodShipped", "v": 1, "seat": 0, "cargo": 1}
    assert list(validator.iter_errors(bad))
