"""docs/log-format.md says what the code does: its test vectors are the code's output (canonical
JSON, envelope hashes, commitments, the signed bytes and Ed25519 signature), and its shortcuts
hold on every golden log (the hashed bytes are the line without its ``hash`` member; the signed
bytes are the signature line's record without ``sig``), and its rules hold: the signed result is
``GameEnded``'s scores and winners (an abandoned game's: no winners, as the engine ends it), a
line with a key twice is malformed, and a ``GameCreated`` naming another game than its envelopes'
is refused."""

from __future__ import annotations

import base64
import hashlib
import json
import re
from pathlib import Path
from typing import Any

import pytest
from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PrivateKey

import engine
from engine.canonical import canonical_json
from engine.observe import visibility
from engine.record import command_submitted
from engine.rng import BOUND_SINCE_RULES, commitment
from events.envelope import Envelope
from events.verify.replay import parse_lines, signed_result, verify_text
from events.verify.signing import SIGNED_FIELDS, Signer, check_signature, load_public_key

ROOT = Path(__file__).resolve().parents[3]
DOC = ROOT / "docs" / "log-format.md"
GOLDEN = ROOT / "tests" / "golden"


def vectors() -> list[dict[str, Any]]:
    text = DOC.read_text(encoding="utf-8")
    return [json.loads(b) for b in re.findall(r"```json vector\n(.*?)\n```", text, re.S)]


def cut_hash(line: str) -> str:
    """The doc's shortcut: the line without its first ``,"hash":"<64 hex>"``."""
    return re.sub(r',"hash":"[0-9a-f]{64}"', "", line, count=1)


def test_the_doc_has_a_vector_of_each_kind() -> None:
    kinds = [v["kind"] for v in vectors()]
    for kind in (
        "canonical",
        "canonical-float",
        "envelope",
        "commitment",
        "signature",
        "signed-result",
        "duplicate-key",
        "abandoned",
        "foreign-game",
    ):
        assert kind in kinds, f"docs/log-format.md lost its {kind} test vector"


@pytest.mark.parametrize("vector", vectors(), ids=lambda v: v["kind"])
def test_each_vector_is_what_the_code_gives(vector: dict[str, Any]) -> None:
    kind = vector["kind"]
    if kind == "canonical":
        assert canonical_json(vector["value"]) == vector["canonical"]
    if kind in ("canonical", "canonical-float"):
        text = vector["canonical"]
        assert canonical_json(json.loads(text)) == text
        assert hashlib.sha256(text.encode("utf-8")).hexdigest() == vector["sha256"]
    elif kind == "envelope":
        line = vector["line"]
        env = json.loads(line)
        body = {k: v for k, v in env.items() if k != "hash"}
        assert canonical_json(body) == vector["hashed"] == cut_hash(line)
        assert hashlib.sha256(vector["hashed"].encode("utf-8")).hexdigest() == vector["hash"]
        sealed = Envelope.from_event(
            {"type": env["type"], "v": env["schema_version"], **env["payload"]},
            game_id=env["game_id"],
            seq=env["seq"],
            visibility=env["visibility"],
            command_id=env["command_id"],
            actor=env["actor"],
            ts=env["ts"],
            prev_hash=env["prev_hash"],
        )
        assert sealed.hash == vector["hash"] and sealed.to_json() == line
    elif kind == "commitment":
        assert commitment(vector["seed"], vector["rules"], vector["game"]) == vector["commitment"]
    elif kind == "signature":
        key = Ed25519PrivateKey.from_private_bytes(bytes.fromhex(vector["private_key"]))
        signer = Signer(key, "doc")
        assert signer.public_info()["public_key"] == vector["public_key"]
        record = json.loads(vector["line"])["signature"]
        assert canonical_json({f: record[f] for f in SIGNED_FIELDS}) == vector["signed"]
        again = signer.sign(
            *(record[f] for f in ("game_id", "events", "chain_head", "over")), record["result"]
        )
        assert again["sig"] == vector["sig"] == record["sig"]  # Ed25519 is deterministic
        assert canonical_json({"signature": again}) == vector["line"]
        load_public_key(vector["public_key"]).verify(
            base64.b64decode(vector["sig"]), vector["signed"].encode("utf-8")
        )
    elif kind == "signed-result":
        _check_signed_result(vector)
    elif kind == "abandoned":
        _check_abandoned(vector)
    elif kind == "foreign-game":
        _check_foreign_game(vector)
    elif kind == "duplicate-key":
        genuine = next(v for v in vectors() if v["kind"] == "signed-result")
        for line in vector["lines"]:
            with pytest.raises(ValueError, match="twice"):
                parse_lines(line)
            # a parser keeping the last value reads the genuine line: only the text shows it
            assert canonical_json(json.loads(line)) in (genuine["ended"], genuine["line"])


def _check_signed_result(vector: dict[str, Any]) -> None:
    """``ended`` continues the envelope vectors' chain; ``line`` signs its scores and winners,
    ``refused`` another result, both validly."""
    envs = [json.loads(v["line"]) for v in vectors() if v["kind"] == "envelope"]
    ended = json.loads(vector["ended"])
    assert ended["type"] == "GameEnded" and ended["seq"] == len(envs) + 1
    assert ended["prev_hash"] == envs[-1]["hash"]
    assert hashlib.sha256(cut_hash(vector["ended"]).encode("utf-8")).hexdigest() == ended["hash"]
    key = load_public_key(vector["public_key"])
    good, bad = (json.loads(vector[k])["signature"] for k in ("line", "refused"))
    for record in (good, bad):
        assert check_signature(record, key) is None
        assert (record["events"], record["chain_head"], record["over"]) == (
            ended["seq"],
            ended["hash"],
            True,
        )
    assert good["result"] == signed_result(ended["payload"])
    assert bad["result"] != signed_result(ended["payload"])
    private = Ed25519PrivateKey.from_private_bytes(bytes.fromhex(vector["private_key"]))
    again = Signer(private, "doc").sign("g1", ended["seq"], ended["hash"], True, good["result"])
    assert canonical_json({"signature": again}) == vector["line"]


