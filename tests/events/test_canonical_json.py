"""One canonical JSON: ``engine.state.canonical_json`` (the standard library) writes logs, hashes
and envelopes; the projections are written by orjson (``events.games.projections.view_json``) for speed.
Both give the same bytes for everything a game produces: every event type the engine folds (from
whole games and the conformance scenarios) and the views rendered from the games' states."""

from __future__ import annotations

from pathlib import Path

import orjson
import yaml

import engine
from bots import arena
from engine import fold, scenario
from engine.state import canonical_json
from events.games.projections import view_json

SCENARIOS = Path(__file__).resolve().parents[1] / "scenarios"


def test_orjson_and_the_canonical_encoder_agree_on_every_event_and_view() -> None:
    seen: set[str] = set()
    for players in (2, 3, 4, 5):
        rec = arena.play_game(f"canonical-{players}", players, ["heuristic", "random"])
        state = None
        for i, event in enumerate(rec.events):
            seen.add(event["type"])
            assert view_json(event) == canonical_json(event), event["type"]
            assert orjson.loads(canonical_json(event)) == event
            state = engine.evolve(state, event)
            if i % 25 == 0:
                for viewer, view in engine.observe_all(state).items():
                    assert view_json(view) == canonical_json(view), viewer
    for kind in ("resign", "abandon"):  # leaving a game (engine/leaving.py)
        state, _events = engine.new_game(f"canonical-{kind}", 2)
        for event in engine.play(state, 0, {"kind": kind}):
            seen.add(event["type"])
            assert view_json(event) == canonical_json(event), event["type"]
    for path in sorted(SCENARIOS.rglob("*.yaml")):  # the rare events: shortfalls, returned tiles
        for event in scenario.run(yaml.safe_load(path.read_text(encoding="utf-8")))["events"]:
            seen.add(event["type"])
            assert view_json(event) == canonical_json(event), (path.name, event["type"])
    assert seen == set(fold._FOLDS) | set(fold._CREATORS)  # every event type there is
