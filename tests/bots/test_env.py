"""The Gym-style environment and its documented example."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

import engine
from bots.env import GalaxyEnv
from engine.rng import Rng

ROOT = Path(__file__).resolve().parents[2]


def _episode(env: GalaxyEnv, seed: int) -> tuple[list[str], float]:
    obs, info = env.reset(seed=seed)
    r = Rng.from_seed(f"agent:{seed}")
    kinds, reward, done = [], 0.0, False
    while not done:
        assert obs == engine.observe(env.state, env.seat)  # type: ignore[arg-type]
        assert info["legal"] is not None and obs["decision"] == info["legal"]
        assert info["actions"] and all(a["kind"] == info["legal"]["kind"] for a in info["actions"])
        kinds.append(info["legal"]["kind"])
        obs, reward, terminated, truncated, info = env.step(r.choice(info["actions"]))
        assert reward == 0.0 or terminated
        done = terminated or truncated
    return kinds, reward


def test_one_seat_against_bots_to_the_end() -> None:
    env = GalaxyEnv(players=3, seat=1, opponents=["heuristic", "random"])
    kinds, reward = _episode(env, 7)
    assert env.state is not None and env.state.over
    assert reward == (1 / len(env.state.winners) if 1 in env.state.winners else 0.0)
    assert {"assign", "manage"} <= set(kinds)
    with pytest.raises(RuntimeError):
        env.step({"kind": "assign"})
    assert _episode(GalaxyEnv(players=3, seat=1, opponents=["heuristic", "random"]), 7) == (
        kinds,
        reward,
    )


def test_an_illegal_command_is_refused() -> None:
    env = GalaxyEnv()
    env.reset(seed=1)
    with pytest.raises(engine.IllegalCommand):
        env.step({"kind": "ship", "tasks": []})


def test_the_documented_example_runs() -> None:
    out = subprocess.run(
        [sys.executable, str(ROOT / "docs" / "env_example.py")],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=120,
        check=True,
    )
    lines = out.stdout.strip().splitlines()
    assert len(lines) == 3 and all(line.startswith(f"episode {i}:") for i, line in enumerate(lines))
    assert len((ROOT / "docs" / "env_example.py").read_text().splitlines()) <= 22
