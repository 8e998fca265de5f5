"""The example bots run from nothing but their tokens (``bench/example_bots.py`` at 20 games,
here shortened): the Python client's bot and the TypeScript example join an open ladder
themselves, play its rated games and a challenge each way between them, are each killed
(SIGKILL) once mid-game and resume their games when started again, and stop with status 0 on
SIGTERM - over the real stack (the API as ``rfg run`` serves it, rate limits on, an ``rfg worker``
running the ladder, the real Redis). Every game is played to its end, no answer is a 429 or a 5xx, every
exchange (streams included) matches openapi.yaml, every log verifies in Python and in Node."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any

from bench.example_bots import run
from tests.clients.conftest import ts_client  # noqa: F401 - the fixture, shared
from tests.conftest import REDIS_URL
from tests.hosting.conftest import ADMIN
from tests.processes import Proc


def test_the_example_bots_play_a_ladder_and_challenges_through_a_restart(
    real_redis: Any,
    prefix: str,
    start_api: Callable[..., tuple[Proc, str]],
    start_worker: Callable[..., Proc],
    ts_client: Path,  # noqa: F811
    tmp_path: Path,
) -> None:
    _proc, base = start_api(REDIS_URL, prefix, RFG_RATE_LIMITS="1", RFG_PROXY_HOPS="1")
    start_worker(REDIS_URL, prefix)
    figures = run(base, ADMIN, games=2, challenges=1, concurrency=1, log_dir=tmp_path, timeout=900)
    print("\n".join(figures.lines()))
    assert figures.failures == [], "\n".join(figures.lines())
    games = sum(figures.games.values())
    assert games >= 4 and sum(figures.reasons.values()) == games
    assert not set(figures.reasons) & {"abandoned", "aborted", "resigned"}, figures.reasons
    assert figures.verified_python == figures.verified_node == games
    assert {k.split()[0] for k in figures.kills} == {"py", "ts"}  # one kill each, its games
    assert figures.exits == {"py": 0, "ts": 0}
    assert figures.decisions > 20 * games and not figures.invalid
