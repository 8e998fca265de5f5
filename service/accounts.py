"""Bot accounts: external programs that play ladder games through the API with one bearer token.

An account is registered with ``POST /bots/accounts`` (name, description, owner contact); the
answer shows its token once. The token is ``rfgb_`` + ``secrets.token_urlsafe(32)`` (256 random
bits); only its sha256 (hex) is stored. Revoking (``DELETE /bots/accounts/<id>/token``) deletes
the digest, so the token stops working at once (there is no per-process cache of bot tokens).

Keys (store prefix ``rfg``):

* ``rfg:botacct:<id>`` - hash: name, description, contact, created_at, token (sha256 hex, empty
  once revoked), revoked_at;
* ``rfg:botacct-token:<sha256>`` - the account id of a live token;
* ``rfg:botacct:<id>:games`` / ``:active`` - the games the account is seated in / those not known
  to be over (added by ``ladder.service.Ladders.schedule``; ``:active`` is trimmed by the
  decisions stream when it sees a game has ended).

On a Redis Cluster each of these keys is in a slot of its own (no hash tag): every operation
touches one key per command, written in an order that is safe without a transaction.

A bot token acts only in the seats whose table entry is ``{"kind": "external", "account": id}``
(``service.auth.require_seat``).
"""

from __future__ import annotations

import hashlib
import secrets
from dataclasses import dataclass
from datetime import UTC, datetime
from typing import Any

from events.store.text import text
from ladder.service import account_active_key as active_key
from service.limits import BOT_TOKEN_PREFIX

TOKEN_PREFIX = BOT_TOKEN_PREFIX


def digest(token: str) -> str:
    return hashlib.sha256(token.encode("utf-8")).hexdigest()


def seats_of(summary: dict[str, Any], account: str) -> list[int]:
    """The seats of a game (its lobby summary) given to ``account``."""
    return [
        i
        for i, s in enumerate(summary.get("seats") or [])
        if isinstance(s, dict) and s.get("kind") == "external" and s.get("account") == account
    ]


@dataclass
class BotAccounts:
    client: Any
    prefix: str

    def _key(self, account: str) -> str:
        return f"{self.prefix}:botacct:{account}"

    def _token_key(self, d: str) -> str:
        return f"{self.prefix}:botacct-token:{d}"

    def register(self, name: str, description: str, contact: str) -> tuple[dict[str, Any], str]:
        account = secrets.token_hex(8)
        token = TOKEN_PREFIX + secrets.token_urlsafe(32)
        d = digest(token)
        now = datetime.now(UTC).isoformat().replace("+00:00", "Z")
        # two keys in two cluster slots, so no MULTI: the account first, then the token that
        # points to it (a crash in between leaves an account without a working token, never a
        # token without an account)
        self.client.hset(
            self._key(account),
            mapping={
                "name": name,
                "description": description,
                "contact": contact,
                "created_at": now,
                "token": d,
                "revoked_at": "",
            },
        )
        self.client.set(self._token_key(d), account)
        return self.get(account) or {}, token

    def get(self, account: str) -> dict[str, Any] | None:
        raw = {text(k): text(v) for k, v in self.client.hgetall(self._key(account)).items()}
        if not raw:
            return None
        return {
            "account_id": account,
            "name": raw["name"],
            "description": raw["description"],
            "contact": raw["contact"],
            "created_at": raw["created_at"],
            "revoked_at": raw["revoked_at"] or None,
            "active": bool(raw["token"]),
        }

    def account_of(self, token: str) -> str | None:
        """The account a live bot token belongs to, or None."""
        if not token.startswith(TOKEN_PREFIX):
            return None
        raw = self.client.get(self._token_key(digest(token)))
        return text(raw) if raw is not None else None

    def revoke(self, account: str) -> None:
        raw = self.client.hget(self._key(account), "token")
        now = datetime.now(UTC).isoformat().replace("+00:00", "Z")
        # the token stops working first (two slots on a cluster, so in that order, no MULTI)
        if raw:
            self.client.delete(self._token_key(text(raw)))
        self.client.hset(self._key(account), mapping={"token": "", "revoked_at": now})

    def active_games(self, account: str) -> list[str]:
        return sorted(text(g) for g in self.client.smembers(active_key(self.prefix, account)))

    def finished(self, account: str, game_id: str) -> None:
        self.client.srem(active_key(self.prefix, account), game_id)
