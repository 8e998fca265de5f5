"""A checker in the Jepsen manner for the service on test hosts (``tests.netns.deployment``).

Players on the client hosts (``ca``, ``cb``) play games over HTTP by ``decision_id`` through the
API hosts while a schedule of faults runs, and record every answer. A command is resent with the
same command id after a 503 or no answer (to either API host) until it gets a definite answer:
201 (acknowledged) or 409. After the faults are healed the players finish their games, and the
checker reads every game's log straight from the cluster and checks:

* every acknowledged command is in its game's log exactly once (one batch of events with its
  command id), at the version the answer gave;
* the events each answer returned are the events stored at those positions: no game has two
  histories (an answer from a branch that a failover threw away would differ in type or ts);
* every log's hash chain verifies and every finished game's log replays (``events.replay``'s
  ``verify_text``, what ``rfg replay`` runs, plus the views rebuilt from the stream);
* every answer was 2xx, 409 or 503 (or no answer at all): never a 500 or another 5xx.
"""

from __future__ import annotations

import random
import threading
import time
import uuid
from collections import Counter
from dataclasses import dataclass, field
from typing import Any

from rfg_client import ApiError, Client

import events.store
from bots import get_bot
from engine.rng import Rng
from events.envelope import verify_chain
from events.games.service import GameService
from tests.netns.deployment import ADMIN, Deployment
from tests.workers.checks import check_finished_game

#: answers a client may see while the network misbehaves
ALLOWED = {200, 201, 409, 503, "no answer"}


@dataclass
class Ack:
    seat: int
    command_id: str
    version: int
    events: list[tuple[int, str, str]]  # (seq, type, ts) as the answer gave them


@dataclass
class Player:
    """Plays the human seats of one game from a client host."""

    dep: Deployment
    host: str
    gid: str
    seats: list[int]
    apis: list[str]
    seed: int
    acks: list[Ack] = field(default_factory=list)
    answers: Counter[Any] = field(default_factory=Counter)
    bad: list[str] = field(default_factory=list)
    errors: list[str] = field(default_factory=list)
    finished: bool = False
    #: seconds of each submission that got a definite answer on its first try
    latencies: list[float] = field(default_factory=list)

    def __post_init__(self) -> None:
        self.stop = threading.Event()
        self.tokens: dict[int, str] = {}
        self.rng = Rng(self.seed)
        self.pick = random.Random(self.seed)
        self.bot = get_bot("random")
        self.thread = threading.Thread(target=self._run, daemon=True, name=f"player-{self.gid}")

    def client(self) -> Client:
        host = self.pick.choice(self.apis)
        return Client(self.dep.api_base(host), timeout=4, retries=0)

    def _call(self, what: str, fn: Any) -> Any:
        """``fn(client)`` until a definite answer; 503 and no answer are retried."""
        while True:
            try:
                out = fn(self.client())
                self.answers[200] += 1
                return out
            except ApiError as exc:
                self.answers[exc.status] += 1
                if exc.status not in ALLOWED:
                    self.bad.append(f"{what}: {exc.status} {str(exc)[:300]}")
                if exc.status < 500:  # a 5xx is retried too (and a 500 counted as bad above)
                    raise
            except (OSError, TimeoutError) as exc:
                self.answers["no answer"] += 1
                if self.stop.is_set() and what == "read":
                    raise InterruptedError from exc
            if self.stop.is_set() and what == "read":
                raise InterruptedError
            time.sleep(0.2)

    def _run(self) -> None:
        self.dep.net.enter(self.host)
        try:
            for s in self.seats:
                self.tokens[s] = self._call("read", lambda c, s=s: c.claim(self.gid, s))
            while not self.stop.is_set():
                pub = self._call("read", lambda c: c.view(self.gid))
                if pub["view"]["step"] == "over":
                    self.finished = True
                    return
                mine = [s for s in self.seats if str(s) in pub["view"]["pending"]]
                if not mine:
                    time.sleep(0.05)
                    continue
                for seat in mine:
                    self._play(seat)
        except InterruptedError:
            pass
        except BaseException as exc:  # noqa: BLE001 - reported by the checker
            self.errors.append(f"{type(exc).__name__}: {exc}")

    def _play(self, seat: int) -> None:
        tok = self.tokens[seat]
        view = self._call("read", lambda c: c.view(self.gid, seat=seat, token=tok))
        decision = view["view"].get("decision")
        if decision is None:
            return
        command = self.bot.act(decision, None, self.rng)
        cid = uuid.uuid4().hex[:16]
        sent, tries = time.monotonic(), sum(self.answers.values())
        try:
            out = self._call(
                "submit",
                lambda c: c.submit(
                    self.gid,
                    seat,
                    command,
                    decision_id=decision["decision_id"],
                    command_id=cid,
                    token=tok,
                    retries=0,
                ),
            )
        except ApiError as exc:
            if exc.status == 409:
                return
            raise
        if sum(self.answers.values()) == tries + 1:
            self.latencies.append(time.monotonic() - sent)
        self.acks.append(
            Ack(
                seat,
                cid,
                int(out["version"]),
                [(int(e["seq"]), str(e["type"]), str(e["ts"])) for e in out["events"]],
            )
        )


