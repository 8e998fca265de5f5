"""Seat tokens: claiming a human seat and checking a bearer token against it.

A claim creates ``secrets.token_urlsafe(32)`` and stores only its sha256 (hex) as the seat's
token digest (``events.store.accounts.SeatTokenStore``: the game's tokens hash, in the game's
cluster slot), written once so a seat is claimed once, even by racing requests. A token is never
stored or logged in clear; comparing digests is done in constant time.

A seat's token can be rotated (``rotate``): the new digest replaces the old one, so the old token
stops working at once in every process (no process caches a token: each seat-scoped request
checks the digest before its view, ``service.auth``). A claim also ends the game's idle expiry
(``RedisStore.keep``): a claimed game is not abandoned.

The same hash holds what the table knows about its people (never a secret in clear):

* the display name given when the seat was claimed (``service.fields.DisplayName`` checked it);
* the host: the seat claimed first (the person who created the game and sat down; the web
  client claims seat 0 right after creating). The host (or the admin) may invite;
* the digest of the seat's outstanding invite code (``invite``): a one-time claim code,
  ``secrets.token_urlsafe(32)``. While it is outstanding only that code claims the seat (the
  public lobby cannot take it); claiming with it retires it, keeping its digest, so a second use
  is told the link was used. Inviting again replaces the code. Codes are compared in constant
  time here, then the claim is written only if the stored digest has not changed meanwhile (two
  racing uses: one wins);
* re-inviting a claimed seat (``reinvite``, the host or the admin): a new invite code, the seat's
  token revoked at once (its digest deleted in the same script), the name kept;
* a move code (``move``, the seat holder): ``secrets.token_urlsafe(32)``, valid ``MOVE_SECONDS``
  and once; redeeming it (``redeem``) gives the seat a new token and revokes the old one in one
  script, so the old device is signed out the moment the new one signs in.

Every code and token carries 256 random bits: guessing one is out of reach whatever the rate,
and the bad-token limits (``service.limits``) slow a guesser further. The scripts compare
digests of codes, never codes: a timing difference there tells nothing about a code.
"""

from __future__ import annotations

import hashlib
import hmac
import secrets
import time
from dataclasses import dataclass
from typing import Literal

from events.store import RedisStore
from events.store.accounts import SeatHolds, SeatTokenStore


def digest(token: str) -> str:
    return hashlib.sha256(token.encode("utf-8")).hexdigest()


@dataclass(frozen=True)
class SeatClaims:
    """The claimed seats of one game (seat -> token digest) and whether the game exists."""

    exists: bool
    digests: dict[int, str]

    def seat_of(self, token: str) -> int | None:
        """The seat this token was issued for, or None."""
        d = digest(token)
        found = None
        for seat, stored in self.digests.items():
            if hmac.compare_digest(stored, d):
                found = seat
        return found


Rotation = Literal["ok", "nogame", "unclaimed", "stale"]
Claim = Literal["ok", "nogame", "taken", "invited", "badcode", "used"]
Redeem = Literal["ok", "nogame", "badcode", "used", "expired"]

MOVE_SECONDS = 600
"""How long a move code works (seconds)."""


@dataclass(frozen=True)
class Table:
    """Who sits at one game's table, as anyone may read it (no digests)."""

    claimed: set[int]
    names: dict[int, str]
    invited: set[int]
    host: int | None


def _seats_of(keys: list[str], prefix: str) -> set[int]:
    return {int(k[len(prefix) :]) for k in keys if k.startswith(prefix)}


def _table(fields: dict[str, str]) -> Table:
    names = {int(k[5:]): v for k, v in fields.items() if k.startswith("name:")}
    host = fields.get("host")
    return Table(
        claimed=_seats_of(list(fields), "seat:"),
        names=names,
        invited=_seats_of(list(fields), "invite:"),
        host=int(host) if host is not None else None,
    )


