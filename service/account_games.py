"""A bot account's games as it is told about them: ``GET /bots/me/games`` and the events stream's
``game-started`` / ``game-finished`` (``service.account_events``).

One entry per seat of the account in a game (an account seated twice gets two):
``{game_id, seat, status, rated, ladder, players, created_at, result, links}``. ``players`` as
``service.players`` says; ``ladder`` the ladder the game is played for (``rated`` when there is
one); ``result`` null while the game runs, then ``{reason, winners, scores}`` as the game's
``GameEnded`` says (the public view's ``result``); ``links`` the game and the seat's view,
commands and event stream (the bot token acts there).

**Paging** (``page``): the account's games are indexed by when it was seated in each
(``BotAccountStore.started_page``), newest first; the cursor is the (time, game id) of the last
game returned, as the lobby's (``service.lobby``), so games started while a client pages shift
nothing. ``status=active`` lists the account's active games (a small set: it is read whole);
``status=finished`` walks the index, at most ``SCAN_LIMIT`` games a request, and hands back a
cursor to go on from. Games seated before the index existed are added to it, with their creation
time, when a listing first meets them; games gone from the store (expired) leave it.
"""

from __future__ import annotations

import json
from datetime import datetime
from typing import Any

from events.errors import GameNotFound
from events.store.lobby import Lobby
from ladder.service import Ladders
from service.accounts import seats_of
from service.backend import Backend
from service.lobby import decode_cursor, encode_cursor
from service.players import game_players

#: index entries a ``status=finished`` listing reads at most per request
SCAN_LIMIT = 1000
BATCH = 100


def links(game_id: str, seat: int) -> dict[str, str]:
    base = f"/games/{game_id}/seats/{seat}"
    return {
        "game": f"/games/{game_id}",
        "view": f"{base}/view",
        "commands": f"{base}/commands",
        "stream": f"{base}/events/stream",
    }


def summaries(b: Backend, game_ids: list[str]) -> list[dict[str, Any] | None]:
    """Each game's lobby summary (None: the game is gone), one pipelined read for most."""
    out: list[dict[str, Any] | None] = []
    ladder_of: dict[str, str] | None = None
    for gid, raw in zip(game_ids, Lobby(b.store).summaries(game_ids), strict=True):
        if raw is None:  # (compacted by an older version: the store finds it in the blob)
            try:
                raw = b.games.view(gid, "summary")[1]
            except GameNotFound:
                out.append(None)
                continue
        summary = json.loads(raw)
        if "ladder" not in summary and any(
            isinstance(s, dict) and s.get("entrant") for s in summary.get("seats") or []
        ):  # a ladder game whose summary was written before it named its ladder
            if ladder_of is None:
                ladder_of = _ladders_of_games(b)
            summary["ladder"] = ladder_of.get(gid)
        out.append(summary)
    return out


def _ladders_of_games(b: Backend) -> dict[str, str]:
    """Game id -> the ladder that played it, for every ladder (one read of each ladder's games)."""
    lad = Ladders(b.client, b.games, prefix=b.store.prefix)
    return {gid: name for name in lad.names() for gid in lad.ladder_games(name)}


def result(b: Backend, game_id: str) -> dict[str, Any] | None:
    """A finished game's ``{reason, winners, scores}`` (its public view's ``result``)."""
    try:
        view = json.loads(b.games.view(game_id, "public")[1])
    except GameNotFound:
        return None
    r = view.get("result")
    if not isinstance(r, dict):
        return None
    return {"reason": r.get("reason"), "winners": r.get("winners"), "scores": r.get("scores")}


def started(b: Backend, summary: dict[str, Any], seat: int) -> dict[str, Any]:
    """A ``game-started`` event of ``seat`` (without ``type``)."""
    ladder = summary.get("ladder")
    return {
        "game_id": summary["game_id"],
        "seat": seat,
        "rated": ladder is not None,
        "ladder": ladder,
        "players": game_players(b, summary),
        "links": links(summary["game_id"], seat),
    }


