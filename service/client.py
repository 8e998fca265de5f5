"""The Python client of the REST API now lives in its own distribution, ``rfg-client``
(``clients/python/``: standard library only, no server packages; ``pip install ./clients/python``).
This module re-exports it for the server's tests and scripts; from a source checkout where the
distribution is not installed, it is imported from ``clients/python/src``."""

from __future__ import annotations

import sys
from pathlib import Path

try:
    import rfg_client
except ImportError:  # a source checkout without `pip install ./clients/python`
    sys.path.append(str(Path(__file__).resolve().parents[1] / "clients" / "python" / "src"))
    import rfg_client

ApiError = rfg_client.ApiError
Client = rfg_client.Client
parse_sse = rfg_client.parse_sse

__all__ = ["ApiError", "Client", "parse_sse"]
