"""A finished Ambition game replays from its log: ``rfg simulate --ambition --export`` writes it,
``rfg replay --components FILE`` and the Python verifier re-run every command of it against the
rules with the component file it was played with; without that file, or with another one, the
log is refused with a message saying which file to start with."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from events.verify.replay import verify
from rfgcli.main import main
from tests.ambition import SYNTHETIC

ROOT = Path(__file__).resolve().parents[2]


@pytest.fixture(scope="module")
def log(tmp_path_factory: pytest.TempPathFactory) -> Path:
    out = tmp_path_factory.mktemp("ambition-sim")
    args = ["simulate", "--ambition", "--objectives", "--components", str(SYNTHETIC)]
    code = main([*args, "--players", "3", "--games", "1", "--seed", "replay", "--export", str(out)])
    assert code == 0
    return out / "game-00000.jsonl"


def _rfg(*args: str) -> subprocess.CompletedProcess[str]:
    """``rfg`` in a fresh process (the catalogue installs one component file per process, and
    this one has the synthetic file installed)."""
    env = {k: v for k, v in os.environ.items() if k != "RFG_AMBITION_COMPONENTS"}
    return subprocess.run(
        [sys.executable, "-m", "rfgcli.main", *args],
        capture_output=True,
        text=True,
        cwd=ROOT,
        env=env,
        timeout=120,
        check=False,
    )


def test_the_log_is_an_ambition_game_played_to_its_end(log: Path) -> None:
    events = [json.loads(line) for line in log.read_text(encoding="utf-8").splitlines()]
    created = events[0]
    assert created["type"] == "GameCreated" and created["options"]["ambition"] is True
    assert created["components"]["name"].lower().startswith("synthetic")
    assert events[-1]["type"] == "GameEnded"


def test_rfg_replay_with_the_component_file_verifies_it(
    log: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    code = main(["replay", "--components", str(SYNTHETIC), str(log)])
    out = capsys.readouterr()
    assert code == 0, out.err
    assert "consistent and complete" in out.out and "3 players" in out.out


def test_rfg_replay_without_the_component_file_says_to_give_it(log: Path) -> None:
    done = _rfg("replay", str(log))
    assert done.returncode == 1, (done.stdout, done.stderr)
    assert "BAD (inconsistent)" in done.stderr and "component file" in done.stderr
    assert "--components" in done.stderr, done.stderr


def test_rfg_replay_with_another_component_file_names_the_digest(log: Path, tmp_path: Path) -> None:
    other = tmp_path / "other.yaml"
    text = SYNTHETIC.read_text(encoding="utf-8")
    other.write_text(text.replace("name:", "name: Other -", 1), encoding="utf-8")
    created = json.loads(log.read_text(encoding="utf-8").splitlines()[0])
    done = _rfg("replay", "--components", str(other), str(log))
    assert done.returncode == 1, (done.stdout, done.stderr)
    assert created["components"]["digest"] in done.stderr


def test_rfg_replay_refuses_a_bad_component_file(
    log: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    bad = tmp_path / "bad.yaml"
    bad.write_text("format: rfg-ambition-components/1\nname: x\n", encoding="utf-8")
    code = main(["replay", "--components", str(bad), str(log)])
    err = capsys.readouterr().err
    assert code == 2 and "bad.yaml" in err and "dice" in err, err


def test_the_python_verifier_checks_every_command(ambition: Any, log: Path) -> None:
    rows = [json.loads(line) for line in log.read_text(encoding="utf-8").splitlines()]
    verdict = verify(rows)
    assert verdict.ok and verdict.complete, verdict.to_dict()
    # a command changed after the fact no longer produces the recorded events
    at = next(
        i
        for i, e in enumerate(rows)
        if e["type"] == "CommandSubmitted" and e["command"]["kind"] == "assign"
    )
    forged = [dict(e) for e in rows]
    sel = dict(forged[at]["command"]["select"])
    sel["phase"] = "ship" if sel["phase"] != "ship" else "explore"
    forged[at] = {**forged[at], "command": {**forged[at]["command"], "select": sel}}
    bad = verify(forged)
    assert not bad.ok and bad.verdict == "inconsistent", bad.to_dict()
    assert bad.reason.startswith("re-running the recorded command") and bad.bad_seq > at


def test_rfg_simulate_ambition_needs_the_component_file(capsys: pytest.CaptureFixture[str]) -> None:
    env = os.environ.pop("RFG_AMBITION_COMPONENTS", None)
    try:
        code = main(["simulate", "--ambition", "--components", "", "--games", "1"])
    finally:
        if env is not None:
            os.environ["RFG_AMBITION_COMPONENTS"] = env
    assert code == 2 and "RFG_AMBITION_COMPONENTS" in capsys.readouterr().err
