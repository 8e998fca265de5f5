"""A WSGI app for the game-affinity tests: answers which worker process served the request and
a digest of the body it read (so a passed connection is shown to arrive whole)."""

from __future__ import annotations

import hashlib
import json
import os
from collections.abc import Callable, Iterable
from typing import Any


def app(environ: dict[str, Any], start_response: Callable[..., Any]) -> Iterable[bytes]:
    length = int(environ.get("CONTENT_LENGTH") or 0)
    body = environ["wsgi.input"].read(length) if length else b""
    answer = json.dumps(
        {
            "pid": os.getpid(),
            "path": environ.get("PATH_INFO", ""),
            "body_sha256": hashlib.sha256(body).hexdigest(),
        }
    ).encode()
    start_response(
        "200 OK", [("Content-Type", "application/json"), ("Content-Length", str(len(answer)))]
    )
    return [answer]
