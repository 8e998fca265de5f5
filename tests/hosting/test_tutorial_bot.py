"""A bot client following openapi.yaml's tutorial (the seat's stream, its turn signal, commands
by ``decision_id``: ``rfg_client.Client.play``) plays whole games against a built-in bot over
the real stack - gunicorn's gevent worker as ``rfg run`` serves it, an ``rfg worker`` playing the
bot, the real Redis - with the rate limits on at their defaults, and meets no 429 (every answer
counted). The client's README example runs as written (its code block, extracted) with nothing
but the ``rfg-client`` sources on its path, and says in one line when nothing listens at the URL.
"""

from __future__ import annotations

import os
import re
import subprocess
import sys
from collections import Counter
from collections.abc import Callable
from pathlib import Path
from typing import Any
from urllib.error import HTTPError

import pytest
from rfg_client import Client

from tests.conftest import REDIS_URL
from tests.processes import Proc, free_port

ROOT = Path(__file__).resolve().parents[2]
CLIENT_SRC = ROOT / "clients" / "python" / "src"
SERVER_PACKAGES = ("engine", "bots", "events", "service", "workers", "ladder", "rfgcli")


def _server(
    start_api: Callable[..., tuple[Proc, str]], start_worker: Callable[..., Proc], prefix: str
) -> str:
    # the limits as shipped (RFG_RATE_LIMITS on, every LIMIT_* at its default); streams closed
    # by the server every 5 s so the client reconnects (resuming) many times a game
    _proc, base = start_api(REDIS_URL, prefix, RFG_RATE_LIMITS="1", RFG_SSE_MAX_SECONDS="5")
    start_worker(REDIS_URL, prefix)
    return base


def test_a_bot_following_the_tutorial_plays_a_whole_game_and_meets_no_429(
    real_redis: Any,
    prefix: str,
    start_api: Callable[..., tuple[Proc, str]],
    start_worker: Callable[..., Proc],
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    from rfg_client import client as client_module
    from rfg_client import legal_choice

    base = _server(start_api, start_worker, prefix)
    statuses: Counter[int] = Counter()
    requests: Counter[str] = Counter()
    real_urlopen = client_module.urlopen

    def counting(req: Any, timeout: float | None = None) -> Any:
        kind = "stream" if req.get_header("Accept") == "text/event-stream" else req.get_method()
        requests[kind] += 1
        try:
            resp = real_urlopen(req, timeout=timeout)
        except HTTPError as exc:
            statuses[exc.code] += 1
            raise
        statuses[resp.status] += 1
        return resp

    monkeypatch.setattr(client_module, "urlopen", counting)
    api = Client(base, timeout=30)
    gid = api.create_game([{"kind": "human"}, {"kind": "bot", "bot": "heuristic"}])["game_id"]
    api.claim(gid, 0)
    decisions: Counter[str] = Counter()

    def decide(decision: dict[str, Any], view: dict[str, Any]) -> dict[str, Any]:
        decisions[decision["kind"]] += 1
        return legal_choice(decision, view)

    final = api.play(gid, 0, decide)
    print(
        {
            "statuses": dict(statuses),
            "requests": dict(requests),
            "decisions": sum(decisions.values()),
        }
    )
    assert final["step"] == "over" and final["result"]["winners"]
    assert statuses[429] == 0, statuses
    assert not [s for s in statuses if s >= 500], statuses
    assert decisions["start_tiles"] == 1 and decisions["assign"] >= 3, decisions
    # one command per decision (a 409 at most now and then), no view read while playing
    assert requests["POST"] <= sum(decisions.values()) + 2 and requests["GET"] <= 1, requests


def _readme_example() -> str:
    text = (ROOT / "clients" / "python" / "README.md").read_text(encoding="utf-8")
    blocks = re.findall(r"```python\n(.*?)```", text, re.S)
    assert len(blocks) == 1, "the client's README has one example"
    return blocks[0]


def _run(
    script: Path, *args: str, cwd: Path, url: str | None = None
) -> subprocess.CompletedProcess[str]:
    # nothing of the server's on the path: only the client's sources, from a directory elsewhere
    env = {k: v for k, v in os.environ.items() if not k.startswith("RFG_")}
    env["PYTHONPATH"] = str(CLIENT_SRC)
    if url is not None:
        env["RFG_URL"] = url
    return subprocess.run(
        [sys.executable, str(script), *args],
        cwd=cwd,
        env=env,
        capture_output=True,
        text=True,
        timeout=600,
    )


def test_the_client_readme_example_runs_as_written_to_the_end_of_a_game(
    real_redis: Any,
    prefix: str,
    start_api: Callable[..., tuple[Proc, str]],
    start_worker: Callable[..., Proc],
    tmp_path: Path,
) -> None:
    base = _server(start_api, start_worker, prefix)
    script = tmp_path / "play.py"
    check = f"assert not {{m.split('.')[0] for m in sys.modules}} & {set(SERVER_PACKAGES)!r}"
    script.write_text(_readme_example() + f"\n{check}, 'a server package was imported'\n")
    done = _run(script, base, cwd=tmp_path)
    assert done.returncode == 0, done.stdout + done.stderr
    winners = done.stdout.strip().splitlines()[-1]
    assert re.fullmatch(r"\[[0-9](, [0-9])?\]", winners), done.stdout
    assert len(Client(base).list_games(status="finished")["items"]) == 1

    # the example, its URL from RFG_URL: a 4-seat game to the end, its log verified
    done = _run(ROOT / "examples" / "play_vs_bots.py", cwd=tmp_path, url=base)
    assert done.returncode == 0, done.stdout + done.stderr
    assert done.stdout.strip().splitlines()[-1].endswith("the log verifies: True"), done.stdout


def test_nothing_listening_at_the_url_is_one_line_naming_it(tmp_path: Path) -> None:
    url = f"http://127.0.0.1:{free_port()}"
    script = tmp_path / "play.py"
    script.write_text(_readme_example(), encoding="utf-8")
    runs = [
        (script, url),
        (ROOT / "examples" / "play_vs_bots.py", url),
        (ROOT / "examples" / "random_bot.py", "--url", url, "--token", "rfgb_x"),
    ]
    for path, *args in runs:
        done = _run(path, *args, cwd=tmp_path)
        assert done.returncode == 1, (path, done.stdout, done.stderr)
        lines = done.stderr.strip().splitlines()
        assert len(lines) == 1 and lines[0].startswith(f"nothing listens at {url} "), done.stderr
        assert "Traceback" not in done.stderr
