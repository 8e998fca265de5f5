"""A game id has one spelling (``events.store.port.GAME_ID_PATTERN``): the store refuses what the
routes do not match, the lobby's cursors and the client developers' manual (openapi.yaml) say the
same, and nothing past the pattern slips through (a trailing newline, a 129th character)."""

from __future__ import annotations

from pathlib import Path

import pytest
import yaml
from werkzeug.exceptions import NotFound

from events.errors import InvalidBatch
from events.store.port import GAME_ID_PATTERN, check_game_id
from service.lobby import CURSOR_RE
from tests.service.conftest import make_app

SPEC = yaml.safe_load((Path(__file__).resolve().parents[2] / "openapi.yaml").read_text())
GOOD = ["9f1c2ab0e4d1", "a", "ladder:weekly.2-3_x", "x" * 128]
BAD = ["", "x" * 129, "a b", "a/b", "é", "abc\n", "a%2Fb"]


def test_openapi_spells_the_game_id_as_the_code_does() -> None:
    params = SPEC["components"]["parameters"]
    assert params["GameId"]["schema"]["pattern"] == f"^{GAME_ID_PATTERN}$"
    cursors = [  # the lobby's cursors ("<created>_<game id>"; a ladder's games page by number)
        p["schema"]["pattern"]
        for name, path in SPEC["paths"].items()
        if not name.startswith("/ladders/")
        for op in path.values()
        if isinstance(op, dict)
        for p in op.get("parameters", [])
        if isinstance(p, dict) and p.get("name") == "cursor"
    ]
    assert cursors and all(c.endswith(f"_{GAME_ID_PATTERN}$") for c in cursors)


@pytest.mark.parametrize("game_id", GOOD)
def test_a_good_id_is_routed_stored_and_cursored(game_id: str) -> None:
    check_game_id(game_id)
    adapter = make_app("memory://game-id-pattern").url_map.bind("localhost")
    assert adapter.match(f"/games/{game_id}", method="GET")[1]["game_id"] == game_id
    assert CURSOR_RE.fullmatch(f"1735725600.5_{game_id}")


@pytest.mark.parametrize("game_id", BAD)
def test_a_bad_id_is_refused_everywhere(game_id: str) -> None:
    with pytest.raises(InvalidBatch):
        check_game_id(game_id)
    assert not CURSOR_RE.fullmatch(f"1735725600.5_{game_id}")
    if game_id:  # (an empty one leaves "//", which the routes merge into another path)
        adapter = make_app("memory://game-id-pattern").url_map.bind("localhost")
        with pytest.raises(NotFound):
            adapter.match(f"/games/{game_id}/log", method="GET")
