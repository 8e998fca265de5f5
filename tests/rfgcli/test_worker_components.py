"""``rfg worker`` installs the host's Ambition component file (``RFG_AMBITION_COMPONENTS``) as
the API does, so it can fold Ambition games' logs; a bad file stops it before it starts, the
error naming the variable, the file and the field."""

from __future__ import annotations

from pathlib import Path

import pytest

from rfgcli.main import main
from tests.ambition import SYNTHETIC


def test_a_bad_component_file_stops_the_worker(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    bad = tmp_path / "components.yaml"
    text = SYNTHETIC.read_text(encoding="utf-8").replace("phases: [wild]", "phases: [lunch]")
    bad.write_text(text, encoding="utf-8")
    monkeypatch.setenv("RFG_AMBITION_COMPONENTS", str(bad))
    assert main(["worker", "--url", "redis://127.0.0.1:1/0", "--burst"]) == 2
    err = capsys.readouterr().err
    assert f"RFG_AMBITION_COMPONENTS: {bad}: dice.black.faces[5].phases[0]: " in err
