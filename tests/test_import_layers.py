"""The layers the folders show are enforced: ``make lint`` runs ``lint-imports`` with the contracts
in ``pyproject.toml``, and an import that points up a layer, or from the service, the workers or
the ladders straight to the Redis client, breaks it. Checked on a copy of the
packages, so the tree as it is passes and the same tree with one planted upward import fails,
naming the contract it breaks."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
PACKAGES = ("engine", "bots", "events", "service", "workers", "ladder", "rfgcli")
LINT_IMPORTS = Path(sys.executable).parent / "lint-imports"


def lint_imports(tree: Path) -> subprocess.CompletedProcess[str]:
    env = {**os.environ, "PYTHONPATH": str(tree)}
    return subprocess.run(
        [str(LINT_IMPORTS), "--no-cache", "--config", str(tree / "pyproject.toml")],
        cwd=tree,
        env=env,
        capture_output=True,
        text=True,
        timeout=120,
    )


@pytest.fixture
def tree(tmp_path: Path) -> Path:
    """A copy of the packages and pyproject.toml (no compiled modules, no caches)."""
    ignore = shutil.ignore_patterns("__pycache__", "*.so", "*.pyc")
    for package in PACKAGES:
        shutil.copytree(ROOT / package, tmp_path / package, ignore=ignore)
    shutil.copy(ROOT / "pyproject.toml", tmp_path / "pyproject.toml")
    return tmp_path


def test_the_tree_as_it_is_keeps_every_contract(tree: Path) -> None:
    result = lint_imports(tree)
    assert result.returncode == 0, result.stdout + result.stderr
    assert "0 broken" in result.stdout


@pytest.mark.parametrize(
    ("module", "planted", "contract"),
    [
        ("engine/rng.py", "import events.store", "the engine is pure"),
        ("events/store/port.py", "import events.games.service", "events: games above"),
        ("events/verify/replay.py", "import events.games.seeds", "events: games above"),
        ("events/envelope.py", "import events.store.port", "events: games above"),
        ("events/games/projections.py", "import service.sse", "bots and events build on"),
        ("service/sse.py", "import workers.jobs", "the web service does not import"),
        ("workers/jobs.py", "import service.app", "workers and ladders do not import"),
        ("service/app.py", "import redis", "reach Redis through events.store only"),
        ("workers/sweep.py", "import redis", "reach Redis through events.store only"),
        ("ladder/service.py", "import fakeredis", "reach Redis through events.store only"),
        ("service/tokens.py", "import redis", "reach Redis through events.store only"),
    ],
)
def test_a_planted_upward_import_breaks_a_contract(
    tree: Path, module: str, planted: str, contract: str
) -> None:
    path = tree / module
    path.write_text(path.read_text() + f"\n{planted}  # planted\n")
    result = lint_imports(tree)
    assert result.returncode != 0, result.stdout
    assert f"{contract}" in result.stdout.partition("Broken contracts")[2], result.stdout
    importer = module.removesuffix(".py").replace("/", ".")
    assert f"{importer} -> {planted.split()[1]}" in result.stdout, result.stdout
