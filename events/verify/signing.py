"""Signed exports: the server's Ed25519 key, and the signature record that ends an exported log.

Hash chains prove that a log is *consistent*; only a signature proves that *this server* wrote it.
An export ends with one line ``{"signature": {...}}`` whose fields are the game id, the number of
events, the chain head (the last envelope's hash), whether the game is over and its result, the
key id and ``sig``: the Ed25519 signature of the canonical JSON of every other field. Since each
envelope's hash covers the one before it, the chain head pins every byte of every event.

Where the key comes from (``load_signer``), first match wins:

* ``RFG_SIGNING_KEY``: the private key itself, PEM (PKCS#8) or the base64 of its 32 raw bytes;
* ``RFG_SIGNING_KEY_FILE``: a file holding it (PEM or base64);
* otherwise ``<data dir>/signing-key.pem``, created on first use: the data directory of
  ``events.config.data_dir`` (``RFG_DATA_DIR``, a checkout's ``run/``, else the per-user
  data directory; the embedded store keeps its data there too), the same wherever a command is
  run from. Several machines serving one store must share one key: set ``RFG_SIGNING_KEY_FILE``
  on each.

The public key is served at ``GET /signing-key`` and printed by ``rfg signing-key``; give it to
``rfg replay --key``.
"""

from __future__ import annotations

import base64
import binascii
import hashlib
import os
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from cryptography.exceptions import InvalidSignature
from cryptography.hazmat.primitives import serialization
from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PrivateKey, Ed25519PublicKey

from engine.canonical import canonical_json

ALG = "Ed25519"
SIGNED_FIELDS = ("alg", "key_id", "game_id", "events", "chain_head", "over", "result")


class SigningKeyError(ValueError):
    """A key that cannot be read; the message says what to give instead."""


def _raw_public(key: Ed25519PublicKey) -> bytes:
    return key.public_bytes(serialization.Encoding.Raw, serialization.PublicFormat.Raw)


def key_id(key: Ed25519PublicKey) -> str:
    """A short name for a public key: the first 16 hex digits of sha256 of its raw bytes."""
    return hashlib.sha256(_raw_public(key)).hexdigest()[:16]


def _b64(data: bytes) -> str:
    return base64.b64encode(data).decode("ascii")


@dataclass(frozen=True)
class Signer:
    private: Ed25519PrivateKey
    source: str

    @property
    def public(self) -> Ed25519PublicKey:
        return self.private.public_key()

    def public_info(self) -> dict[str, Any]:
        """What ``GET /signing-key`` serves and ``rfg signing-key --json`` prints."""
        pub = self.public
        pem = pub.public_bytes(
            serialization.Encoding.PEM, serialization.PublicFormat.SubjectPublicKeyInfo
        ).decode("ascii")
        return {"alg": ALG, "key_id": key_id(pub), "public_key": _b64(_raw_public(pub)), "pem": pem}

    def sign(
        self, game_id: str, events: int, chain_head: str, over: bool, result: Any
    ) -> dict[str, Any]:
        """The signature record for an export (the value of its ``signature`` line)."""
        record = {
            "alg": ALG,
            "key_id": key_id(self.public),
            "game_id": game_id,
            "events": events,
            "chain_head": chain_head,
            "over": over,
            "result": result,
        }
        record["sig"] = _b64(self.private.sign(canonical_json(record).encode("utf-8")))
        return record


def _private_from_text(text: str, where: str) -> Ed25519PrivateKey:
    text = text.strip()
    if text.startswith("-----BEGIN"):
        try:
            key = serialization.load_pem_private_key(text.encode("ascii"), password=None)
        except (ValueError, TypeError) as exc:
            raise SigningKeyError(
                f"{where}: not a readable unencrypted PEM private key ({exc})"
            ) from None
        if not isinstance(key, Ed25519PrivateKey):
            raise SigningKeyError(
                f"{where}: the key is not an Ed25519 key; make one with "
                "`openssl genpkey -algorithm ed25519`"
            )
        return key
    raw = _raw32(text)
    if raw is None:
        raise SigningKeyError(
            f"{where}: give an Ed25519 private key as PEM or as the base64 of its 32 raw bytes"
        )
    return Ed25519PrivateKey.from_private_bytes(raw)


