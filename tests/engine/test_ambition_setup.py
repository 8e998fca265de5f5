"""Ambition setup: the Ambition pools, 2 Home + 1 Leader die in the cup, the die-removal choice,
the objectives dealt, the components recorded - and base games unchanged beside them.

Every test takes the ``ambition`` fixture (tests/conftest.py): the synthetic, made-up component
file installed in this process.
"""

from __future__ import annotations

import hashlib
from collections import Counter
from pathlib import Path
from typing import Any

import pytest

import engine
from bots import arena
from engine import catalogue
from engine.ambition import components
from engine.canonical import canonical_json
from engine.errors import ChanceMismatch, IllegalCommand, InvalidEvent
from engine.state import GameState

GOLDEN = Path(__file__).resolve().parents[1] / "golden"
SUMS = dict(reversed(line.split()) for line in (GOLDEN / "SHA256SUMS").read_text().splitlines())
AMBITION = {"ambition": True}


def _start_grants(p: Any, where: str) -> Counter[str]:
    """Dice of each colour the seat's faction and home world put in ``where``."""
    keys = [c.key for c in catalogue.FACTIONS[p.faction].cards] + [
        catalogue.HOME_WORLDS[p.home].key
    ]
    return Counter(
        g["color"]
        for k in keys
        for g in catalogue.CARDS[k].immediate.get("dice_gained") or []
        if g["to"] == where
    )


def _colors(dice: list[int]) -> Counter[str]:
    return Counter(catalogue.DIE_COLOR[d] for d in dice)


def _created(seed: str, players: int, options: dict[str, Any]) -> GameState:
    return engine.replay(engine.create(seed, players, options)[:1])


def test_rerunning_golden_seeds_with_ambition_installed_gives_the_same_logs(ambition: Any) -> None:
    """A base game in a process that has Ambition installed is byte for byte the same game."""
    for name in ("rules5-2p.jsonl", "rules5-3p.jsonl"):
        players = int(name[-8])
        rec = arena.play_game(f"golden-v5-{players}p:0", players, ["random"], rules=5)
        produced = "".join(canonical_json(e) + "\n" for e in rec.events).encode("utf-8")
        assert hashlib.sha256(produced).hexdigest() == SUMS[name]


def test_base_games_deal_only_base_components(ambition: Any) -> None:
    for i in range(40):
        state = _created(f"base:{i}", 5, {})
        assert "ambition" not in state.options and not state.components
        assert all(p.faction <= 9 and p.home <= 9 for p in state.players)
        assert max(state.bag) <= 55 and len(state.supply) == 7
        owned = [d for p in state.players for d in p.owned_dice()]
        assert sorted(owned + [d for pile in state.supply for d in pile]) == list(range(111))
        assert "components" not in state.to_dict() and "objectives" not in state.to_dict()


def test_ambition_games_deal_from_the_base_and_ambition_pools(ambition: Any) -> None:
    """Ambition rulebook, Setup: "Add the new dice and the faction and home world tiles to those
    in the base game. Add the 5 new game tiles to the bag." """
    factions: set[int] = set()
    homes: set[int] = set()
    for i in range(40):
        state = _created(f"amb:{i}", 5, AMBITION)
        factions |= {p.faction for p in state.players}
        homes |= {p.home for p in state.players}
        dealt = {t for p in state.players for t in p.start_tiles}
        assert sorted(state.bag + sorted(dealt)) == catalogue.tile_ids(True)
        assert len(state.supply) == 9
        owned = [d for p in state.players for d in p.owned_dice()]
        every = sorted(owned + [d for pile in state.supply for d in pile])
        assert every == list(range(111 + 38))
    assert factions & set(range(1, 10)) and factions & set(range(10, 24))
    assert homes & set(range(1, 10)) and homes & set(range(10, 17))


def test_each_player_starts_with_two_home_dice_and_a_leader_in_the_cup(ambition: Any) -> None:
    """Ambition rulebook, Setup: "each player puts 2 Home (white) dice and 1 Leader (black) die in
    the cup (not 3 Home dice)"; the Citizenry still gets its 2 Home dice."""
    for i in range(10):
        for p in _created(f"cup:{i}", 4, AMBITION).players:
            if p.start_removals:
                continue  # a removal waits for the player's choice (tested below)
            assert _colors(p.cup) == Counter({"white": 2, "black": 1}) + _start_grants(p, "cup")
            want = Counter({"white": 2}) + _start_grants(p, "citizenry")
            assert _colors(p.citizenry) == want
        for p in _created(f"cup:{i}", 4, {}).players:
            assert _colors(p.cup) == Counter({"white": 3}) + _start_grants(p, "cup")


