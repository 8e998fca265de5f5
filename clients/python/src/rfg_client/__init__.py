"""rfg-client: a small, typed Python client of the Roll for the Galaxy game server's REST API.

Standard library only. See ``Client`` and the package's README.
"""

from rfg_client.bot import Bot
from rfg_client.client import (
    RETRY_STATUSES,
    ApiError,
    Client,
    Decide,
    Turn,
    Unreachable,
    parse_sse,
)
from rfg_client.policy import accept_challenge, legal_choice

__all__ = [
    "RETRY_STATUSES",
    "ApiError",
    "Bot",
    "Client",
    "Decide",
    "Turn",
    "Unreachable",
    "accept_challenge",
    "legal_choice",
    "parse_sse",
]
__version__ = "0.1.0"
