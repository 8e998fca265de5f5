"""The TypeScript client (clients/typescript), built once a session: its npm packages come from
its package-lock.json (``make ts-client``: ``npm ci`` once, then openapi-typescript on
openapi.yaml, the minimal request of every operation with a body
(scripts/minimal-requests.mjs) and ``tsc --strict``). Skipped locally without node or the packages; a failure
under CI."""

from __future__ import annotations

import os
import shutil
import subprocess
from pathlib import Path

import pytest

from tests.conftest import unavailable

ROOT = Path(__file__).resolve().parents[2]
TS = ROOT / "clients" / "typescript"


@pytest.fixture(scope="session")
def ts_client() -> Path:
    """The built client's directory (its ``dist/`` holds the compiled scripts)."""
    node = shutil.which("node")
    if node is None:
        unavailable("no node on PATH: install Node.js 20 or later to test the TypeScript client")
    if not (TS / "node_modules" / ".package-lock.json").exists():
        unavailable("clients/typescript has no node_modules: run `make ts-client` (npm ci)")
    if _stale():
        run = subprocess.run(
            ["npm", "run", "--silent", "build"], cwd=TS, capture_output=True, text=True, timeout=300
        )
        assert run.returncode == 0, (
            f"the TypeScript client does not build:\n{run.stdout}{run.stderr}"
        )
    return TS


def _stale() -> bool:
    """Whether the build is older than a source or openapi.yaml (``make ts-client`` built it)."""
    built = TS / "dist" / "examples" / "play-vs-bots.js"
    if not built.exists():
        return True
    sources = [ROOT / "openapi.yaml", TS / "tsconfig.json", TS / "package-lock.json"]
    sources += [
        p for d in ("src", "examples") for p in (TS / d).rglob("*.ts") if "generated" not in p.parts
    ]
    sources += list((TS / "scripts").glob("*.mjs")) + [TS / "package.json"]
    return max(p.stat().st_mtime for p in sources) > built.stat().st_mtime


def node(
    ts: Path, script: str, *args: str, timeout: float = 120, **env: str
) -> subprocess.CompletedProcess[str]:
    """Run one of the client's compiled scripts (``dist/<script>``) with node (``env``: added
    to the environment)."""
    return subprocess.run(
        ["node", str(ts / "dist" / script), *args],
        capture_output=True,
        text=True,
        timeout=timeout,
        cwd=ts,
        env={**os.environ, **env},
    )