def _seat_with(faction: int) -> tuple[GameState, int]:
    """The first Ambition game whose deal gives some seat this faction."""
    for i in range(500):
        state = _created(f"removal:{i}", 5, AMBITION)
        for p in state.players:
            if p.faction == faction:
                return state, p.seat
    raise AssertionError(f"no seed deals faction {faction}")


def test_a_removing_faction_offers_starting_dice_and_dice_other_tiles_granted(
    ambition: Any,
) -> None:
    """Ambition rulebook, Die Removal: "you may choose any of your starting dice or dice granted
    by other tiles." Faction 12's world grants two Genes dice and removes one die."""
    state, seat = _seat_with(12)
    p = state.players[seat]
    own = [d for d in p.citizenry if catalogue.DIE_COLOR[d] == "green"]
    assert len(own) == 2  # granted by the removing world itself
    decision = engine.legal(state, seat)
    assert decision is not None and len(decision["removals"]) == 1
    choices = decision["removals"][0]["choices"]
    assert decision["removals"][0]["card"] == "F12w"
    assert not set(own) & set(choices)
    assert _colors(choices)["white"] == 4 and _colors(choices)["black"] == 1
    # the rulebook's typical choice is the default: a Home die from the Citizenry
    (default,) = decision["default_remove"]
    assert default in p.citizenry and catalogue.DIE_COLOR[default] == "white"
    # a die the removing tile granted itself is refused, the state untouched
    dev = p.start_tiles[0]
    with pytest.raises(IllegalCommand, match="starting dice") as refused:
        engine.decide(state, seat, {"kind": "start_tiles", "development": dev, "remove": [own[0]]})
    assert refused.value.field == "remove[0]"
    with pytest.raises(IllegalCommand, match="one per start tile"):
        engine.decide(state, seat, {"kind": "start_tiles", "development": dev, "remove": []})
    # the player's choice: the Leader die leaves the cup for the supply
    leader = next(d for d in p.cup if catalogue.DIE_COLOR[d] == "black")
    events = engine.play(
        state, seat, {"kind": "start_tiles", "development": dev, "remove": [leader]}
    )
    assert events[0]["removed"] == [leader]
    assert leader not in p.owned_dice() and leader in state.supply[catalogue.COLOR_INDEX["black"]]
    assert not p.start_removals and "start_removals" not in p.to_dict()


def test_without_a_choice_the_home_die_from_the_citizenry_is_removed(ambition: Any) -> None:
    state, seat = _seat_with(12)
    p = state.players[seat]
    before = _colors(p.citizenry)
    events = engine.play(state, seat, {"kind": "start_tiles", "development": p.start_tiles[0]})
    (removed,) = events[0]["removed"]
    assert catalogue.DIE_COLOR[removed] == "white"
    assert _colors(p.citizenry) == before - Counter({"white": 1})


def test_a_first_game_removes_the_default_die_itself(ambition: Any) -> None:
    for i in range(500):
        events = engine.create(f"removal:{i}", 5, {**AMBITION, "first_game": True})
        chosen = [e for e in events if e["type"] == "StartTilesChosen" and "removed" in e]
        if chosen:
            state = engine.replay(events)
            p = state.players[chosen[0]["seat"]]
            assert not p.start_removals and chosen[0]["auto"] is True
            assert all(catalogue.DIE_COLOR[d] == "white" for d in chosen[0]["removed"])
            return
    raise AssertionError("no first game dealt a removing tile")


def test_a_base_game_start_tile_choice_takes_no_removal(ambition: Any) -> None:
    state = _created("plain", 2, {})
    p = state.players[0]
    assert "removals" not in (engine.legal(state, 0) or {})
    with pytest.raises(IllegalCommand, match="removes a die"):
        engine.decide(
            state, 0, {"kind": "start_tiles", "development": p.start_tiles[0], "remove": [0]}
        )


