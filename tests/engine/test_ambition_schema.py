"""docs/ambition-components.schema.json is generated from the loader's vocabulary and agrees
with the loader: both accept the synthetic file and the shipped tiles, both refuse every bad file
of tests/engine/test_ambition_components.py."""

from __future__ import annotations

import copy
from typing import Any

import pytest
from jsonschema import Draft202012Validator

from engine.ambition import components
from engine.ambition.components import ComponentsError
from rfgcli import componentschema

from .test_ambition_components import BAD, _doc, _edit

VALIDATOR = Draft202012Validator(componentschema.schema())


def test_the_published_schema_is_current() -> None:
    Draft202012Validator.check_schema(componentschema.schema())
    assert componentschema.SCHEMA.read_text(encoding="utf-8") == componentschema.schema_json(), (
        "docs/ambition-components.schema.json is stale: run python -m rfgcli.componentschema"
    )


def _with_tiles(doc: dict[str, Any]) -> dict[str, Any]:
    tiles = components.shipped_tiles()
    return dict(
        doc,
        factions=tiles["factions"],
        home_worlds=tiles["home_worlds"],
        game_tiles=tiles["game_tiles"],
    )


@pytest.mark.parametrize("with_tiles", [False, True], ids=["shipped-tiles", "own-tiles"])
def test_both_accept_the_synthetic_file_and_the_shipped_tiles(with_tiles: bool) -> None:
    doc = _with_tiles(_doc()) if with_tiles else _doc()
    assert not list(VALIDATOR.iter_errors(doc))
    components.load(doc, "synthetic.yaml")


@pytest.mark.parametrize(("edit", "value", "field", "words"), BAD, ids=[b[2] for b in BAD])
def test_both_refuse_each_bad_file(edit: str, value: Any, field: str, words: str) -> None:
    doc = _edit(edit, value)
    with pytest.raises(ComponentsError):
        components.load(doc, "bad.yaml")
    if field == "objectives[1].id":  # ids given twice: the loader's check, beyond a schema
        return
    assert list(VALIDATOR.iter_errors(doc)), f"the schema accepts what the loader refuses: {field}"


def _tile_edits() -> list[tuple[str, Any]]:
    def bad_color(d: dict[str, Any]) -> None:
        d["game_tiles"][1]["world"]["color"] = "teal"

    def low_id(d: dict[str, Any]) -> None:
        d["game_tiles"][0]["id"] = 30

    def high_id(d: dict[str, Any]) -> None:
        d["home_worlds"][0]["id"] = 100

    def no_world(d: dict[str, Any]) -> None:
        del d["home_worlds"][0]["world"]

    def bad_kind(d: dict[str, Any]) -> None:
        d["factions"][0]["developments"][0]["kind"] = "passive"

    def bad_gain(d: dict[str, Any]) -> None:
        d["factions"][0]["worlds"][0]["immediate"]["dice_gained"][0]["to"] = "hand"

    def two_of_three(d: dict[str, Any]) -> None:
        del d["game_tiles"]

    return [
        (f.__name__, f)
        for f in (bad_color, low_id, high_id, no_world, bad_kind, bad_gain, two_of_three)
    ]


@pytest.mark.parametrize(("name", "edit"), _tile_edits(), ids=[n for n, _ in _tile_edits()])
def test_both_refuse_bad_tiles(name: str, edit: Any) -> None:
    doc = copy.deepcopy(_with_tiles(_doc()))
    edit(doc)
    with pytest.raises(ComponentsError):
        components.load(doc, "bad.yaml")
    assert list(VALIDATOR.iter_errors(doc)), f"the schema accepts {name}"
