"""One Server-Sent Events stream per bot account of everything that happens to it:
``GET /bots/me/events`` (bot token).

Each event is ``id: <id>``, ``event: <type>``, ``data: <JSON object with "type": <type>>``:

* ``challenge``: an open challenge addressed to the account; ``challenge-accepted`` /
  ``challenge-declined`` (to the challenger) and ``challenge-canceled`` (to the challenged
  account): the challenge resource as ``GET /challenges/{id}`` answers it (its seats with names
  and ratings), as it was when it happened;
* ``game-started``: a game seats the account (``service.account_games.started``: its seat, the
  ladder, the players with names and ratings, links to the seat's view, commands and stream);
* ``game-finished``: a game it is seated in ended: ``result`` is ``{reason, winners, scores}``.

**Where they come from.** The account's notices stream (``RedisStore.notice_stream``), the one
the decisions stream (``service.decisions``) reads too: the challenges write theirs there
(field ``c``, ``service.challenges``), and ``GameService`` writes a game's start and end there
with the append that creates or ends it, in the same round trip (field ``d`` with a ``type``;
the decisions in the same field have none and are the decisions stream's only). A game notice
is sent once the command it names is found recorded (``RedisStore.notice_applied``: on a single
Redis a refused append's notices are written too). The stream waits on the notices through the
process's ``Fanout`` and sends each as it comes.

**Ids and resuming.** A live event's id is its notice's entry id in the stream. A client that
reconnects with ``Last-Event-ID`` gets what was written after it, nothing twice, nothing lost,
as long as that notice is still kept (the stream keeps about ``NOTICE_MAXLEN``). Without one, or
with one no longer kept, the stream first sends the state: every open challenge addressed to
the account (``challenge``) and a ``game-started`` for each seat in every active game (the
account's active games, and those whose start was noticed in the last ``LOOKBACK_MS`` before the
connection: a game is created before the account is seated in it); the last
of these carries as its id the newest notice's id at connect, so a client that had the whole
state resumes after it (one cut off before the end gets the state again). Then the live events.
An event is sent once per connection (a game created while the state was read is not sent
twice).

``: keep-alive`` comments come after ``keepalive`` seconds of quiet; the stream ends after
``max_seconds`` (the client reconnects with ``Last-Event-ID``) and within a keep-alive of its
token being revoked or rotated (``allowed``).
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from typing import Any

import orjson

from service.account_games import links, started, summaries
from service.accounts import seats_of
from service.backend import Backend
from service.challenges import Challenges
from service.fanout import Fanout
from service.sse import frame, serve

#: a challenge's status -> the event its notice is sent as
CHALLENGE_EVENTS = {
    "open": "challenge",
    "accepted": "challenge-accepted",
    "declined": "challenge-declined",
    "canceled": "challenge-canceled",
}

#: notices read at once (more are read at once after, without waiting)
PAGE = 100
#: how far before the connection the state looks for games started but not yet listed as the
#: account's active games (milliseconds)
LOOKBACK_MS = 10_000


def _entry(entry_id: str) -> tuple[int, int]:
    ms, _, n = entry_id.partition("-")
    return int(ms), int(n or 0)


class AccountEvents:
    """One account's events stream as a ``service.sse.Source``: its cursor in the account's
    notices and the events it sent (each once per connection)."""

    def __init__(
        self,
        b: Backend,
        account: str,
        last_event_id: str | None,
        fanout: Fanout,
        resource: Callable[[dict[str, Any]], dict[str, Any]],
    ) -> None:
        self.b, self.account, self.fanout, self.resource = b, account, fanout, resource
        self.store = b.store
        self.notices = self.store.notice_stream(account)
        self.challenges = Challenges(b.client, self.store.prefix, self.store.notice_stream)
        self.sent: set[tuple[Any, ...]] = set()
        if last_event_id is not None and self.store.notice_retained(account, last_event_id):
            self.cursor, self.state_due = last_event_id, False
        else:  # the state first; the notices written from now on follow it
            self.cursor, self.state_due = self.store.newest_notice(account), True
        self.notified = True  # (the notices are read at connect)
        self.full = False

    def ready(self) -> list[str]:
        out: list[str] = []
        sent = set(self.sent)
        if self.state_due:
            out += self._state(sent)
        cursor = self.cursor
        if self.notified:
            cursor = self._read_notices(out, sent)
        self.sent, self.cursor, self.state_due, self.notified = sent, cursor, False, self.full
        return out

    def more(self) -> bool:
        return self.full

    def done(self) -> bool:
        return False

    def wait(self, seconds: float) -> bool:
        self.notified = self.fanout.wait(self.notices, self.cursor, max(0.001, seconds))
        return self.notified

    # --- the state -----------------------------------------------------------------------------
    def _state(self, sent: set[tuple[Any, ...]]) -> list[str]:
        """Every open challenge addressed to the account and every active game's start; the last
        carries the cursor as its id (when there is a notice to resume after)."""
        events: list[tuple[str, dict[str, Any]]] = []
        for c in self.challenges.open_challenges(self.account, "in"):
            sent.add(("challenge", c["challenge_id"], "open"))
            events.append(("challenge", self.resource(c)))
        records = self.b.accounts.records if self.b.accounts is not None else None
        ids = records.active_games(self.account) if records is not None else []
        for gid, summary in zip(ids, summaries(self.b, ids), strict=True):
            if summary is None or summary.get("status") != "active":
                if records is not None:
                    records.finished(self.account, gid)
                continue
            for seat in seats_of(summary, self.account):
                sent.add(("game-started", gid, seat))
                events.append(("game-started", started(self.b, summary, seat)))
        events += self._just_started(sent)
        out = []
        for i, (kind, data) in enumerate(events):
            last = i == len(events) - 1 and self.cursor != "0-0"
            out.append(
                frame({"type": kind, **data}, event=kind, ident=self.cursor if last else None)
            )
        return out

    def _just_started(self, sent: set[tuple[Any, ...]]) -> list[tuple[str, dict[str, Any]]]:
        """The games started in the last ``LOOKBACK_MS`` before the cursor that the account's
        active games do not list yet (a game is created, its notice written, before the account
        is seated in it): found by their notices, for the state to be whole."""
        if self.cursor == "0-0":
            return []
        end = _entry(self.cursor)
        since = f"{max(0, end[0] - LOOKBACK_MS)}-0"
        out = []
        for entry_id, fields in self.store.read_notices(self.account, since, count=PAGE):
            if _entry(entry_id) > end:
                break
            if "d" not in fields:
                continue
            d = orjson.loads(fields["d"])
            if d.get("type") != "game-started":
                continue
            gid, seat = d["game_id"], d["seat"]
            key = ("game-started", gid, seat)
            if key in sent or not self.store.notice_applied(gid, d["command_id"], d["version"]):
                continue
            (summary,) = summaries(self.b, [gid])
            if summary is None or summary.get("status") != "active":
                continue
            sent.add(key)
            out.append(("game-started", started(self.b, summary, seat)))
        return out

    # --- the live events -----------------------------------------------------------------------
    def _read_notices(self, out: list[str], sent: set[tuple[Any, ...]]) -> str:
        """The events of the notices written since the cursor (``PAGE`` at most); returns the
        cursor past them."""
        cursor = self.cursor
        got = self.store.read_notices(self.account, cursor, count=PAGE)
        self.full = len(got) >= PAGE
        for entry_id, fields in got:
            cursor = entry_id
            event = self._event(fields, sent)
            if event is not None:
                kind, data = event
                out.append(frame({"type": kind, **data}, event=kind, ident=entry_id))
        return cursor

    def _event(
        self, fields: dict[str, Any], sent: set[tuple[Any, ...]]
    ) -> tuple[str, dict[str, Any]] | None:
        """The event a notice tells (None: none for this stream, or sent already)."""
        if "c" in fields:
            c = orjson.loads(fields["c"])
            status = c.get("status", "open")
            kind = CHALLENGE_EVENTS.get(status)
            key = ("challenge", c.get("challenge_id"), status)
            if kind is None or key in sent:
                return None
            sent.add(key)
            return kind, self.resource({**c, "status": status})
        if "d" not in fields:
            return None
        d = orjson.loads(fields["d"])
        kind = d.get("type")
        if kind not in ("game-started", "game-finished"):
            return None  # a decision: the decisions stream's
        gid, seat = d["game_id"], d["seat"]
        key = (kind, gid, seat)
        if key in sent or not self.store.notice_applied(gid, d["command_id"], d["version"]):
            return None
        if kind == "game-finished":
            sent.add(key)
            data = {"game_id": gid, "seat": seat, "result": d["result"], "links": links(gid, seat)}
            return kind, data
        (summary,) = summaries(self.b, [gid])
        if summary is None:  # gone already
            return None
        sent.add(key)
        return kind, started(self.b, summary, seat)


def account_events(
    b: Backend,
    account: str,
    *,
    last_event_id: str | None,
    max_seconds: float,
    keepalive: float,
    retry_ms: int = 2000,
    allowed: Callable[[], bool] | None = None,
    resource: Callable[[dict[str, Any]], dict[str, Any]],
) -> Iterator[str]:
    """The stream described above (``service.sse.serve``'s loop); ``resource`` makes a
    challenge's resource (``service.api.challenges.resource``)."""
    assert b.fanout is not None
    source = AccountEvents(b, account, last_event_id, b.fanout, resource)
    return serve(
        source,
        max_seconds=max_seconds,
        keepalive=keepalive,
        retry_ms=retry_ms,
        allowed=allowed,
        name=f"events of {account}",
    )
