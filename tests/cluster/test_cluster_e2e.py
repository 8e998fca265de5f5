"""The whole service on a real 3-master Redis Cluster, with RQ on a plain Redis of its own.

Two API processes (gunicorn, dispatch on, rate limits on) and two ``rfg worker`` processes, all
on ``redis+cluster://`` with ``RFG_QUEUE_URL``. Over HTTP: 2-player games with a scripted person
on seat 0 (every request alternating between the two API processes, so each process's cached
state must catch up with what the other stored) against a heuristic bot, bot-only games, a
public SSE stream read from the other API process, the signed export verified in-process and by
``POST /replays/verify``; a ladder with two built-in bots and an external bot account (the
example client, through its decisions stream) played by the workers' scheduler. Then every game's
log verifies, each decision was played once, the views equal views rebuilt from the stream, the
ladder's live ratings equal ratings rebuilt from the logs, and the games' keys landed on more
than one master.
"""

from __future__ import annotations

import json
import sys
import threading
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from rfg_client import ApiError, Client

import events.store
from bots import get_bot
from engine.rng import Rng
from events.games.service import GameService
from events.verify.replay import verify_text
from ladder.service import Ladders, tables_equal
from tests.hosting.conftest import ADMIN
from tests.processes import Proc, spawn, wait_for
from tests.workers.checks import check_finished_game

pytestmark = pytest.mark.cluster

PEOPLE = 3  # games with a scripted person on seat 0
BOT_GAMES = 2
LADDER_RESULTS = 3


class Person:
    """Plays seat 0 of one game over HTTP, alternating between the API processes."""

    def __init__(self, bases: list[str], gid: str, seed: int) -> None:
        self.apis = [Client(b, timeout=30) for b in bases]
        self.gid = gid
        self.token = self.apis[0].claim(gid, 0)
        self.bot, self.rng = get_bot("random"), Rng(seed)
        self.acked: dict[str, int] = {}
        self.conflicts = 0
        self.errors: list[str] = []
        self.thread = threading.Thread(target=self.play, name=f"person-{gid}", daemon=True)
        self._n = 0

    def api(self) -> Client:
        self._n += 1
        return self.apis[self._n % len(self.apis)]

    def play(self) -> None:
        try:
            n = 0
            while True:
                pub = self.api().view(self.gid)
                if pub["view"]["step"] == "over":
                    return
                if "0" not in pub["view"]["pending"]:
                    time.sleep(0.01)
                    continue
                mine = self.api().view(self.gid, seat=0, token=self.token)
                if mine["view"].get("decision") is None:
                    continue
                command = self.bot.act(mine["view"]["decision"], None, self.rng)
                cid = f"{self.gid}-p{n}"
                n += 1
                try:
                    out = self.api().submit(
                        self.gid,
                        0,
                        command,
                        command_id=cid,
                        expected_version=mine["version"],
                        token=self.token,
                    )
                except ApiError as exc:
                    if exc.status == 409:  # the bot moved first: read again, decide again
                        self.conflicts += 1
                        continue
                    raise
                self.acked[cid] = out["version"]
        except BaseException as exc:  # noqa: BLE001 - reported by the test
            self.errors.append(f"{type(exc).__name__}: {exc}")


def _logs(procs: list[Proc]) -> str:
    return "\n".join(f"--- {p.args!r}:\n{p.log()[-2000:]}" for p in procs)


