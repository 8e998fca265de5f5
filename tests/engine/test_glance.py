"""A card at a glance (``engine.powers.glance``): the phase icons and the one-line power the table
shows on each tableau row agree with the rules code. Every power scenario is played, and the phases
in which each power really fires are exactly the phases the glance gives it."""

from __future__ import annotations

from collections import defaultdict
from pathlib import Path

import yaml

from engine import scenario
from engine.catalogue import CARDS, PHASES, Card, is_ambition_card
from engine.powers.glance import phases, summary
from tests.ambition import install_synthetic

from .test_power_coverage import fired

ROOT = Path(__file__).resolve().parents[1] / "scenarios"


def _base_cards() -> list[Card]:
    """The base game's cards (a process may have Ambition's installed beside them)."""
    return [c for c in CARDS.values() if not is_ambition_card(c.key)]


def _phases_fired() -> dict[str, set[str | None]]:
    """power id -> the phases it fired in over every scenario (None: outside a phase, as Assign)."""
    out: dict[str, set[str | None]] = defaultdict(set)
    for path in sorted(ROOT.rglob("*.yaml")):
        spec = yaml.safe_load(path.read_text(encoding="utf-8"))
        if spec.get("ambition"):
            install_synthetic()
        if not spec.get("powers"):
            continue
        phase: str | None = None
        for e in scenario.run(spec)["events"]:
            if e["type"] == "PhaseStarted":
                phase = e["phase"]
            elif e["type"] == "PhaseEnded":
                phase = None
            for pid in fired([e]):
                out[pid].add(phase)
    return out


def test_a_power_fires_in_exactly_the_phases_its_icons_show() -> None:
    seen = _phases_fired()
    wrong = []
    for c in _base_cards():
        if c.power_id is None:
            continue
        got = seen[c.power_id]
        if c.dev_kind == "immediate":  # once, when the tile completes: no phase icon
            want: set[str | None] = {"develop"}
        elif c.dev_kind == "reassign":  # during Assign, before any phase
            want = {None}
        else:
            want = set(phases(c))
        if got != want or (c.dev_kind != "power" and phases(c)):
            wrong.append(f"{c.name}: fires in {sorted(map(str, got))}, icons {phases(c)}")
    assert not wrong, wrong


def test_every_card_has_one_line_and_its_phases_in_order() -> None:
    for c in _base_cards():
        line = summary(c)
        assert line.strip() and "\n" not in line and len(line) <= 100, (c.key, line)
        assert not any(w in line for w in ("None", "{", "[", "_")), (c.key, line)
        ph = phases(c)
        assert list(ph) == [p for p in PHASES if p in ph], (c.key, ph)
        if c.is_world:
            assert ph == ()
        elif c.dev_kind == "power":  # an ongoing power acts in some phase
            assert ph, c.key
        if c.endgame_bonus:
            assert " · End: +" in line, (c.key, line)


def test_lines_name_what_the_effects_say() -> None:
    piracy, recycling, colonial = CARDS["F1d"], CARDS["T20d"], CARDS["T6d"]
    assert phases(piracy) == ("ship",)
    assert summary(piracy) == "Ship end: +$1 per 2 Military in Citizenry"
    assert phases(recycling) == ("develop", "settle")
    assert summary(recycling) == "+$1 per development or world completed"
    assert phases(colonial) == () and summary(colonial) == "Reassign 1 worker to Settle"
    assert summary(CARDS["H4"]) == "No goods · Start with $8"
