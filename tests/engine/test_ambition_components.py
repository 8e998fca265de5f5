"""The Ambition component file: the loader accepts the synthetic file and the shipped tiles, and a
bad file is refused with a message naming the file and the field."""

from __future__ import annotations

import copy
import json
from pathlib import Path
from typing import Any

import pytest
import yaml

from engine.ambition import components
from engine.ambition.components import ComponentsError

SYNTHETIC = Path(__file__).resolve().parents[1] / "data" / "ambition-synthetic.yaml"


def _doc() -> dict[str, Any]:
    doc: dict[str, Any] = yaml.safe_load(SYNTHETIC.read_text(encoding="utf-8"))
    return doc


def test_the_synthetic_file_loads_with_every_kind_of_face_and_condition() -> None:
    comp = components.load_file(SYNTHETIC)
    assert "made up" in comp.name and comp.tiles_shipped
    faces = {f for d in comp.dice.values() for f in d.faces}
    assert {"wild", "produce$", "explore/produce", "produce/ship$"} <= faces
    for die in comp.dice.values():  # both dice show two-phase and $ faces
        assert any("/" in f for f in die.faces) and any(f.endswith("$") for f in die.faces)
    assert len(comp.objectives) >= 8
    assert {o.condition["type"] for o in comp.objectives} == set(components.CONDITIONS)
    assert (len(comp.factions), len(comp.home_worlds), len(comp.game_tiles)) == (14, 7, 4)


def test_the_digest_is_the_documents_and_json_loads_the_same(tmp_path: Path) -> None:
    comp = components.load_file(SYNTHETIC)
    as_json = tmp_path / "c.json"
    as_json.write_text(json.dumps(_doc()), encoding="utf-8")
    assert components.load_file(as_json).digest == comp.digest
    changed = _doc()
    changed["objectives"][0]["talents"] = 5
    assert components.load(changed, "x.yaml").digest != comp.digest


def test_a_file_with_its_own_tiles_uses_them() -> None:
    doc = _doc()
    tiles = components.shipped_tiles()
    doc["factions"] = tiles["factions"][:2]
    doc["home_worlds"] = tiles["home_worlds"][:1]
    doc["game_tiles"] = tiles["game_tiles"][:1]
    comp = components.load(doc, "own.yaml")
    assert not comp.tiles_shipped and len(comp.factions) == 2


def _edit(path: str, value: Any) -> dict[str, Any]:
    """The synthetic document with one field replaced (``value`` None deletes it)."""
    doc = copy.deepcopy(_doc())
    *parents, last = path.split(".")
    node: Any = doc
    for part in parents:
        node = node[int(part)] if part.isdigit() else node[part]
    key: Any = int(last) if last.isdigit() else last
    if value is None:
        del node[key]
    else:
        node[key] = value
    return doc


#: (the edit, the field path the error names, words of the problem)
BAD = [
    ("dice.black.faces", None, "dice.black.faces", "give the six faces"),
    ("dice.orange", None, "dice.orange", "faces are required"),
    ("dice.black.faces", [{"phases": ["ship"]}] * 5, "dice.black.faces", "6 faces, not 5"),
    ("dice.orange.count", 8, "dice.orange.count", "holds 9 Entrepreneur dice"),
    ("dice.black.faces.3", {"phases": ["trade"]}, "dice.black.faces[3].phases[0]", "not 'trade'"),
    (
        "dice.black.faces.0",
        {"phases": ["ship", "ship"]},
        "dice.black.faces[0].phases",
        "two different",
    ),
    ("dice.black.faces.5", {"phases": ["wild"], "dollar": True}, "dice.black.faces[5].dollar", "$"),
    ("objectives", None, "objectives", "at least 6"),
    (
        "objectives.2.condition",
        {"type": "planets", "min": 2},
        "objectives[2].condition.type",
        "one of",
    ),
    ("objectives.2.condition", {"type": "worlds"}, "objectives[2].condition.min", "needs min"),
    (
        "objectives.1.condition",
        {"type": "worlds", "min": 2, "colors": ["purple"]},
        "objectives[1].condition.colors[0]",
        "not 'purple'",
    ),
    (
        "objectives.13.condition",
        {"type": "all_of", "conditions": [{"type": "credits", "min": -1}]},
        "objectives[13].condition.conditions[0].min",
        "at least 0",
    ),
    ("objectives.0.check", "lunch", "objectives[0].check", "not 'lunch'"),
    ("objectives.1.id", 1, "objectives[1].id", "given twice"),
    ("format", "rfg-ambition-components/9", "format", "rfg-ambition-components/1"),
    ("name", "", "name", "non-empty"),
    ("dice.black.colour", "black", "dice.black.colour", "not a field"),
]


