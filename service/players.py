"""Who sits at a table, as a bot is told: each seat's kind, name, account and rating.

One shape for a game's seats everywhere a bot account reads them (``players``: the events
stream's ``game-started``, ``GET /bots/me/games``, a seat stream's turn signal) and for a
challenge's seats (``challenge_seats``):

* ``name``: a bot account's name (``POST /bots/accounts``); a built-in bot's ladder entrant, else
  the bot's name; a person's display name (claimed with a name, or the challenge's ``name``),
  else null;
* ``account``: external seats only, the bot account that plays the seat;
* ``rating``: on the game's (or challenge's) ladder, the rating its leaderboard shows for the
  seat's entrant (the seat's ``entrant``, else the entrant of its account: ``Ladders.seat_ratings``);
  null in an unrated game and for a seat without an entrant there.

Names and ratings are read when asked (the writers of games and challenges do not know them), so
they are as they are then: a rating moves as the entrant's other games finish.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from ladder.service import Ladders
from service.backend import Backend


def _ratings(b: Backend, seats: list[dict[str, Any]], ladder: str | None) -> list[float | None]:
    if not ladder:
        return [None for _ in seats]
    return Ladders(b.client, b.games, prefix=b.store.prefix).seat_ratings(ladder, seats)


def _account_names(b: Backend, seats: list[dict[str, Any]]) -> dict[str, str | None]:
    out: dict[str, str | None] = {}
    for seat in seats:
        account = seat.get("account")
        if seat.get("kind") == "external" and account and account not in out:
            found = b.accounts.get(str(account)) if b.accounts is not None else None
            out[str(account)] = found["name"] if found else None
    return out


def _name(seat: dict[str, Any], accounts: Mapping[str, str | None], human: str | None) -> Any:
    kind = seat.get("kind")
    if kind == "external":
        return accounts.get(str(seat.get("account")))
    if kind == "bot":
        return seat.get("entrant") or seat.get("bot")
    return human or seat.get("name")


def players(
    b: Backend, seats: list[dict[str, Any]], ladder: str | None, names: Mapping[int, str]
) -> list[dict[str, Any]]:
    """A game's seats (its table's ``seats``) as ``[{seat, kind, name, account (external seats),
    rating}]``; ``names``: the display names people claimed their seats under."""
    accounts = _account_names(b, seats)
    out = []
    for i, (seat, rating) in enumerate(zip(seats, _ratings(b, seats, ladder), strict=True)):
        player: dict[str, Any] = {"seat": i, "kind": seat.get("kind", "human")}
        player["name"] = _name(seat, accounts, names.get(i))
        if seat.get("kind") == "external":
            player["account"] = seat.get("account")
        player["rating"] = rating
        out.append(player)
    return out


def game_players(b: Backend, summary: dict[str, Any]) -> list[dict[str, Any]]:
    """``players`` of a game from its lobby summary (the table's seats and ladder)."""
    seats = [s if isinstance(s, dict) else {} for s in summary.get("seats") or []]
    human = any(s.get("kind", "human") == "human" for s in seats)
    names = b.tokens.records.names(summary["game_id"]) if human else {}
    return players(b, seats, summary.get("ladder"), names)


def challenge_seats(
    b: Backend,
    seats: list[dict[str, Any]],
    ladder: str | None,
    entrants: list[str] | None = None,
) -> list[dict[str, Any]]:
    """A challenge's seats as served: each as asked for, with its ``name`` and ``rating`` (a
    rated challenge's ``entrants`` name each seat's entrant on its ladder)."""
    accounts = _account_names(b, seats)
    rated = seats
    if entrants and len(entrants) == len(seats):
        rated = [{**seat, "entrant": e} for seat, e in zip(seats, entrants, strict=True)]
    return [
        {**seat, "name": _name(seat, accounts, None), "rating": rating}
        for seat, rating in zip(seats, _ratings(b, rated, ladder), strict=True)
    ]
