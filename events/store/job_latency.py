"""Job latency as a histogram kept in Redis, so that the API's ``/metrics`` can report what the
worker processes measured (they serve no HTTP of their own). The workers write it, the API reads
it; it lives here, below both, so that neither imports the other.

Each played job adds its enqueue-to-applied latency to ``<prefix>:metrics:job_latency:<kind>``
(``kind`` is ``bot`` or ``timeout``): a hash of per-bucket counts (not cumulative; the reader
accumulates them, as Prometheus histograms are), ``count`` and ``sum`` - three commands in one
pipeline per job.
"""

from __future__ import annotations

from typing import Any

from events.store.text import text

#: upper bounds in seconds (Prometheus' ``le``); the last bucket is +Inf
BUCKETS: tuple[float, ...] = (
    0.005,
    0.01,
    0.025,
    0.05,
    0.1,
    0.25,
    0.5,
    1.0,
    2.5,
    5.0,
    10.0,
    30.0,
    60.0,
)
KINDS = ("bot", "timeout")


def latency_key(prefix: str, kind: str) -> str:
    return f"{prefix}:metrics:job_latency:{kind}"


def bucket_of(seconds: float) -> str:
    for bound in BUCKETS:
        if seconds <= bound:
            return repr(bound)
    return "+Inf"


def record_job_latency(client: Any, prefix: str, kind: str, seconds: float) -> None:
    key = latency_key(prefix, kind)
    pipe = client.pipeline(transaction=False)
    pipe.hincrby(key, bucket_of(seconds), 1)
    pipe.hincrby(key, "count", 1)
    pipe.hincrbyfloat(key, "sum", seconds)
    pipe.execute()


def read_job_latency(client: Any, prefix: str, kind: str) -> tuple[list[tuple[str, int]], float]:
    """Cumulative ``(le, count)`` buckets (ending with ``+Inf``) and the sum of seconds."""
    raw = {text(k): v for k, v in client.hgetall(latency_key(prefix, kind)).items()}
    total = 0
    out = []
    for bound in [repr(b) for b in BUCKETS] + ["+Inf"]:
        total += int(raw.get(bound, 0))
        out.append((bound, total))
    return out, float(raw.get("sum", 0.0))
