"""Compacted logs: a finished game's whole stream as one zlib blob, its hash chain intact.

A stored envelope is canonical JSON with ``game_id``, ``prev_hash`` and ``hash``. The blob keeps
every envelope's other fields (canonical JSON, one per line, in order) and drops those three: the
game id is the blob's, ``prev_hash`` is the previous envelope's ``hash`` (``GENESIS_HASH`` for
seq 1), and ``hash`` is sha256 of the canonical JSON without it - exactly what sealing computed.
``unpack`` recomputes them and returns the stored texts byte for byte; ``pack`` refuses a log it
cannot give back byte-identically (so compaction never loses a bit), and the head hash recorded
in the game's meta hash is checked against the recomputed chain on every unpack. The 128 hex
characters of the two hashes are most of what zlib cannot compress (a 4-player game: 425 KB of
stream, 42 KB zlib'd whole, 14 KB without the hashes).

Archive files (``RedisStore.archive``) hold the same blobs: a one-line JSON header
(``{"format", "game_id", "version", "hash", "log", "views"}``, the last two the byte lengths of
the blobs that follow), then the log blob, then the views blob. The summary view also stays in the
game's views hash (the lobby lists it from there). A game that expires (``RFG_FINISHED_GAME_SECONDS``)
loses its archive file with its keys (``RedisStore.expire_archives``, run by the workers' sweep);
one kept for good keeps it.
"""

from __future__ import annotations

import hashlib
import json
import zlib
from collections.abc import Sequence

import orjson

from events.envelope import GENESIS_HASH, canonical_json
from events.errors import StoreError

FORMAT = "rfg-compacted-1"
_DROPPED = ("game_id", "prev_hash", "hash")


class CompactionError(StoreError):
    """A compacted log does not give back the stored one (refused, or corrupted since)."""


def _loads(text: str | bytes) -> dict[str, object]:
    try:
        out: dict[str, object] = orjson.loads(text)
    except orjson.JSONDecodeError:
        out = json.loads(text)
    return out


def pack(game_id: str, texts: Sequence[str]) -> bytes:
    """The log blob of a game's stored envelope texts; ``CompactionError`` if ``unpack`` would not
    give back exactly ``texts``."""
    lines = []
    for text in texts:
        d = _loads(text)
        for key in _DROPPED:
            d.pop(key, None)
        lines.append(canonical_json(d))
    blob = zlib.compress("\n".join(lines).encode("utf-8"), 9)
    head = _loads(texts[-1])["hash"] if texts else GENESIS_HASH
    if unpack(game_id, blob, str(head)) != list(texts):
        raise CompactionError(
            f"game {game_id!r}: its log does not round-trip through the "
            f"compacted form; left as it is"
        )
    return blob


def unpack(game_id: str, blob: bytes, head_hash: str) -> list[str]:
    """The stored envelope texts back from a log blob, hashes recomputed; ``CompactionError``
    unless the chain ends at ``head_hash``."""
    raw = zlib.decompress(blob).decode("utf-8")
    out: list[str] = []
    prev = GENESIS_HASH
    for line in raw.split("\n") if raw else []:
        d = _loads(line)
        d["game_id"] = game_id
        d["prev_hash"] = prev
        body = canonical_json(d)
        prev = hashlib.sha256(body.encode("utf-8")).hexdigest()
        out.append(body.replace(',"payload":', f',"hash":"{prev}","payload":', 1))
    if prev != head_hash:
        raise CompactionError(
            f"game {game_id!r}: the compacted log's chain ends at "
            f"{prev[:12]}..., the game's head is {head_hash[:12]}..."
        )
    return out


def pack_views(views: dict[str, str]) -> bytes:
    return zlib.compress(orjson.dumps(views), 9)


def unpack_views(blob: bytes) -> dict[str, str]:
    out: dict[str, str] = orjson.loads(zlib.decompress(blob))
    return out


def archive_bytes(game_id: str, version: int, head: str, log: bytes, views: bytes) -> bytes:
    header = {
        "format": FORMAT,
        "game_id": game_id,
        "version": version,
        "hash": head,
        "log": len(log),
        "views": len(views),
    }
    return orjson.dumps(header) + b"\n" + log + views


def read_archive(data: bytes) -> tuple[dict[str, object], bytes, bytes]:
    """(header, log blob, views blob) of an archive file's bytes."""
    line, _, rest = data.partition(b"\n")
    header = _loads(line)
    if header.get("format") != FORMAT:
        raise CompactionError(f"not an archived game ({header.get('format')!r})")
    n_log = int(str(header["log"]))
    n_views = int(str(header["views"]))
    if len(rest) != n_log + n_views:
        raise CompactionError(f"archived game {header.get('game_id')!r} is truncated")
    return header, rest[:n_log], rest[n_log:]
