"""A compiled module (``make fast``) older than its source is refused, naming the fix."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from engine import compiled


def _pair(folder: Path, source_mtime: float, compiled_mtime: float) -> None:
    (folder / "flow.py").write_text("# source\n")
    (folder / "flow.cpython-311-x86_64-linux-gnu.so").write_bytes(b"\0")
    os.utime(folder / "flow.py", (source_mtime, source_mtime))
    so = folder / "flow.cpython-311-x86_64-linux-gnu.so"
    os.utime(so, (compiled_mtime, compiled_mtime))


def test_a_module_compiled_after_its_source_changed_is_accepted(tmp_path: Path) -> None:
    _pair(tmp_path, 1000.0, 2000.0)
    compiled.check_fresh(str(tmp_path))


def test_a_source_changed_after_compiling_refuses_the_stale_module(tmp_path: Path) -> None:
    sub = tmp_path / "phases"
    sub.mkdir()
    _pair(sub, 2000.0, 1000.0)
    with pytest.raises(ImportError, match=r"flow\.py last changed.*make fast"):
        compiled.check_fresh(str(tmp_path))
