"""Ambition golden logs (tests/golden/ambition): games of random bots with the synthetic component
file (made-up faces and objectives), pinned byte for byte. Each replays and verifies, and re-running
its seed gives the same bytes, so a change that alters Ambition games (a roll, a draw, a bot's
choice, an event field) fails here. While the Ambition rules are being built such a change may be
intended: then ``make golden-ambition`` makes the logs again (the failures below say so), and the
commit says why. The base game's golden logs (test_golden_logs.py) never change."""

from __future__ import annotations

import hashlib
import json
import re
from pathlib import Path
from typing import Any

import pytest

from bots import arena
from engine.canonical import canonical_json
from events.verify.replay import verify_text

GOLDEN = Path(__file__).resolve().parents[2] / "golden" / "ambition"
SUMS = dict(reversed(line.split()) for line in (GOLDEN / "SHA256SUMS").read_text().splitlines())
NAME = re.compile(r"^ambition-rules(\d+)-(\d)p(-objectives)?\.jsonl$")
AGAIN = (
    "If the change is intended (the Ambition rules, the bots or tests/data/ambition-synthetic.yaml "
    "changed on purpose), make the logs again with `make golden-ambition` and commit them, "
    "saying why; otherwise the change alters every Ambition game and is a bug."
)


def test_the_golden_logs_are_the_three_games() -> None:
    assert sorted(SUMS) == sorted(p.name for p in GOLDEN.glob("*.jsonl"))
    games = sorted((m.group(2), bool(m.group(3))) for n in SUMS if (m := NAME.match(n)))
    assert games == [("2", False), ("2", True), ("3", True)], SUMS


@pytest.mark.parametrize("name", sorted(SUMS))
def test_golden_log_is_unchanged_and_verifies(ambition: Any, name: str) -> None:
    data = (GOLDEN / name).read_bytes()
    assert hashlib.sha256(data).hexdigest() == SUMS[name], f"{name} was changed. {AGAIN}"
    created = json.loads(data.split(b"\n", 1)[0])
    assert created["components"]["digest"] == ambition.digest, (
        f"{name} was played with the component file {created['components']['name']!r} "
        f"({created['components']['digest']}), not the synthetic file as it is now "
        f"({ambition.digest}). {AGAIN}"
    )
    verdict = verify_text(data)
    assert verdict.ok, f"{name} no longer replays: {verdict.to_dict()}. {AGAIN}"
    assert verdict.summary["over"] and verdict.commands > 100


@pytest.mark.parametrize("name", sorted(SUMS))
def test_rerunning_a_golden_seed_gives_the_same_log(ambition: Any, name: str) -> None:
    m = NAME.match(name)
    assert m is not None
    rules, players, objectives = int(m.group(1)), int(m.group(2)), bool(m.group(3))
    game = f"{players}p" + ("-objectives" if objectives else "")
    rec = arena.play_game(
        f"golden-ambition-v{rules}-{game}:0",
        players,
        ["random"],
        options={"ambition": True, "objectives": objectives},
        rules=rules,
    )
    produced = "".join(canonical_json(e) + "\n" for e in rec.events).encode("utf-8")
    assert hashlib.sha256(produced).hexdigest() == SUMS[name], (
        f"re-running the seed of {name} gives another log. {AGAIN}"
    )
