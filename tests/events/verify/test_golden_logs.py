"""Golden logs: the committed logs of each rules version replay unchanged, verify, and re-running
their seeds gives the same bytes (tests/golden/README.md says how each was made)."""

from __future__ import annotations

import hashlib
import re
from pathlib import Path

import pytest

from bots import arena
from engine.canonical import canonical_json
from events.verify.replay import verify_text

GOLDEN = Path(__file__).resolve().parents[2] / "golden"
SUMS = dict(reversed(line.split()) for line in (GOLDEN / "SHA256SUMS").read_text().splitlines())
BARE = re.compile(r"^rules(\d)-(\d)p\.jsonl$")


def test_every_rules_version_has_golden_logs() -> None:
    from engine.phases.setup import RULES_VERSION

    versions = {int(m.group(1)) for name in SUMS if (m := BARE.match(name))}
    assert versions == set(range(1, RULES_VERSION + 1))


@pytest.mark.parametrize("name", sorted(SUMS))
def test_golden_log_is_unchanged_and_verifies(name: str) -> None:
    data = (GOLDEN / name).read_bytes()
    assert hashlib.sha256(data).hexdigest() == SUMS[name], f"{name} was changed"
    verdict = verify_text(data)
    assert verdict.ok, verdict.to_dict()
    assert verdict.summary["over"] and verdict.commands > 100


@pytest.mark.parametrize("name", sorted(n for n in SUMS if BARE.match(n)))
def test_rerunning_a_golden_seed_gives_the_same_log(name: str) -> None:
    m = BARE.match(name)
    assert m is not None
    rules, players = int(m.group(1)), int(m.group(2))
    rec = arena.play_game(f"golden-v{rules}-{players}p:0", players, ["random"], rules=rules)
    produced = "".join(canonical_json(e) + "\n" for e in rec.events).encode("utf-8")
    assert hashlib.sha256(produced).hexdigest() == SUMS[name]


def test_the_signed_golden_export_is_this_key_s() -> None:
    """The signed export verifies as signed by the key ``signing-key.json`` holds (as
    ``GET /signing-key`` serves it), and by no other."""
    import json

    from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PrivateKey

    from events.verify.signing import load_public_key

    data = (GOLDEN / "export-rules4-2p-signed.jsonl").read_bytes()
    key = load_public_key(json.loads((GOLDEN / "signing-key.json").read_text())["public_key"])
    verdict = verify_text(data, key, require_signature=True)
    assert verdict.ok and verdict.authentic, verdict.to_dict()
    other = Ed25519PrivateKey.generate().public_key()
    assert not verify_text(data, other, require_signature=True).ok
