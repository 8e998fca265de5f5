"""One data directory for the embedded store and the signing key, whatever folder ``rfg`` is run
from (``events.config.data_dir``): ``RFG_DATA_DIR``, else a checkout's ``run/``, else the
per-user data directory.

Before, both lived in ``./run`` of the working directory: ``rfg`` run from another folder
silently started a second embedded store there and made a second signing key, so
``rfg signing-key`` printed a key the server did not use.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

import events.store
from events import config
from events.verify.signing import load_signer

ROOT = Path(__file__).resolve().parents[3]
RFG = str(Path(sys.executable).parent / "rfg")


def _rfg(cwd: Path, *args: str) -> subprocess.CompletedProcess[str]:
    env = {k: v for k, v in os.environ.items() if k not in ("RFG_DATA_DIR", "REDIS_URL")}
    env.pop("RFG_STORE_URL", None)
    env.pop("RFG_SIGNING_KEY", None)
    env.pop("RFG_SIGNING_KEY_FILE", None)
    return subprocess.run(
        [RFG, *args], cwd=cwd, env=env, capture_output=True, text=True, timeout=60
    )


@pytest.fixture
def plain_env(monkeypatch: pytest.MonkeyPatch) -> None:
    for name in ("RFG_DATA_DIR", "RFG_SIGNING_KEY", "RFG_SIGNING_KEY_FILE"):
        monkeypatch.delenv(name, raising=False)


@pytest.mark.usefixtures("plain_env")
def test_rfg_from_another_folder_finds_the_servers_key_and_store(tmp_path: Path) -> None:
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    out = _rfg(elsewhere, "signing-key", "--json")
    assert out.returncode == 0, out.stderr
    # the key of the server started from the checkout (make run), not a new one made here
    assert json.loads(out.stdout) == load_signer().public_info()
    assert load_signer().source == str(ROOT / "run" / "signing-key.pem")
    status = _rfg(elsewhere, "store", "status")
    assert str(ROOT / "run" / "redis") in status.stdout + status.stderr, status
    assert not (elsewhere / "run").exists(), "rfg made a second data directory"


@pytest.mark.usefixtures("plain_env")
def test_a_checkout_keeps_its_run_folder() -> None:
    assert config.checkout() == ROOT
    assert config.data_dir() == ROOT / "run"
    assert events.store.embedded_server(None).data_dir == ROOT / "run" / "redis"


@pytest.mark.usefixtures("plain_env")
def test_an_installed_rfg_uses_the_per_user_data_directory(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(config, "checkout", lambda: None)  # as from site-packages
    monkeypatch.setenv("XDG_DATA_HOME", str(tmp_path / "xdg"))
    monkeypatch.chdir(tmp_path)
    home = tmp_path / "xdg" / "rfg-server"
    assert config.data_dir() == home
    assert events.store.embedded_server(None).data_dir == home / "redis"
    signer = load_signer()
    assert signer.source == str(home / "signing-key.pem") and Path(signer.source).is_file()
    assert not (tmp_path / "run").exists()


@pytest.mark.usefixtures("plain_env")
def test_rfg_data_dir_overrides_both(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(tmp_path)
    monkeypatch.setenv("RFG_DATA_DIR", "data")  # relative: to the working directory
    assert config.data_dir() == tmp_path / "data"
    assert events.store.embedded_server(None).data_dir == tmp_path / "data" / "redis"
    assert load_signer().source == str(tmp_path / "data" / "signing-key.pem")
    assert events.store.embedded_server("embedded://other").data_dir == tmp_path / "other"