class SeatTokens:
    """Seat tokens of every game: made here, stored as digests by ``SeatTokenStore``."""

    def __init__(self, store: RedisStore) -> None:
        self.store = store
        self.records = SeatTokenStore(store)

    def claims(self, game_id: str) -> SeatClaims:
        """One round trip: the token digests and the game's existence."""
        exists, digests = self.records.digests(game_id)
        return SeatClaims(exists, digests)

    def seat_holds(self, game_id: str, seat: int, token: str) -> SeatHolds:
        """The read of whether ``token`` is ``seat``'s, for a round trip shared with another
        owner's (``service.auth.require_seat_command``)."""
        return self.records.seat_holds(game_id, seat, digest(token))

    def read(self, read: SeatHolds) -> bool:
        """A ``seat_holds`` read on its own (one round trip)."""
        return self.records.holds(read)

    def claimed_seats(self, game_ids: list[str]) -> list[set[int]]:
        """The claimed seat numbers of several games (one pipelined round trip)."""
        return [_seats_of(names, "seat:") for names in self.records.field_names(game_ids)]

    def tables(self, game_ids: list[str]) -> list[Table]:
        """Who sits at several games' tables: claimed seats, names, invited seats, the host
        (one pipelined round trip; no digest leaves this module)."""
        return [_table(fields) for fields in self.records.fields(game_ids)]

    def claim(
        self, game_id: str, seat: int, name: str | None = None, code: str | None = None
    ) -> tuple[Claim, str | None]:
        """A new token for the seat: (outcome, token or None). ``code`` is the seat's invite
        code: required while an invite is outstanding ("invited" without it, "badcode" with
        another, "used" with one already used); "taken" when the seat was claimed before."""
        raw = self.records.fields([game_id])[0]
        outstanding = raw.get(f"invite:{seat}", "")
        if code is not None:
            given = digest(code)
            if not outstanding or not hmac.compare_digest(outstanding, given):
                used = raw.get(f"used:{seat}", "")
                return ("used" if used and hmac.compare_digest(used, given) else "badcode"), None
        elif outstanding:
            return "invited", None
        token = secrets.token_urlsafe(32)
        out = self.records.claim(game_id, seat, digest(token), outstanding, name or "")
        if out != "ok":
            return out, None  # type: ignore[return-value]
        self.store.keep(game_id)
        return "ok", token

    def seat_digest(
        self, game_id: str, seat: int, token_digest: str, name: str | None = None
    ) -> bool:
        """Claim the seat, under the display name ``name`` if any, for a token the server
        already holds only the sha256 of (a player's challenge secret, ``service.challenges``):
        the game's creator seats them as it creates it. False when the seat was claimed
        before."""
        if self.records.claim(game_id, seat, token_digest, "", name or "") != "ok":
            return False
        self.store.keep(game_id)
        return True

    def invite(self, game_id: str, seat: int) -> str | None:
        """A new one-time invite code for an unclaimed seat (replacing any earlier one), or
        None when the seat is claimed already. An invited game is wanted: it no longer expires
        while unfinished (``RedisStore.keep``)."""
        code = secrets.token_urlsafe(32)
        if self.records.invite(game_id, seat, digest(code)) != "ok":
            return None
        self.store.keep(game_id)
        return code

    def reinvite(self, game_id: str, seat: int) -> str | None:
        """A new one-time invite code for a seat, claimed or not; a claimed seat's token stops
        working at once, its display name stays. None when the game does not exist."""
        code = secrets.token_urlsafe(32)
        if self.records.reinvite(game_id, seat, digest(code)) != "ok":
            return None
        self.store.keep(game_id)
        return code

    def move(self, game_id: str, seat: int, holder: str) -> tuple[str, int] | None:
        """A one-time move code for the seat ``holder`` (its token) holds, and when it expires
        (epoch seconds); replaces any earlier code. None when the token is no longer the
        seat's."""
        code = secrets.token_urlsafe(32)
        expires = int(time.time()) + MOVE_SECONDS
        if self.records.move(game_id, seat, digest(holder), digest(code), expires) != "ok":
            return None
        return code, expires

    def redeem(self, game_id: str, seat: int, code: str) -> tuple[Redeem, str | None]:
        """Move the seat to the bearer of its move code: (outcome, the seat's new token or
        None); the old token stops working at once."""
        token = secrets.token_urlsafe(32)
        out = self.records.redeem(game_id, seat, digest(code), digest(token), int(time.time()))
        if out != "ok":
            return out, None  # type: ignore[return-value]
        return "ok", token

    def rotate(self, game_id: str, seat: int, old: str | None) -> tuple[Rotation, str | None]:
        """A new token for a claimed seat; the old one stops working at once. ``old`` is the
        holder's token (the rotation fails with "stale" if another rotation came first), None
        for the admin. Returns (outcome, new token or None)."""
        token = secrets.token_urlsafe(32)
        out = self.records.rotate(game_id, seat, digest(token), digest(old) if old else "")
        if out != "ok":
            return out, None  # type: ignore[return-value]
        return "ok", token
