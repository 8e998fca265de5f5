"""Every development power id of the catalogue has a scenario file in which it really fires: the
base game's 63 and Ambition's 20 (the shipped tiles, run with the synthetic component file; the two
powers that act only at setup are checked by a game's setup instead)."""

from __future__ import annotations

from pathlib import Path

import yaml

from engine import scenario
from engine.catalogue import CARDS
from engine.powers.registry import all_power_ids
from tests.ambition import install_synthetic

ROOT = Path(__file__).resolve().parents[1] / "scenarios"


def fired(events: list[dict]) -> set[str]:
    out: set[str] = set()
    for e in events:
        out.update(e.get("powers", ()))
        if e["type"] == "AssignmentSealed":
            out.update(u for u in e["used"] if u != "dictate")
    return out


#: Ambition powers that act at setup only (a scenario opens after setup): Negotiators' dice and
#: Interstellar Bank's credits are checked in tests/engine/test_ambition_powers.py
SETUP_ONLY = {"negotiators", "interstellar_bank"}


def test_every_power_fires_in_a_scenario(ambition: object) -> None:
    declared: dict[str, list[str]] = {}
    missing_fire: list[str] = []
    for path in sorted(ROOT.rglob("*.yaml")):
        spec = yaml.safe_load(path.read_text(encoding="utf-8"))
        if spec.get("ambition"):
            install_synthetic()
        powers = spec.get("powers") or []
        if not powers:
            continue
        report = scenario.run(spec)
        seen = fired(report["events"])
        for seat in report["snapshot"]["seats"]:  # end-game bonuses fire at scoring
            seen.update(CARDS[k].power_id for k, v in seat["bonuses"].items() if v)
        for pid in powers:
            declared.setdefault(pid, []).append(path.name)
            if pid not in seen:
                missing_fire.append(f"{path.name}: {pid}")
    ids = all_power_ids()
    assert len(ids) == 63 + 20
    uncovered = [pid for pid in ids if pid not in declared and pid not in SETUP_ONLY]
    assert not uncovered, f"power ids without a scenario file: {uncovered}"
    assert not missing_fire, f"declared powers that never fired: {missing_fire}"
