"""Ambition through the API: a table asks for it with ``options.expansions: ["ambition"]``; a
server without a component file refuses it (422 ``ambition-unavailable``, saying what is missing
and how to supply it); ``RFG_AMBITION_COMPONENTS`` installs the file at start, and a bad file
stops the start naming the file and the field."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from engine import catalogue
from events import config as environment
from service.app import create_app
from tests.ambition import SYNTHETIC

from .conftest import ValidatingClient, make_app, new_game

HUMANS = [{"kind": "human"}, {"kind": "human"}]


def test_a_server_without_a_component_file_refuses_ambition_tables(
    api: ValidatingClient, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(catalogue, "_INSTALLED", [])  # as in a server started without one
    r = api.post("/games", json={"seats": HUMANS, "options": {"expansions": ["ambition"]}})
    assert r.status_code == 422
    p = r.get_json()
    assert p["type"] == "/problems/ambition-unavailable" and "expansions" in p["errors"]
    assert "RFG_AMBITION_COMPONENTS" in p["detail"] and "die faces" in p["detail"]
    assert "docs/ambition.md" in p["detail"]
    # the base game is still served
    assert api.post("/games", json={"seats": HUMANS}).status_code == 201


@pytest.mark.parametrize(
    ("options", "field"),
    [
        ({"expansions": ["seafarers"]}, "options.expansions"),
        ({"objectives": True}, "options.objectives"),
        ({"expansions": ["ambition"], "objectives": "yes"}, "options.objectives"),
        ({"ambition": True}, "options.ambition"),
    ],
)
def test_bad_expansion_options_are_invalid_requests(
    api: ValidatingClient, options: dict[str, Any], field: str
) -> None:
    r = api.post("/games", json={"seats": HUMANS, "options": options}, validate=False)
    assert r.status_code == 422 and r.get_json()["type"] == "/problems/invalid-request"
    assert field in r.get_json()["errors"]


def test_an_ambition_table_is_an_ambition_game(api: ValidatingClient, ambition: Any) -> None:
    body = {"seats": HUMANS, "options": {"expansions": ["ambition"], "objectives": True}}
    r = api.post("/games", json=body)
    assert r.status_code == 201, r.get_json()
    game = r.get_json()
    assert game["options"] == {"ambition": True, "first_game": False, "objectives": True}
    log = api.get(f"/games/{game['game_id']}/log").get_data(as_text=True)
    assert ambition.digest in log
    view = api.get(game["links"]["view"]).get_json()["view"]
    assert view["pending"] == {"0": "start_tiles", "1": "start_tiles"}


def test_the_environment_installs_the_component_file(ambition: Any) -> None:
    app = make_app("memory://ambition-env", AMBITION_COMPONENTS=str(SYNTHETIC))
    assert app.config["AMBITION_COMPONENTS"] == str(SYNTHETIC)
    assert catalogue.installed() is ambition or catalogue.installed().digest == ambition.digest
    assert (
        environment.read({"RFG_AMBITION_COMPONENTS": "x.yaml"}).get("RFG_AMBITION_COMPONENTS")
        == "x.yaml"
    )


def test_a_bad_component_file_stops_the_start_naming_file_and_field(tmp_path: Path) -> None:
    bad = tmp_path / "components.yaml"
    text = SYNTHETIC.read_text(encoding="utf-8").replace("count: 9", "count: 8")
    bad.write_text(text, encoding="utf-8")
    with pytest.raises(ValueError) as stopped:
        create_app({"STORE_URL": "memory://ambition-bad", "AMBITION_COMPONENTS": str(bad)})
    message = str(stopped.value)
    assert message.startswith(f"RFG_AMBITION_COMPONENTS: {bad}: dice.orange.count: ")
    missing = tmp_path / "nowhere.yaml"
    with pytest.raises(ValueError, match="nowhere.yaml: cannot be read"):
        create_app({"STORE_URL": "memory://ambition-bad", "AMBITION_COMPONENTS": str(missing)})


def _removal_seed() -> tuple[str, int]:
    """A seed whose Ambition deal gives some seat a start tile that removes a die."""
    import engine

    for i in range(500):
        state = engine.replay(engine.create(f"api-removal:{i}", 2, {"ambition": True})[:1])
        for p in state.players:
            if p.start_removals:
                return f"api-removal:{i}", p.seat
    raise AssertionError("no seed deals a removing start tile")


def test_a_seat_chooses_the_die_its_start_tile_removes(
    api: ValidatingClient, ambition: Any
) -> None:
    seed, seat = _removal_seed()
    gid, tokens = new_game(api, seed=seed, options={"expansions": ["ambition"]})
    auth = {"Authorization": f"Bearer {tokens[seat]}"}
    view = api.get(f"/games/{gid}/seats/{seat}/view", headers=auth).get_json()["view"]
    decision = view["decision"]
    assert decision["kind"] == "start_tiles" and decision["removals"]
    choice = decision["removals"][0]["choices"][-1]
    command = {
        "kind": "start_tiles",
        "development": decision["options"][0]["development"],
        "remove": [choice],
    }
    body = {"command": command, "command_id": "remove-1"}
    r = api.post(f"/games/{gid}/seats/{seat}/commands", json=body, headers=auth)
    assert r.status_code in (200, 201, 202), r.get_json()
    me = api.get(f"/games/{gid}/seats/{seat}/view", headers=auth).get_json()["view"]
    mine = me["players"][seat]
    owned = [d["die"] for place in ("cup", "citizenry") for d in mine[place]]
    assert choice not in owned