def _check_abandoned(vector: dict[str, Any]) -> None:
    """``lines`` continue the envelope vectors' chain with the batch the engine writes when the
    game is abandoned (its record, ``GameAbandoned``, ``GameEnded`` with no winners) and ``line``
    signs them, winners ``[]``."""
    envs = [json.loads(v["line"]) for v in vectors() if v["kind"] == "envelope"]
    ending = [json.loads(line) for line in vector["lines"]]
    for env, line in zip(ending, vector["lines"], strict=True):
        assert hashlib.sha256(cut_hash(line).encode("utf-8")).hexdigest() == env["hash"]
        assert canonical_json(env) == line
    assert [e["prev_hash"] for e in ending] == [envs[-1]["hash"]] + [e["hash"] for e in ending[:-1]]
    assert [e["seq"] for e in ending] == list(range(len(envs) + 1, len(envs) + 1 + len(ending)))
    assert len({(e["command_id"], e["actor"]) for e in ending}) == 1
    assert re.fullmatch(r"abandon-[0-9a-f]{16}", ending[0]["command_id"])
    # the batch is what the engine gives for an abandon in round 1, field for field
    state = engine.replay(engine.create("s", 2, {}, None, 4, "g1"))
    produced = [command_submitted(0, {"kind": "abandon"})]
    engine.evolve(state, produced[0])
    produced += engine.play(state, 0, {"kind": "abandon"})
    assert [e["type"] for e in ending] == [e["type"] for e in produced]
    for env, event in zip(ending, produced, strict=True):
        assert set(env["payload"]) == set(event) - {"type", "v"}, env["type"]
        assert env["visibility"] == visibility(event), env["type"]
    assert ending[0]["payload"] == {k: v for k, v in produced[0].items() if k not in ("type", "v")}
    # (the engine's game is still in its setup, round 0; the vectors' chain started round 1)
    assert ending[1]["payload"] == {"seat": 0, "round": envs[-1]["payload"]["round"]}
    ended = ending[-1]["payload"]
    assert (ended["reason"], ended["winners"], produced[-1]["winners"]) == ("abandoned", [], [])
    record = json.loads(vector["line"])["signature"]
    assert check_signature(record, load_public_key(vector["public_key"])) is None
    assert record["result"] == signed_result(ended) and record["result"]["winners"] == []
    assert (record["events"], record["chain_head"], record["over"]) == (
        ending[-1]["seq"],
        ending[-1]["hash"],
        True,
    )
    private = Ed25519PrivateKey.from_private_bytes(bytes.fromhex(vector["private_key"]))
    again = Signer(private, "doc").sign(
        "g1", ending[-1]["seq"], ending[-1]["hash"], True, record["result"]
    )
    assert canonical_json({"signature": again}) == vector["line"]


def _check_foreign_game(vector: dict[str, Any]) -> None:
    """A GameCreated whose hash and commitment hold, naming another game than its envelope's:
    the verifier refuses it for that, and for nothing earlier."""
    env = json.loads(vector["line"])
    payload = env["payload"]
    assert hashlib.sha256(cut_hash(vector["line"]).encode("utf-8")).hexdigest() == env["hash"]
    assert payload["rules"] >= BOUND_SINCE_RULES and payload["game"] != env["game_id"]
    assert (
        commitment(payload["seed"], payload["rules"], payload["game"])
        == (payload["seed_commitment"])
    )
    verdict = verify_text(vector["line"] + "\n")
    assert (verdict.verdict, verdict.bad_seq) == ("inconsistent", 1)
    assert "names game" in verdict.reason and "g2" in verdict.reason, verdict.reason


def test_the_envelope_vectors_chain() -> None:
    envs = [json.loads(v["line"]) for v in vectors() if v["kind"] == "envelope"]
    assert envs[0]["prev_hash"] == "0" * 64
    assert [e["prev_hash"] for e in envs[1:]] == [e["hash"] for e in envs[:-1]]
    (sig,) = [json.loads(v["line"])["signature"] for v in vectors() if v["kind"] == "signature"]
    assert sig["chain_head"] == envs[-1]["hash"] and sig["events"] == len(envs)


@pytest.mark.parametrize("name", sorted(p.name for p in GOLDEN.glob("export-*.jsonl")))
def test_the_shortcuts_hold_on_every_golden_export(name: str) -> None:
    lines = (GOLDEN / name).read_text(encoding="utf-8").splitlines()
    for line in lines:
        obj = json.loads(line)
        assert canonical_json(obj) == line  # every line is canonical JSON
        if "signature" in obj:
            record = obj["signature"]
            signed = canonical_json({f: record[f] for f in SIGNED_FIELDS})
            assert re.sub(r',"sig":"[^"]*"', "", line[len('{"signature":') : -1]) == signed
            continue
        body = {k: v for k, v in obj.items() if k != "hash"}
        assert cut_hash(line) == canonical_json(body)
        assert hashlib.sha256(cut_hash(line).encode("utf-8")).hexdigest() == obj["hash"]
