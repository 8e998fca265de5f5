"""engine/ and bots/ are pure: they import no I/O library and no source of hidden randomness."""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
FORBIDDEN = {
    "redis",
    "flask",
    "rq",
    "requests",
    "time",
    "random",
    "socket",
    "subprocess",
    "urllib",
    "http",
    "datetime",
    "threading",
    "asyncio",
    "marshmallow",
    "fakeredis",
    "secrets",
    "uuid",
}


def imported_modules(path: Path) -> set[str]:
    tree = ast.parse(path.read_text(encoding="utf-8"))
    out: set[str] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            out |= {a.name.split(".")[0] for a in node.names}
        elif isinstance(node, ast.ImportFrom) and node.level == 0 and node.module:
            out.add(node.module.split(".")[0])
    return out


@pytest.mark.parametrize("package", ["engine", "bots"])
def test_no_io_imports(package: str) -> None:
    files = sorted((ROOT / package).rglob("*.py"))
    assert files
    bad = {str(f.relative_to(ROOT)): sorted(imported_modules(f) & FORBIDDEN) for f in files}
    bad = {k: v for k, v in bad.items() if v}
    assert not bad, f"I/O or randomness imports in pure packages: {bad}"


def test_the_check_sees_imports() -> None:
    assert imported_modules(Path(__file__)) >= {"ast", "pathlib", "pytest"}
