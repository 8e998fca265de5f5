"""Every conformance scenario under tests/scenarios passes (the rulebook's examples among them)."""

from __future__ import annotations

from pathlib import Path

import pytest
import yaml

from engine import scenario
from tests.ambition import install_synthetic

ROOT = Path(__file__).resolve().parents[1] / "scenarios"
FILES = sorted(ROOT.rglob("*.yaml"))


def load(path: Path) -> dict:
    return yaml.safe_load(path.read_text(encoding="utf-8"))


@pytest.mark.parametrize("path", FILES, ids=[str(p.relative_to(ROOT)) for p in FILES])
def test_scenario_passes(path: Path) -> None:
    spec = load(path)
    if spec.get("ambition"):
        install_synthetic()  # Ambition files are written against the synthetic components
    report = scenario.run(spec)
    assert report["ok"], "\n".join(report["diffs"])


def test_a_wrong_expectation_is_reported() -> None:
    spec = load(ROOT / "rules" / "scoring-example.yaml")
    spec["expect"]["seats"][0]["score"] = 24
    report = scenario.run(spec)
    assert not report["ok"]
    assert report["diffs"] == ["expect.seats[0].score: expected 24, got 25"]


def test_an_unexpectedly_accepted_command_is_reported() -> None:
    spec = load(ROOT / "rules" / "recruit-lose-four-gain-one.yaml")
    spec["script"][0]["error"] = "recruit"
    report = scenario.run(spec)
    assert any("was accepted" in d for d in report["diffs"])


def test_bad_scenario_files_name_the_problem() -> None:
    with pytest.raises(scenario.ScenarioError, match="unknown die colour 'pink'"):
        scenario.build({"step": "ship", "seats": [{"cup": ["pink"]}, {}]})
    with pytest.raises(scenario.ScenarioError, match="unknown card"):
        scenario.build({"step": "ship", "seats": [{"tableau": ["T99d"]}, {}]})
