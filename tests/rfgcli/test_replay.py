"""``rfg replay``, with and without ``--key``, verifies a genuine signed log of a resigned game (and of an aborted one) and
refuses its forgeries (``tests/events/verify/forgeries.py``): a key given twice in any line is a
malformed log (exit 2), a signature stating another result than ``GameEnded`` is not authentic
(exit 1), whether or not the key is given."""

from __future__ import annotations

from pathlib import Path

import pytest

from rfgcli.main import main
from tests.events.verify import forgeries


@pytest.fixture(scope="module")
def log() -> str:
    return forgeries.resigned_log(forgeries.new_app_client())


def _replay(capsys: pytest.CaptureFixture[str], path: Path, keyed: bool) -> tuple[int, str, str]:
    key = ["--key", forgeries.PUBLIC_KEY] if keyed else []
    code = main(["replay", *key, str(path)])
    out = capsys.readouterr()
    return code, out.out, out.err


@pytest.mark.parametrize("keyed", [True, False], ids=["key", "no-key"])
def test_the_genuine_log_verifies(
    log: str, tmp_path: Path, capsys: pytest.CaptureFixture[str], keyed: bool
) -> None:
    path = tmp_path / "game.jsonl"
    path.write_text(log, encoding="utf-8")
    code, out, err = _replay(capsys, path, keyed)
    assert code == 0, err
    assert "winners [1]" in out and ("authentic: yes" in out) is keyed


def test_an_aborted_games_log_verifies(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    path = tmp_path / "aborted.jsonl"
    path.write_text(forgeries.aborted_log(forgeries.new_app_client()), encoding="utf-8")
    code, out, err = _replay(capsys, path, True)
    assert code == 0, err
    assert "aborted" in out and "authentic: yes" in out, out


@pytest.mark.parametrize("label", sorted(forgeries.KINDS))
@pytest.mark.parametrize("keyed", [True, False], ids=["key", "no-key"])
def test_each_forgery_is_refused(
    log: str, tmp_path: Path, capsys: pytest.CaptureFixture[str], label: str, keyed: bool
) -> None:
    text, kind = forgeries.forgeries(log)[label]
    path = tmp_path / "forged.jsonl"
    path.write_text(text, encoding="utf-8")
    code, out, err = _replay(capsys, path, keyed)
    if kind == forgeries.DUPLICATE:
        assert code == 2 and "BAD (malformed)" in err and "twice" in err, (code, out, err)
    else:
        assert code == 1 and "BAD (not-authentic)" in err and "GameEnded" in err, (code, out, err)
