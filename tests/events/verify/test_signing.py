"""The signing key: created once on first use, the same for every process, configurable, and
printed by ``rfg signing-key``; a bad key is refused with what to give instead."""

from __future__ import annotations

import base64
import json
import os
import subprocess
import sys
from pathlib import Path

import pytest
from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PrivateKey

from events.verify.signing import SigningKeyError, check_signature, load_public_key, load_signer

RFG = os.path.join(os.path.dirname(sys.executable), "rfg")


def _cli(env: dict[str, str]) -> dict[str, str]:
    out = subprocess.run(
        [RFG, "signing-key", "--json"],
        capture_output=True,
        text=True,
        timeout=60,
        env={**os.environ, **env},
    )
    assert out.returncode == 0, out.stderr
    info: dict[str, str] = json.loads(out.stdout)
    return info


def test_the_default_key_is_created_once_and_kept(tmp_path: Path) -> None:
    env = {"RFG_DATA_DIR": str(tmp_path)}
    first = _cli(env)
    assert (tmp_path / "signing-key.pem").stat().st_mode & 0o077 == 0  # private to its owner
    assert _cli(env) == first == load_signer(env).public_info()
    assert load_public_key(first["public_key"]) is not None and load_public_key(first["pem"])


def test_a_configured_key_signs_and_its_public_half_verifies(tmp_path: Path) -> None:
    private = Ed25519PrivateKey.generate()
    raw = private.private_bytes_raw()
    signer = load_signer({"RFG_SIGNING_KEY": base64.b64encode(raw).decode()})
    record = signer.sign("g1", 10, "a" * 64, True, {"scores": [1], "winners": [0]})
    public = load_public_key(
        _cli({"RFG_SIGNING_KEY": base64.b64encode(raw).decode()})["public_key"]
    )
    assert check_signature(record, public) is None
    assert "does not match" in (check_signature(dict(record, events=11), public) or "")
    other = load_public_key(
        load_signer({"RFG_DATA_DIR": str(tmp_path)}).public_info()["public_key"]
    )
    assert "not by the key given" in (check_signature(record, other) or "")


@pytest.mark.parametrize("bad", ["not a key", base64.b64encode(b"short").decode(), "-----BEGIN x"])
def test_a_bad_key_says_what_to_give(bad: str) -> None:
    with pytest.raises(SigningKeyError, match="PEM"):
        load_signer({"RFG_SIGNING_KEY": bad})


def test_a_missing_key_file_is_named() -> None:
    with pytest.raises(SigningKeyError, match="cannot read the signing key /nonexistent/key"):
        load_signer({"RFG_SIGNING_KEY_FILE": "/nonexistent/key"})
