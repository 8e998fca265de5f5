"""Records of ``Idempotency-Key`` on game creation (what they mean: ``service.idempotency``).

One key per client and key used, ``<prefix>:idem:<sha256 of scope and key>``: a string,
``"<state> <game id> <sha256 of the body>"``, kept for the seconds the caller gives from the first
request.
"""

from __future__ import annotations

from typing import Any

from events.store.text import text


class IdempotencyRecords:
    """The records under one key prefix. A record is named by ``record(digest)``."""

    def __init__(self, client: Any, prefix: str = "rfg") -> None:
        self.client = client
        self.prefix = prefix

    def record(self, digest: str) -> str:
        return f"{self.prefix}:idem:{digest}"

    def reserve(self, record: str, value: str, seconds: int) -> bool:
        """Make the record, kept ``seconds``; False when it exists."""
        return bool(self.client.set(record, value, nx=True, ex=seconds))

    def get(self, record: str) -> str | None:
        raw = self.client.get(record)
        return None if raw is None else text(raw)

    def settle(self, record: str, value: str) -> None:
        """Replace an existing record's value, keeping its expiry."""
        self.client.set(record, value, xx=True, keepttl=True)
