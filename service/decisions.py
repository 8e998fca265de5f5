"""One Server-Sent Events stream per bot account: "your decision is pending" across all its games.

``GET /bots/me/decisions/stream`` (bot token). **Pushed by the append.** When a command (or a
creation) makes a decision pending for a seat ``{"kind": "external", "account": id}``,
``GameService`` writes a notice to the account's own Redis stream
(``<prefix>:{a:<id>}:notices``, ``RedisStore.notice_stream``) together with the append: in the
same pipeline (one round trip) on a single Redis, right after it on a Redis Cluster (the
account's key has its own hash tag, so it cannot be in the game's script). The stream waits on it
through the process's ``Fanout`` (one reader for every stream of the process) and sends each
notice as soon as it is written, once the command it names is
found recorded (``RedisStore.notice_applied``: a notice of an append the store refused names a
command that is not). The same stream carries the games' starts and ends (field ``d`` with a
``type``: the events stream's, ``service.account_events``), which this stream skips. One event per
decision::

    id: <game_id>:<seat>:<decision_id>
    event: decision
    data: {"game_id", "seat", "kind", "decision_id", "since", "deadline",
           "links": {"view", "commands"}, "decision_version", "game_version"}

(``decision_version`` repeats ``decision_id`` and ``game_version`` is the game's version when
the event was written: deprecated fields openapi.yaml keeps until the next API version.)

A challenge addressed to the account (``POST /challenges``, ``service.challenges``) is sent as
``id: challenge:<challenge_id>``, ``event: challenge``, ``data: <the challenge>`` when it is made
(its notice, field ``c``) and, while it is open, by every scan (so on every (re)connect). Its
outcome is sent to the other account as it happens (``id: challenge:<challenge_id>:<status>``,
the challenger of an accept or a decline, the challenged account of a cancel), not replayed.

``decision_id`` is what a command answering the decision may carry
instead of ``expected_version`` (see service/api/commands.py).

**The scan** (at connect, then every ``poll`` seconds, ``DECISIONS_POLL_SECONDS``, as a safety
net: a notice lost with a process that died between the append and it on a cluster, or written by
an older server) reads the account's active games (``<prefix>:botacct:<id>:active``, filled by
the ladder scheduler), one pipelined ``HGET version`` per game; only a game whose version moved is
read again: its public view's ``clock`` block says, per seat, what it owes. A game that has ended
is dropped from the active set. ``: keep-alive`` comments come every ``keepalive`` seconds of
quiet; the server closes the stream after ``max_seconds`` (the client reconnects, after
``retry``).

**Resuming.** A decision is a level, not an edge: what matters is what is pending now. On
(re)connect the stream first sends every decision still pending (the scan), except the one named
by ``Last-Event-ID`` (the client had it); notices written from the moment of the connection on
follow. Delivery is therefore at-least-once: a client dedupes by the event id, and answering a
decision twice is harmless anyway (commands are versioned and idempotent). Decisions that came
and went while the client was away (a timeout played them) are not replayed: nothing is owed for
them.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Iterator
from typing import Any

import orjson

from events.games.service import GameService
from events.store import RedisStore
from service.accounts import BotAccounts, seats_of
from service.challenges import Challenges, public
from service.fanout import Fanout
from service.sse import frame, serve


def event_id(game_id: str, seat: int, decision_id: int) -> str:
    """A decision event's ``id:``."""
    return f"{game_id}:{seat}:{decision_id}"


def pending_decisions(
    games: GameService, game_id: str, account: str
) -> tuple[bool, list[dict[str, Any]]]:
    """(game over, the account's pending decisions in this game)."""
    _pos, text = games.view(game_id, "summary")
    summary = orjson.loads(text)
    mine = seats_of(summary, account)
    version, text = games.view(game_id, "public")
    view = orjson.loads(text)
    over = summary.get("status") == "finished" or view.get("step") == "over"
    out: list[dict[str, Any]] = []
    if over:
        return True, out
    for sc in (view.get("clock") or {}).get("seats") or []:
        seat = sc.get("seat")
        if seat in mine and sc.get("pending") and sc.get("decision_id") is not None:
            out.append(
                {
                    "game_id": game_id,
                    "seat": seat,
                    "kind": sc["pending"],
                    "decision_id": sc["decision_id"],
                    "decision_version": sc["decision_id"],  # deprecated: decision_id
                    "game_version": version,  # deprecated
                    "since": sc.get("since"),
                    "deadline": sc.get("deadline"),
                    "links": {
                        "view": f"/games/{game_id}/seats/{seat}/view",
                        "commands": f"/games/{game_id}/seats/{seat}/commands",
                    },
                }
            )
    return False, out


#: a challenge's seats as served (with names and ratings: ``service.players.challenge_seats``)
SeatsServed = Callable[[list[dict[str, Any]], str | None, list[str] | None], list[dict[str, Any]]]


def challenge_event(
    challenge: dict[str, Any], served: SeatsServed | None = None
) -> tuple[str, dict[str, Any]]:
    """(event id, data) of a challenge addressed to the account (``service.challenges``), open
    (``challenge:<id>``), or of the outcome of one it is party to (``challenge:<id>:<status>``);
    ``served`` names and rates its seats."""
    c = {k: v for k, v in public(challenge).items() if k != "links"}
    if served is not None:
        c["seats"] = served(list(c.get("seats") or []), c.get("ladder"), c.get("entrants"))
    cid = c["challenge_id"]
    c.setdefault("status", "open")
    c.setdefault("game_id", None)
    links = {"self": f"/challenges/{cid}"}
    if c["status"] == "open":
        links["accept"] = f"/challenges/{cid}/accept"
        links["decline"] = f"/challenges/{cid}/decline"
    if c["game_id"]:
        links["game"] = f"/games/{c['game_id']}"
    c["links"] = links
    ident = f"challenge:{cid}" if c["status"] == "open" else f"challenge:{cid}:{c['status']}"
    return ident, c


