"""The seed's commitment per rules version: from version 4 GameCreated names its game and the
commitment binds the game with the seed, so games dealt one seed publish unrelated commitments;
versions 1-3 publish exactly what they did."""

from __future__ import annotations

import hashlib

import pytest

import engine
from engine.phases.setup import RULES_VERSION


def _sha(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()


def test_a_new_game_names_its_game_and_commits_to_seed_and_game() -> None:
    assert RULES_VERSION >= 4
    created = engine.create("s3cret", 3, game="g-1")[0]
    assert created["rules"] == RULES_VERSION and created["game"] == "g-1"
    assert created["seed_commitment"] == _sha(b"rfg/commit\x00s3cret\x00g-1")
    state = engine.replay(engine.create("s3cret", 3, game="g-1"))
    assert state.game == "g-1"
    assert engine.observe(state, "public")["seed_commitment"] == created["seed_commitment"]
    assert engine.from_dict(engine.to_dict(state)).game == "g-1"


def test_games_dealt_one_seed_publish_unrelated_commitments() -> None:
    a = engine.create("one-deal", 4, game="a")
    b = engine.create("one-deal", 4, game="b")
    assert a[0]["seats"] == b[0]["seats"]  # the same deal ...
    assert a[0]["seed_commitment"] != b[0]["seed_commitment"]  # ... not paired by its commitment
    views = [engine.observe(engine.replay(x), "public") for x in (a, b)]
    assert views[0]["seed_commitment"] != views[1]["seed_commitment"]


def test_a_game_without_a_name_is_named_by_its_seed() -> None:
    created = engine.create("sim:0", 2)[0]
    assert created["game"] == "sim:0"
    assert created["seed_commitment"] == _sha(b"rfg/commit\x00sim:0\x00sim:0")


def test_older_rules_publish_what_they_did() -> None:
    v3 = engine.create("s", 2, rules=3, game="ignored")[0]
    assert "game" not in v3 and v3["seed_commitment"] == _sha(b"rfg/commit\x00s")
    v2 = engine.create("s", 2, rules=2, game="ignored")[0]
    assert "game" not in v2 and v2["seed_sha256"] == _sha(b"s")
    assert engine.observe(engine.replay([v3]), "public")["seed_commitment"] == _sha(
        b"rfg/commit\x00s"
    )


@pytest.mark.parametrize("game", ["", "a\x00b"])
def test_a_bad_game_name_is_refused(game: str) -> None:
    with pytest.raises(engine.IllegalCommand, match="game's name") as info:
        engine.create("s", 2, game=game)
    assert info.value.field == "game"


def test_a_game_name_that_is_not_text_is_refused() -> None:
    # the pure engine refuses it in words; the mypyc build (make fast) at its typed boundary
    with pytest.raises((engine.IllegalCommand, TypeError)):
        engine.create("s", 2, game=5)  # type: ignore[arg-type]


def test_a_rules_4_creation_without_its_game_does_not_fold() -> None:
    created = dict(engine.create("s", 2, game="g")[0])
    del created["game"]
    with pytest.raises(engine.InvalidEvent, match="names its game"):
        engine.replay([created])
