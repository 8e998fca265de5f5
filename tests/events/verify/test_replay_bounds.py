"""The verifier is bounded: it streams, so memory stays small whatever the upload; hostile input
gets a one-line verdict from ``rfg replay`` (exit 2 when the file is not a log), never a traceback."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import tracemalloc
from collections.abc import Iterator
from pathlib import Path

import pytest

from events.verify.replay import verify_stream

RFG = os.path.join(os.path.dirname(sys.executable), "rfg")
GOLDEN = Path(__file__).resolve().parents[2] / "golden"
MB = 1 << 20


def _peak(chunks: Iterator[bytes]) -> tuple[int, str]:
    tracemalloc.start()
    try:
        verdict = verify_stream(chunks)
        return tracemalloc.get_traced_memory()[1], verdict.verdict
    finally:
        tracemalloc.stop()


def test_a_30_mb_line_is_refused_without_holding_it() -> None:
    def one_line() -> Iterator[bytes]:
        yield b'{"type": "GameCreated", "v": 1, "seed": "'
        for _ in range(30 * 16):
            yield b"x" * (64 * 1024)

    peak, verdict = _peak(one_line())
    assert verdict == "malformed" and peak < 4 * MB, peak


def test_a_30_mb_log_streams_in_small_memory() -> None:
    genuine = (GOLDEN / "rules3-2p.jsonl").read_bytes()

    def many() -> Iterator[bytes]:  # a genuine game, then 30 MB more after its end
        yield genuine
        filler = json.dumps({"type": "Noise", "v": 1, "pad": "y" * 1000}).encode() + b"\n"
        for _ in range(30 * MB // len(filler)):
            yield filler

    peak, verdict = _peak(many())
    assert verdict == "inconsistent" and peak < 8 * MB, peak


HOSTILE = {
    "binary": os.urandom(4096),
    "deep": b"[" * 100_000 + b"]" * 100_000 + b"\n",
    "list": b"[1, 2, 3]\n",
    "payload-list": json.dumps(
        {
            "type": "GameCreated",
            "schema_version": 1,
            "game_id": "g",
            "seq": 1,
            "visibility": "server",
            "command_id": "create",
            "actor": "system",
            "ts": "2026-01-01T00:00:00.000000Z",
            "payload": [1],
            "prev_hash": "0" * 64,
            "hash": "0" * 64,
        }
    ).encode(),
    "players-million": json.dumps(
        {"type": "GameCreated", "v": 1, "seed": "s", "players": 10**6, "options": {}, "seats": []}
    ).encode(),
    "no-seat": b"",  # filled below from a golden log
}


@pytest.mark.parametrize("case", sorted(HOSTILE))
def test_hostile_logs_get_one_line_and_no_traceback(case: str, tmp_path: Path) -> None:
    data = HOSTILE[case]
    if case == "no-seat":
        rows = [json.loads(x) for x in (GOLDEN / "rules3-2p.jsonl").read_text().splitlines()[:30]]
        i = next(k for k, r in enumerate(rows) if r["type"] == "CommandSubmitted")
        del rows[i]["seat"]
        data = "".join(json.dumps(r) + "\n" for r in rows).encode()
    path = tmp_path / "log.jsonl"
    path.write_bytes(data)
    out = subprocess.run([RFG, "replay", str(path)], capture_output=True, text=True, timeout=60)
    assert out.returncode in (1, 2) and "Traceback" not in out.stderr
    assert len(out.stderr.strip().splitlines()) == 1 and out.stderr.startswith("BAD ("), out.stderr
    if case in ("binary", "deep", "list"):
        assert out.returncode == 2, out.stderr