def create_games(dep: Deployment, n: int, bot_every: int = 4) -> list[tuple[str, list[int]]]:
    """``n`` 2-player games (every ``bot_every``-th with a bot on seat 1): (game id, human seats)."""
    admin = Client(dep.api_base("api1"), admin_token=ADMIN, timeout=10)
    out = []
    for i in range(n):
        with_bot = bot_every and i % bot_every == bot_every - 1
        seats = [
            {"kind": "human"},
            {"kind": "bot", "bot": "random"} if with_bot else {"kind": "human"},
        ]
        gid = admin.create_game(seats, seed=f"np-{uuid.uuid4().hex[:8]}")["game_id"]
        out.append((gid, [0] if with_bot else [0, 1]))
    return out


@dataclass
class Verdict:
    games: int = 0
    finished: int = 0
    acknowledged: int = 0
    lost: list[str] = field(default_factory=list)
    duplicated: list[str] = field(default_factory=list)
    two_histories: list[str] = field(default_factory=list)
    unverifiable: list[str] = field(default_factory=list)
    bad_answers: list[str] = field(default_factory=list)
    answers: Counter[Any] = field(default_factory=Counter)
    player_errors: list[str] = field(default_factory=list)

    def ok(self) -> bool:
        return not (
            self.lost
            or self.duplicated
            or self.two_histories
            or self.unverifiable
            or self.bad_answers
            or self.player_errors
        )

    def summary(self) -> dict[str, Any]:
        return {
            "games": self.games,
            "finished": self.finished,
            "acknowledged": self.acknowledged,
            "lost": len(self.lost),
            "duplicated": len(self.duplicated),
            "two_histories": len(self.two_histories),
            "unverifiable": len(self.unverifiable),
            "bad_answers": len(self.bad_answers),
            "answers": {str(k): v for k, v in sorted(self.answers.items(), key=str)},
            "examples": (
                self.lost
                + self.duplicated
                + self.two_histories
                + self.unverifiable
                + self.bad_answers
                + self.player_errors
            )[:5],
        }


def check(dep: Deployment, players: list[Player]) -> Verdict:
    """Read every game from the cluster (run inside the ``ctl`` host) and judge the answers."""
    client = events.store.connect(dep.store_url)
    games = GameService(events.store.RedisStore(client, prefix=dep.prefix))
    v = Verdict()
    try:
        for p in players:
            v.games += 1
            v.acknowledged += len(p.acks)
            v.answers.update(p.answers)
            v.bad_answers += p.bad
            v.player_errors += [f"{p.gid}: {e}" for e in p.errors]
            envs = games.store.read(p.gid)
            try:
                verify_chain(envs)
                if [e.seq for e in envs] != list(range(1, len(envs) + 1)):
                    raise AssertionError("sequence numbers are not contiguous")
            except Exception as exc:  # noqa: BLE001 - counted
                v.unverifiable.append(f"{p.gid}: {exc}")
                continue
            batches: dict[str, list[list[int]]] = {}
            prev = None
            for e in envs:
                runs = batches.setdefault(e.command_id, [])
                if prev != e.command_id:
                    runs.append([])
                runs[-1].append(e.seq)
                prev = e.command_id
            by_seq = {e.seq: e for e in envs}
            for ack in p.acks:
                runs = batches.get(f"seat:{ack.seat}:{ack.command_id}", [])
                if not runs:
                    v.lost.append(f"{p.gid} {ack.command_id} (version {ack.version})")
                    continue
                if len(runs) > 1:
                    v.duplicated.append(f"{p.gid} {ack.command_id} stored {len(runs)} times")
                if runs[0][-1] != ack.version:
                    v.two_histories.append(
                        f"{p.gid} {ack.command_id}: answered version {ack.version}, "
                        f"stored at {runs[0][0]}..{runs[0][-1]}"
                    )
                for seq, typ, ts in ack.events:
                    e = by_seq.get(seq)
                    if e is None or e.type != typ or e.ts != ts:
                        v.two_histories.append(f"{p.gid} {ack.command_id}: event {seq} differs")
                        break
            if p.finished:
                v.finished += 1
                try:
                    check_finished_game(games, p.gid)
                except AssertionError as exc:
                    v.unverifiable.append(f"{p.gid}: {exc}")
    finally:
        client.close()
    return v