def entries(b: Backend, summary: dict[str, Any], account: str) -> list[dict[str, Any]]:
    """The account's entries of one game (one per seat it holds) for ``GET /bots/me/games``."""
    seats = seats_of(summary, account)
    if not seats:
        return []
    finished = summary.get("status") == "finished"
    game = started(b, summary, seats[0])
    return [
        {
            "game_id": game["game_id"],
            "seat": seat,
            "status": "finished" if finished else "active",
            "rated": game["rated"],
            "ladder": game["ladder"],
            "players": game["players"],
            "created_at": summary.get("created_at"),
            "result": result(b, game["game_id"]) if finished else None,
            "links": links(game["game_id"], seat),
        }
        for seat in seats
    ]


def _epoch(iso: str | None) -> float:
    try:
        return datetime.fromisoformat(str(iso).replace("Z", "+00:00")).timestamp()
    except ValueError:
        return 0.0


def _index_old(b: Backend, account: str) -> None:
    """Games seated before the ordered index existed join it, scored by their creation."""
    records = b.accounts.records if b.accounts is not None else None
    if records is None:
        return
    missing = records.unindexed(account)
    if not missing:
        return
    found = summaries(b, missing)
    records.index(
        account,
        {gid: _epoch(s.get("created_at")) for gid, s in zip(missing, found, strict=True) if s},
    )
    records.forget(account, [gid for gid, s in zip(missing, found, strict=True) if s is None])


def page(
    b: Backend, account: str, *, status: str | None, limit: int, cursor: str | None
) -> tuple[list[dict[str, Any]], str | None]:
    """One page of the account's games, newest first: (entries, the next page's cursor)."""
    assert b.accounts is not None
    records = b.accounts.records
    _index_old(b, account)
    after = decode_cursor(cursor) if cursor else None
    if status == "active":
        return _active_page(b, account, limit, after)
    high: float | str = "+inf" if after is None else after[0]
    out: list[dict[str, Any]] = []
    offset = scanned = 0
    last: tuple[float, str] | None = None
    while True:
        rows = records.started_page(account, high, offset, BATCH)
        todo = rows
        if after is not None:  # skip what earlier pages returned (same time, id not below)
            todo = [r for r in rows if r[1] < after[0] or r[0] < after[1]]
        found = summaries(b, [gid for gid, _ in todo])
        gone = [gid for (gid, _), s in zip(todo, found, strict=True) if s is None]
        records.forget(account, gone)
        offset += len(rows) - len(gone)
        for (gid, score), summary in zip(todo, found, strict=True):
            scanned += 1
            last = (score, gid)
            if summary is None or (status is not None and summary.get("status") != status):
                continue
            out += entries(b, summary, account)
            if len(out) >= limit:
                return out, encode_cursor(*last) if _after(b, account, last) else None
        if len(rows) < BATCH:
            return out, None
        if scanned >= SCAN_LIMIT and last is not None:
            return out, encode_cursor(*last)


def _after(b: Backend, account: str, last: tuple[float, str]) -> bool:
    """Whether the index holds a game after ``last`` (the page's last) in its order."""
    assert b.accounts is not None
    rows = b.accounts.records.started_page(account, last[0], 0, BATCH)
    return any(score < last[0] or gid < last[1] for gid, score in rows)


def _active_page(
    b: Backend, account: str, limit: int, after: tuple[float, str] | None
) -> tuple[list[dict[str, Any]], str | None]:
    """The ``status=active`` page: the account's active games (read whole; an ended one leaves
    the set), newest first."""
    assert b.accounts is not None
    records = b.accounts.records
    ids = records.active_games(account)
    found = summaries(b, ids)
    live = []
    for gid, summary in zip(ids, found, strict=True):
        if summary is None or summary.get("status") != "active":
            records.finished(account, gid)
            continue
        live.append((gid, summary))
    scores = records.seated_at(account, [gid for gid, _ in live])
    order = sorted(
        (
            (s if s is not None else _epoch(summary.get("created_at")), gid, summary)
            for (gid, summary), s in zip(live, scores, strict=True)
        ),
        key=lambda t: (t[0], t[1]),
        reverse=True,
    )
    if after is not None:
        order = [t for t in order if t[0] < after[0] or (t[0] == after[0] and t[1] < after[1])]
    out: list[dict[str, Any]] = []
    for i, (score, gid, summary) in enumerate(order):
        got = entries(b, summary, account)
        if out and len(out) + len(got) > limit:
            prev = order[i - 1]
            return out, encode_cursor(prev[0], prev[1])
        out += got
        if len(out) >= limit and i + 1 < len(order):
            return out, encode_cursor(score, gid)
    return out, None