class Decisions:
    """One account's decisions stream as a ``service.sse.Source``: the decisions it sent, the
    version of each active game it last scanned, and its cursor in the account's notices. What
    one ``ready`` finds is kept (sent, seen, cursor) only once it was all read: a store error
    midway leaves the next ``ready`` to find it again."""

    def __init__(
        self,
        games: GameService,
        store: RedisStore,
        accounts: BotAccounts,
        account: str,
        last_event_id: str | None,
        fanout: Fanout,
        poll: float,
        served: SeatsServed | None = None,
    ) -> None:
        self.games, self.store, self.accounts, self.account = games, store, accounts, account
        self.served = served
        self.fanout, self.poll = fanout, poll
        self.notices = store.notice_stream(account)
        self.challenges = Challenges(accounts.client, store.prefix, store.notice_stream)
        self.sent: set[str] = {last_event_id} if last_event_id else set()
        self.seen: dict[str, int | None] = {}
        # the notices appended from now on are read after the first scan: none is missed between
        self.cursor = store.newest_notice(account)
        self.next_poll = 0.0  # the scan: at connect, then every ``poll`` seconds
        self.notified = False

    def ready(self) -> list[str]:
        out: dict[str, str] = {}
        seen = dict(self.seen)
        now = time.monotonic()
        scan = now >= self.next_poll
        if scan:
            self._scan(out, seen)
        cursor = self._read_notices(out) if self.notified else self.cursor
        if scan:
            self.next_poll = now + self.poll
        self.sent.update(out)
        self.seen, self.cursor, self.notified = seen, cursor, False
        return list(out.values())

    def more(self) -> bool:
        return False

    def done(self) -> bool:
        return False

    def wait(self, seconds: float) -> bool:
        """Wait for a notice, at most until the next scan is due."""
        seconds = min(seconds, self.next_poll - time.monotonic())
        self.notified = self.fanout.wait(self.notices, self.cursor, max(0.001, seconds))
        return self.notified

    def _scan(self, out: dict[str, str], seen: dict[str, int | None]) -> None:
        """Every decision pending in the account's active games whose version moved since the
        last scan (one pipelined ``HGET version`` per game); an ended game leaves the set."""
        for challenge in self.challenges.open_challenges(self.account, "in"):
            if f"challenge:{challenge['challenge_id']}" in self.sent:
                continue  # (sent on this connection already: not named and rated again)
            ident, c = challenge_event(challenge, self.served)
            self._send(out, ident, c, "challenge")
        active = self.accounts.active_games(self.account)
        for g, version in zip(active, self.store.versions(active), strict=True):
            if version is None or seen.get(g) == version:
                continue
            over, decisions = pending_decisions(self.games, g, self.account)
            seen[g] = version
            if over:
                self.accounts.finished(self.account, g)
                continue
            for d in decisions:
                self._send(out, event_id(g, d["seat"], d["decision_id"]), d)

    def _read_notices(self, out: dict[str, str]) -> str:
        """The notices written since the cursor, each sent once the command it names is found
        recorded; returns the cursor past them."""
        cursor = self.cursor
        for entry_id, fields in self.store.read_notices(self.account, cursor):
            cursor = entry_id
            if "c" in fields:  # a challenge addressed to the account, or an outcome
                ident, c = challenge_event(orjson.loads(fields["c"]), self.served)
                self._send(out, ident, c, "challenge")
                continue
            d = orjson.loads(fields["d"])
            if (
                "type" in d
            ):  # a game's start or end: the events stream's (``service.account_events``)
                continue
            command_id = d.pop("command_id", None)
            ident = event_id(d["game_id"], d["seat"], d["decision_id"])
            if ident in self.sent or ident in out or command_id is None:
                continue
            # written with the append in one round trip, even if the append was refused
            if not self.store.notice_applied(d["game_id"], command_id, d["decision_id"]):
                continue
            self._send(out, ident, d)
        return cursor

    def _send(
        self, out: dict[str, str], ident: str, d: dict[str, Any], event: str = "decision"
    ) -> None:
        if ident not in self.sent and ident not in out:
            out[ident] = frame(d, event=event, ident=ident)


def decision_stream(
    games: GameService,
    store: RedisStore,
    accounts: BotAccounts,
    account: str,
    *,
    last_event_id: str | None,
    max_seconds: float,
    keepalive: float,
    poll: float,
    retry_ms: int = 2000,
    allowed: Callable[[], bool] | None = None,
    fanout: Fanout,
    served: SeatsServed | None = None,
) -> Iterator[str]:
    """The stream described above (``service.sse.serve``'s loop); ``allowed`` (the bot token
    still live) is asked once a keep-alive interval and ends the stream once the token is
    revoked. ``fanout`` is the process's reader of the account's notices; ``served`` names and
    rates a challenge's seats."""
    source = Decisions(games, store, accounts, account, last_event_id, fanout, poll, served)
    return serve(
        source,
        max_seconds=max_seconds,
        keepalive=keepalive,
        retry_ms=retry_ms,
        allowed=allowed,
        name=f"decisions of {account}",
    )
