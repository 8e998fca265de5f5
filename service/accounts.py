"""Bot accounts: external programs that play ladder games through the API with one bearer token.

An account is registered with ``POST /bots/accounts`` (name, description, owner contact); the
answer shows its token once. The token is ``rfgb_`` + ``secrets.token_urlsafe(32)`` (256 random
bits); only its sha256 (hex) is stored. Revoking (``DELETE /bots/accounts/<id>/token``) deletes
the digest, so the token stops working at once (there is no per-process cache of bot tokens).
Rotating (``POST /bots/me/token``) replaces it by a new token of the same account: the old one
stops working at once, the account (its id, ladder entries and ratings) stays.

Stored by ``events.store.accounts.BotAccountStore``: the account's fields, its live token's digest
(revoking deletes it) and the games it is seated in.

A bot token acts only in the seats whose table entry is ``{"kind": "external", "account": id}``
(``service.auth.require_seat``).
"""

from __future__ import annotations

import hashlib
import secrets
from dataclasses import dataclass
from datetime import UTC, datetime
from typing import Any

from events.store.accounts import BotAccountStore
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
    client: Any  # the store's Redis client (the decisions stream reads the notices on it)
    prefix: str

    def __post_init__(self) -> None:
        self.records = BotAccountStore(self.client, self.prefix)

    def register(self, name: str, description: str, contact: str) -> tuple[dict[str, Any], str]:
        account = secrets.token_hex(8)
        token = TOKEN_PREFIX + secrets.token_urlsafe(32)
        now = datetime.now(UTC).isoformat().replace("+00:00", "Z")
        fields = {
            "name": name,
            "description": description,
            "contact": contact,
            "created_at": now,
            "revoked_at": "",
        }
        self.records.create(account, fields, digest(token))
        return self.get(account) or {}, token

    def get(self, account: str) -> dict[str, Any] | None:
        raw = self.records.get(account)
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
        return self.records.account_of(digest(token))

    def revoke(self, account: str) -> None:
        now = datetime.now(UTC).isoformat().replace("+00:00", "Z")
        self.records.revoke(account, now)

    def rotate(self, account: str, token: str) -> str | None:
        """A new token for ``account`` in place of its live ``token``, which stops working at once;
        None when ``token`` no longer works (rotated or revoked meanwhile: nothing changed)."""
        new = TOKEN_PREFIX + secrets.token_urlsafe(32)
        return new if self.records.rotate(account, digest(token), digest(new)) else None

    def active_games(self, account: str) -> list[str]:
        return self.records.active_games(account)

    def finished(self, account: str, game_id: str) -> None:
        self.records.finished(account, game_id)
