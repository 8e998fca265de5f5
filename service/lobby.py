"""The game list: filters and keyset pagination over the store's lobby index.

The lobby is the store's index of games by creation time (``events.store.lobby``, see
docs/event-store.md); each game's summary projection (its ``summary`` view) gives the status,
seats and player count to filter on. Pages go newest first; the cursor is the (score, id) of the
last game returned, so games created while a client pages do not shift or repeat entries.
Filtering by status or player count scans at most ``SCAN_LIMIT`` index entries per request and
then hands back a cursor to continue from. Games that expired (``RedisStore.set_retention``)
are dropped from the index when a listing meets them. A finished game keeps its summary in the
views hash when it is compacted or archived (``RedisStore.compact``), so a player's history
(``status=finished``) lists it as before; one compacted by an older version gets it back from
its blob the first time a listing meets it.
"""

from __future__ import annotations

import json
import logging
import re
import time
from dataclasses import dataclass
from datetime import datetime
from typing import Any

from events.store import RedisStore, StoreError
from events.store.lobby import Lobby
from events.store.outage import STORE_ERROR, is_outage
from events.store.port import GAME_ID_PATTERN
from service.errors import Problem
from service.tokens import SeatTokens

BATCH = 100
#: seconds after which a listed game with a meta hash but no events is dropped as an orphan
ORPHAN_SECONDS = 60
CURSOR_RE = re.compile(rf"^([0-9]{{1,12}}(?:\.[0-9]{{1,9}})?)_({GAME_ID_PATTERN})$")
SCAN_LIMIT = 2000

log = logging.getLogger(__name__)


@dataclass(frozen=True)
class Page:
    items: list[tuple[dict[str, Any], set[int]]]  # (summary, claimed seats)
    next_cursor: str | None


def encode_cursor(score: float, game_id: str) -> str:
    """``<creation time as epoch seconds>_<game id>``: the position after which the next page starts."""
    return f"{score!r}_{game_id}"


def decode_cursor(cursor: str) -> tuple[float, str]:
    m = CURSOR_RE.fullmatch(cursor)
    if m is None:
        raise Problem(
            "invalid-parameters",
            "cursor: not a cursor this API issued; use next_cursor from the previous page",
            errors={"cursor": ["not a valid cursor"]},
        )
    return float(m.group(1)), m.group(2)


def list_games(
    store: RedisStore,
    tokens: SeatTokens,
    *,
    status: str | None = None,
    players: int | None = None,
    created_after: datetime | None = None,
    created_before: datetime | None = None,
    limit: int = 20,
    cursor: str | None = None,
) -> Page:
    lobby = Lobby(store)
    high: float | str = "+inf" if created_before is None else created_before.timestamp()
    low: float | str = "-inf" if created_after is None else created_after.timestamp()
    after: tuple[float, str] | None = decode_cursor(cursor) if cursor else None
    if after is not None:
        high = after[0] if high == "+inf" else min(float(high), after[0])
    out: list[tuple[dict[str, Any], set[int]]] = []
    scanned = offset = 0
    last: tuple[float, str] | None = None
    while True:
        rows = lobby.page(high, low, offset, BATCH)
        offset += len(rows)
        entries = rows
        if after is not None:  # skip what earlier pages returned (same score, id not below)
            entries = [e for e in entries if e[1] < after[0] or e[0] < after[1]]
        ids = [gid for gid, _ in entries]
        summaries = [None if raw is None else json.loads(raw) for raw in lobby.summaries(ids)]
        missing = [gid for gid, summary in zip(ids, summaries, strict=True) if summary is None]
        if missing:
            found = _unlisted(store, lobby, missing)
            summaries = [
                found.get(gid) if summary is None else summary
                for gid, summary in zip(ids, summaries, strict=True)
            ]
        for (gid, score), summary, seats in zip(
            entries, summaries, tokens.claimed_seats(ids), strict=True
        ):
            scanned += 1
            last = (score, gid)
            if summary is None:
                continue
            if status is not None and summary.get("status") != status:
                continue
            if players is not None and summary.get("players") != players:
                continue
            out.append((summary, seats))
            if len(out) >= limit:
                more = lobby.exists_after(low, last)
                return Page(out, encode_cursor(*last) if more else None)
        if len(rows) < BATCH:
            return Page(out, None)
        if scanned >= SCAN_LIMIT and last is not None:
            return Page(out, encode_cursor(*last))


def _unlisted(store: RedisStore, lobby: Lobby, game_ids: list[str]) -> dict[str, dict[str, Any]]:
    """The games of the lobby without a summary in their views hash: those that expired (their
    meta hash is gone) are dropped from the lobby, and so are those an older creation left as a
    meta hash without events when Redis refused its append (their meta hash is deleted: a game is
    created in one atomic write, ``RedisStore.create_game``; ``ORPHAN_SECONDS`` spare a
    creation by an older process still running); those compacted by a version that did not keep
    the summary get it back from their compacted blob or archive (``RedisStore.restore_summary``:
    once, later pages read it from Redis). Returns the summaries found that way."""
    gone: list[str] = []
    orphans: list[str] = []
    found: dict[str, dict[str, Any]] = {}
    now = time.time()
    for gid, (version, compacted, created) in zip(game_ids, lobby.states(game_ids), strict=True):
        if version is None and created is None:
            gone.append(gid)
        elif version is None:
            if now - _epoch(created or "") > ORPHAN_SECONDS:
                orphans.append(gid)
        elif compacted:
            try:
                raw = store.restore_summary(gid)
            except (StoreError, OSError) as exc:  # an archive this process cannot read
                log.warning("lobby: the summary of compacted game %s is unreadable: %s", gid, exc)
                continue
            if raw is not None:
                found[gid] = json.loads(raw.partition(":")[2])
    try:
        lobby.drop(gone, orphans)
    except STORE_ERROR as exc:
        if not is_outage(exc):
            raise
        log.warning("lobby: could not drop %d stale entries now: %s", len(gone + orphans), exc)
    return found


def _epoch(created: str) -> float:
    try:
        return datetime.fromisoformat(created).timestamp()
    except ValueError:
        return 0.0  # (not a time: as old as can be)
