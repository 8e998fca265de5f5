"""rfg-client: a small, typed Python client of the Roll for the Galaxy game server's REST API.

Standard library only. See ``Client`` and the package's README.
"""

from rfg_client.client import (
    RETRY_STATUSES,
    ApiError,
    Client,
    Decide,
    Turn,
    Unreachable,
    parse_sse,
)
from rfg_client.policy import legal_choice

__all__ = [
    "RETRY_STATUSES",
    "ApiError",
    "Client",
    "Decide",
    "Turn",
    "Unreachable",
    "legal_choice",
    "parse_sse",
]
__version__ = "0.1.0"