def test_game_created_records_the_components_and_replay_demands_them(ambition: Any) -> None:
    events = engine.create("rec", 2, AMBITION)
    assert events[0]["components"] == {"name": ambition.name, "digest": ambition.digest}
    assert events[0]["options"] == {"ambition": True, "first_game": False, "objectives": False}
    assert "objectives" not in events[0]
    other = dict(events[0], components={"name": "Other", "digest": "ab" * 32})
    with pytest.raises(InvalidEvent, match="ab" * 32 + r".*start with that component file"):
        engine.replay([other])


def test_objectives_deal_six_of_the_installed_tiles(ambition: Any) -> None:
    """Ambition rulebook, Objectives: "shuffle the objective tiles face down. Select 6 to use" """
    seen: set[int] = set()
    for i in range(20):
        events = engine.create(f"obj:{i}", 3, {**AMBITION, "objectives": True})
        dealt = events[0]["objectives"]
        assert len(dealt) == 6 == len(set(dealt))
        assert set(dealt) <= {o.id for o in ambition.objectives}
        assert engine.replay(events).objectives == dealt
        seen |= set(dealt)
        tampered = dict(events[0], objectives=sorted(dealt))
        if tampered["objectives"] != dealt:
            with pytest.raises(ChanceMismatch, match="objectives"):
                engine.replay([tampered])
    assert len(seen) > 6


def test_installing_again_is_a_no_op_and_another_file_is_refused(ambition: Any) -> None:
    assert catalogue.install(ambition) is False
    dice = len(catalogue.DIE_COLOR)
    doc = components.shipped_tiles()
    other = components.load(
        {
            "format": components.FORMAT,
            "name": "Another made-up set",
            "dice": {
                c: {"name": n, "count": k, "faces": [{"phases": ["ship"]}] * 6}
                for c, (n, k) in components.NEW_DICE.items()
            },
            "objectives": [
                {
                    "id": i,
                    "name": f"Made-up {i}",
                    "check": "ship",
                    "condition": {"type": "credits", "min": i},
                    "talents": 2,
                }
                for i in range(1, 7)
            ],
            "factions": doc["factions"],
            "home_worlds": doc["home_worlds"],
            "game_tiles": doc["game_tiles"],
        },
        "other.yaml",
    )
    with pytest.raises(catalogue.CatalogueError, match="cannot be installed beside"):
        catalogue.install(other)
    assert len(catalogue.DIE_COLOR) == dice


def test_ambition_dice_ids_follow_the_base_dice(ambition: Any) -> None:
    extra = {"red": 10, "purple": 2, "blue": 3, "brown": 3, "green": 3, "yellow": 3}
    assert catalogue.DIE_COLOR[:111] == [
        c for c in catalogue.DIE_COLORS for _ in range(catalogue.DICE[c].count)
    ]
    assert catalogue.DIE_COLOR[111:] == (
        [c for c, n in extra.items() for _ in range(n)] + ["black"] * 5 + ["orange"] * 9
    )
    assert catalogue.DIE_FACES[135] == ambition.dice["black"].faces
    assert catalogue.DICE["black"].name == "Leader" and catalogue.DICE["orange"].count == 9
    # Ambition rulebook, New Die Colors: a Leader die matches every world colour in Consume, an
    # Entrepreneur die none
    assert catalogue.consume_matches(135, "genes") and not catalogue.consume_matches(140, "genes")


def test_face_codes() -> None:
    assert catalogue.face_phases("wild") == catalogue.PHASES
    assert catalogue.face_phases("explore") == ("explore",)
    assert catalogue.face_phases("explore/produce$") == ("explore", "produce")
    assert catalogue.face_dollar("produce$") and not catalogue.face_dollar("explore/produce")
    assert components.face_code(["produce", "explore"], True) == "explore/produce$"


def test_the_sampler_declines_ambition_games_so_searching_bots_fall_back(ambition: Any) -> None:
    from engine.rng import Rng
    from engine.sampler import Sampler, SamplerError

    state, _ = engine.new_game("sampler", 3, {**AMBITION, "first_game": True})
    view = engine.observe(state, 0)
    with pytest.raises(SamplerError, match="Ambition"):
        Sampler(view, Rng.from_seed("x"))