def _raw32(text: str) -> bytes | None:
    """The 32 raw bytes of a key given as base64, or None."""
    try:
        raw = base64.b64decode(text, validate=True)
    except (binascii.Error, ValueError):
        return None
    return raw if len(raw) == 32 else None


def load_signer(environ: Mapping[str, str] | None = None) -> Signer:
    """The server's signing key (see the module docstring for where it comes from)."""
    from events import config

    env = config.read(environ)
    key_text: str | None = env.get("RFG_SIGNING_KEY")
    if key_text:
        return Signer(_private_from_text(key_text, "RFG_SIGNING_KEY"), "RFG_SIGNING_KEY")
    key_file: str | None = env.get("RFG_SIGNING_KEY_FILE")
    path = Path(key_file) if key_file else None
    if path is None:
        path = config.data_dir(environ) / "signing-key.pem"
        if not path.exists():
            _create(path)
    try:
        text = path.read_text("ascii")
    except (OSError, UnicodeDecodeError) as exc:
        raise SigningKeyError(f"cannot read the signing key {path}: {exc}") from None
    return Signer(_private_from_text(text, str(path)), str(path))


def _create(path: Path) -> None:
    """Write a new key, once: concurrent first uses all end up with the same key."""
    path.parent.mkdir(parents=True, exist_ok=True)
    pem = Ed25519PrivateKey.generate().private_bytes(
        serialization.Encoding.PEM, serialization.PrivateFormat.PKCS8, serialization.NoEncryption()
    )
    tmp = path.with_name(f".{path.name}.{os.getpid()}.tmp")
    fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
    with os.fdopen(fd, "wb") as f:
        f.write(pem)
    try:
        os.link(tmp, path)  # fails if another process created it first: theirs wins
    except FileExistsError:
        pass
    finally:
        tmp.unlink(missing_ok=True)


def load_public_key(text: str) -> Ed25519PublicKey:
    """A public key given as base64 of 32 raw bytes, as PEM, or as a path to a file of either."""
    text = text.strip()
    if not text.startswith("-----BEGIN") and len(text) < 4096 and os.path.isfile(text):
        try:
            text = Path(text).read_text("ascii").strip()
        except (OSError, UnicodeDecodeError) as exc:
            raise SigningKeyError(f"cannot read the public key file: {exc}") from None
    if text.startswith("-----BEGIN"):
        try:
            key = serialization.load_pem_public_key(text.encode("ascii"))
        except (ValueError, TypeError) as exc:
            raise SigningKeyError(f"not a readable PEM public key ({exc})") from None
        if not isinstance(key, Ed25519PublicKey):
            raise SigningKeyError("the public key is not an Ed25519 key")
        return key
    raw = _raw32(text)
    if raw is None:
        raise SigningKeyError(
            "give the server's public key as printed by `rfg signing-key` or served "
            "at GET /signing-key: base64 of 32 bytes, PEM, or a file holding either"
        )
    return Ed25519PublicKey.from_public_bytes(raw)


def record_problem(record: Any) -> str | None:
    """None when ``record`` has the signature record's fields, exactly, else the reason."""
    if not isinstance(record, dict):
        return "the signature line is not an object"
    missing = [f for f in (*SIGNED_FIELDS, "sig") if f not in record]
    if missing or set(record) - {*SIGNED_FIELDS, "sig"}:
        return f"the signature record has missing fields {missing} or unknown ones"
    return None


def check_signature(record: Any, key: Ed25519PublicKey) -> str | None:
    """None when ``record`` is a well-formed signature record made by ``key``, else the reason."""
    problem = record_problem(record)
    if problem is not None:
        return problem
    if record["alg"] != ALG:
        return f"the signature's algorithm is {record['alg']!r}, not {ALG}"
    if record["key_id"] != key_id(key):
        return (
            f"signed by key {record['key_id']!r}, not by the key given ({key_id(key)}): "
            "another server's export, or a wrong key"
        )
    body = {f: record[f] for f in SIGNED_FIELDS}
    try:
        sig = base64.b64decode(str(record["sig"]), validate=True)
        key.verify(sig, canonical_json(body).encode("utf-8"))
    except (binascii.Error, ValueError, InvalidSignature):
        return "the signature does not match the signed fields (altered log or forged signature)"
    return None