@pytest.mark.parametrize(("edit", "value", "field", "words"), BAD, ids=[b[2] for b in BAD])
def test_a_bad_file_is_refused_naming_the_file_and_the_field(
    edit: str, value: Any, field: str, words: str
) -> None:
    with pytest.raises(ComponentsError) as refused:
        components.load(_edit(edit, value), "host/components.yaml")
    assert refused.value.source == "host/components.yaml" and refused.value.path == field
    assert str(refused.value).startswith(f"host/components.yaml: {field}: ")
    assert words in str(refused.value)


def test_tiles_are_given_all_three_or_none() -> None:
    doc = _doc()
    doc["factions"] = components.shipped_tiles()["factions"]
    with pytest.raises(ComponentsError, match=r"x.yaml: game_tiles: give factions, home_worlds"):
        components.load(doc, "x.yaml")


def test_bad_tiles_name_the_field() -> None:
    doc = _doc()
    tiles = components.shipped_tiles()
    doc.update(factions=tiles["factions"], home_worlds=tiles["home_worlds"])
    doc["game_tiles"] = copy.deepcopy(tiles["game_tiles"])
    doc["game_tiles"][1]["world"]["color"] = "teal"
    with pytest.raises(ComponentsError, match=r"x.yaml: game_tiles\[1\].world.color: .*not 'teal'"):
        components.load(doc, "x.yaml")
    doc["game_tiles"][1]["world"]["color"] = "gray"
    doc["game_tiles"][1]["id"] = 30
    with pytest.raises(ComponentsError, match=r"game_tiles\[1\].id: must be at least 56"):
        components.load(doc, "x.yaml")


@pytest.mark.parametrize(
    ("part", "first"), [("factions", 10), ("home_worlds", 10), ("game_tiles", 56)]
)
def test_numbered_tiles_name_the_list_and_the_id(part: str, first: int) -> None:
    """Factions, home worlds and game tiles: a non-empty list, each id its own, first..99."""
    doc = _doc()
    tiles = components.shipped_tiles()
    doc.update({k: copy.deepcopy(tiles[k]) for k in ("factions", "home_worlds", "game_tiles")})
    refusals: list[tuple[Any, str]] = [
        ({}, f"x.yaml: {part}: must be a list, not a mapping"),
        ([], f"x.yaml: {part}: must not be empty"),
        ([7], f"x.yaml: {part}[0]: must be a mapping, not a number"),
        ([{"id": first - 1}], f"x.yaml: {part}[0].id: must be at least {first}, not {first - 1}"),
        ([{"id": 100}], f"x.yaml: {part}[0].id: must be at most 99, not 100"),
        ([{"id": first}, {"id": first}], f"x.yaml: {part}[1].id: {first} is given twice"),
    ]
    for items, message in refusals:
        doc[part] = items
        with pytest.raises(ComponentsError) as refused:
            components.load(doc, "x.yaml")
        assert str(refused.value) == message


def test_unreadable_and_unparsable_files_name_the_file(tmp_path: Path) -> None:
    with pytest.raises(ComponentsError, match="nowhere.yaml: cannot be read"):
        components.load_file(tmp_path / "nowhere.yaml")
    broken = tmp_path / "broken.yaml"
    broken.write_text("dice: [\n", encoding="utf-8")
    with pytest.raises(ComponentsError, match="broken.yaml: is not valid YAML or JSON"):
        components.load_file(broken)
    listed = tmp_path / "list.yaml"
    listed.write_text("- 1\n", encoding="utf-8")
    with pytest.raises(ComponentsError, match="list.yaml: must be a mapping"):
        components.load_file(listed)
