"""The one bytes-to-text helper: Redis answers bytes or str depending on how the client was made
(``decode_responses``), and every reader of the store turns them into text the same way."""

from __future__ import annotations

from typing import Any


def text(value: Any) -> str:
    """``value`` as text: bytes decoded as UTF-8, anything else through ``str``."""
    return value.decode("utf-8") if isinstance(value, bytes) else str(value)