def test_games_sse_exports_and_a_ladder_on_a_cluster_with_two_apis_and_two_workers(
    redis_cluster: Any,
    queue_url: str,
    cprefix: str,
    start_api: Callable[..., tuple[Proc, str]],
    start_worker: Callable[..., Proc],
    tmp_path: Path,
) -> None:
    started = time.monotonic()
    url = redis_cluster.url
    env = {
        "RFG_QUEUE_URL": queue_url,
        "RFG_DISPATCH": "1",
        "RFG_LIMIT_PER_ADDRESS": "1000000 per minute",
        "RFG_LIMIT_PER_TOKEN": "1000000 per minute",
        "RFG_LIMIT_COMMANDS": "1000000 per minute",
    }
    apis = [start_api(url, cprefix, 1, **env) for _ in range(2)]
    bases = [base for _, base in apis]
    workers = [
        start_worker(
            url,
            cprefix,
            "--queue-url",
            queue_url,
            "--sweep-interval",
            "0.2",
            "--stale-after",
            "2",
            "--ladder-interval",
            "0.2",
        )
        for _ in range(2)
    ]
    procs = [p for p, _ in apis] + workers
    admin = [Client(b, admin_token=ADMIN, timeout=30) for b in bases]
    client = events.store.connect(url)
    store = events.store.RedisStore(client, prefix=cprefix)
    games = GameService(store)
    lad = Ladders(client, games, prefix=cprefix)

    # games: a person against a bot, and bots only
    person_seats = [{"kind": "human"}, {"kind": "bot", "bot": "heuristic"}]
    bot_seats = [{"kind": "bot", "bot": "heuristic"}, {"kind": "bot", "bot": "random"}]
    gids = [
        admin[i % 2].create_game(person_seats, seed=f"cl-p{i}")["game_id"] for i in range(PEOPLE)
    ]
    bot_gids = [
        admin[i % 2].create_game(bot_seats, seed=f"cl-b{i}")["game_id"] for i in range(BOT_GAMES)
    ]
    people = [Person(bases, gid, i) for i, gid in enumerate(gids)]
    streamed: list[dict[str, Any]] = []
    sse = threading.Thread(
        target=lambda: streamed.extend(
            Client(bases[1], timeout=30).stream(gids[0], reconnect=True)
        ),
        daemon=True,
    )
    sse.start()
    for p in people:
        p.thread.start()

    # a ladder: two built-in bots and an external bot account (the example client)
    acct = admin[0]._json(
        "POST", "/bots/accounts", body={"name": "cluster-bot", "contact": "t@example.org"}
    )
    admin[1].request(
        "POST", "/ladders", body={"name": "cl", "players": [2], "concurrency": 2}, token=ADMIN
    )
    for body in (
        {"entrant": "heur", "bot": "heuristic"},
        {"entrant": "rand", "bot": "random"},
        {"entrant": "ext", "account": acct["account_id"]},
    ):
        admin[0].request("POST", "/ladders/cl/entrants", body=body, token=ADMIN)
    bot = spawn(
        [
            sys.executable,
            "examples/random_bot.py",
            "--url",
            bases[1],
            "--token",
            acct["token"],
            "--seed",
            "1",
        ],
        {},
        tmp_path / "ext-bot.log",
    )
    bot.log_path = tmp_path / "ext-bot.log"
    procs.append(bot)
    try:

        def results() -> int:
            out: dict[str, Any] = admin[1]._json("GET", "/ladders/cl")
            assert all(p.poll() is None for p in procs), _logs(procs)
            return int(out["results"])

        wait_for(lambda: results() >= LADDER_RESULTS, 150, f"{LADDER_RESULTS} ladder results")
        admin[0].request("PATCH", "/ladders/cl", body={"paused": True}, token=ADMIN)
        wait_for(lambda: all(not p.thread.is_alive() for p in people), 120, "the people's games")
        sse.join(30)
        # the paused ladder's running games finish (the external bot still plays) and are recorded
        wait_for(lambda: not lad.running("cl"), 120, "the paused ladder's games to be recorded")
    finally:
        bot.kill()
        bot.wait(10)
    for p in people:
        assert not p.errors, p.errors
    ladder_gids = list(lad.ladder_games("cl"))
    ext_games = [
        g
        for g in ladder_gids
        if any(s.get("kind") == "external" for s in games.load(g)[0].table["seats"])
    ]
    wait_for(lambda: all(games.load(g)[0].over for g in bot_gids), 60, "the bot games")

    # every game verifies end to end; each person's acknowledged commands are all stored
    for gid in gids + bot_gids + ladder_gids:
        check_finished_game(games, gid)
    for p in people:
        stored = {e.command_id.removeprefix("seat:0:"): e.seq for e in store.read(p.gid)}
        for cid, version in p.acked.items():
            assert stored.get(cid) == version, (
                f"acknowledged command {cid} (version {version}) lost"
            )
    # the SSE stream (other API process) delivered every event, in order, up to the end
    assert [i["seq"] for i in streamed] == list(range(1, store.version(gids[0]) + 1))
    # the signed export verifies, in-process and over HTTP
    text = admin[1].export(gids[1])
    assert verify_text(text).ok
    verdict = Client(bases[0]).verify(text)
    assert verdict["ok"] and verdict["authentic"], verdict
    # the ladder: live ratings = ratings rebuilt from the logs; the external account played
    assert len(lad.results("cl")) >= LADDER_RESULTS
    assert tables_equal(lad.rebuild_ratings("cl"), lad.live_table("cl"))
    assert ext_games, "no ladder game seated the external bot"
    assert set(ext_games) <= {
        g.decode() for g in client.smembers(f"{cprefix}:botacct:{acct['account_id']}:games")
    }
    # the games really are spread over the cluster's masters
    masters = {
        redis_cluster.master_of(store.keys(g)[0]).port for g in gids + bot_gids + ladder_gids
    }
    assert len(masters) >= 2, masters
    print(
        json.dumps(
            {
                "games": len(gids + bot_gids + ladder_gids),
                "masters_used": len(masters),
                "acknowledged": sum(len(p.acked) for p in people),
                "conflicts_409": sum(p.conflicts for p in people),
                "sse_events": len(streamed),
                "seconds": round(time.monotonic() - started, 1),
            }
        )
    )
    for proc in procs[:-1]:
        assert "Traceback" not in proc.log(), proc.log()[-3000:]
    client.close()
