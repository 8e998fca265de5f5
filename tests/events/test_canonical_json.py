"""One canonical JSON (``engine.canonical``) writes logs, hashes, envelopes and the stored views: it
gives the standard library's bytes (the format's definition, written out here) for everything a
game produces - every event type the engine folds (from whole games and the conformance
scenarios), the views of the games' states, and the views the projections splice together."""

from __future__ import annotations

import json
from pathlib import Path

import orjson
import pytest
import yaml

import engine
from bots import arena
from engine import fold, scenario
from engine.canonical import canonical_json
from events.games.projections import render_views

_REFERENCE = json.JSONEncoder(
    sort_keys=True, separators=(",", ":"), ensure_ascii=False, allow_nan=False
)

SCENARIOS = Path(__file__).resolve().parents[1] / "scenarios"


def test_the_canonical_json_is_the_reference_on_every_event_and_view(
    request: pytest.FixtureRequest,
) -> None:
    seen: set[str] = set()
    for players in (2, 3, 4, 5):
        rec = arena.play_game(f"canonical-{players}", players, ["heuristic", "random"])
        state = None
        for i, event in enumerate(rec.events):
            seen.add(event["type"])
            assert canonical_json(event) == _REFERENCE.encode(event), event["type"]
            assert orjson.loads(canonical_json(event)) == event
            state = engine.evolve(state, event)
            if i % 25 == 0:
                for viewer, view in engine.observe_all(state).items():
                    assert canonical_json(view) == _REFERENCE.encode(view), viewer
                stored = render_views("g-canonical", state, "2026-01-01T00:00:00Z", None)
                for name, text in stored.items():  # the seats' sides spliced in as fragments
                    assert text == _REFERENCE.encode(orjson.loads(text)), name
    for kind in ("resign", "abandon", "abort"):  # leaving a game (engine/leaving.py)
        state, _events = engine.new_game(f"canonical-{kind}", 2)
        for event in engine.play(state, 0, {"kind": kind}):
            seen.add(event["type"])
            assert canonical_json(event) == _REFERENCE.encode(event), event["type"]
    for path in sorted(SCENARIOS.rglob("*.yaml")):  # the rare events: shortfalls, returned tiles
        spec = yaml.safe_load(path.read_text(encoding="utf-8"))
        if spec.get("ambition"):  # the synthetic Ambition components (tests/conftest.py)
            request.getfixturevalue("ambition")
        for event in scenario.run(spec)["events"]:
            seen.add(event["type"])
            assert canonical_json(event) == _REFERENCE.encode(event), (path.name, event["type"])
    assert seen == set(fold._FOLDS) | set(fold._CREATORS)  # every event type there is
