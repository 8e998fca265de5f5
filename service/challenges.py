"""Challenges: a bot account, or a player without one, asks a bot account (or only the built-in
bots) to a game.

``POST /challenges`` (bot token) names the table: 2-5 seats, each a built-in bot
(``{"kind": "bot", "bot": "heuristic"}``) or a bot account (``{"kind": "external", "account":
id}``): the challenger's own account once and at most one other account, the challenged. With
no other account the game starts at once; otherwise the challenged account accepts
(``POST /challenges/<id>/accept``: the game is created with both seated), declines (with one
of ``DECLINE_REASONS`` and optional words, both shown to the challenger), or the challenger
cancels; an open challenge expires after ``CHALLENGE_SECONDS``.

A player (no token at all) challenges with one ``{"kind": "human"}`` seat, theirs. The answer
holds the challenge's secret, once (``secrets.token_urlsafe(32)``; only its sha256 is kept, in
the challenge as ``secret``): it reads and cancels the challenge, and when the game starts it is
the token of the player's seat (the seat is claimed with that digest as the game is created, so
nobody else can take it, and the server never holds the token in clear). The player's limits
are their address's: the same rules, keyed ``addr:<address>`` where a bot's are keyed by account.

They are stored by ``events.store.challenges``: per challenge its JSON and, set once, its
outcome (of an accept, a decline and a cancel racing, exactly one wins); per account its open
challenges in and out, the challenges it made to other accounts in the last minute, and the
games started from its challenges of the built-in bots (such a challenge is bounded by the
account's unfinished games, not by a rate: a bot plays one game after another as fast as the
game goes). A decided or expired challenge can be read for ``KEEP_SECONDS`` more.

A challenge addressed to an account is also written to the account's notices stream (field
``c``), which its decisions stream (``service.decisions``) sends as an ``event: challenge``; so
is its outcome, to the other account (accepted or declined: the challenger; canceled: the
challenged account).
"""

from __future__ import annotations

import hashlib
import hmac
import json
import math
import secrets
import time
from dataclasses import dataclass, field
from datetime import UTC, datetime
from typing import Any

from events.store.accounts import BotAccountStore
from events.store.challenges import ChallengeStore

#: how long a decided or expired challenge can still be read
KEEP_SECONDS = 3600
#: why a challenged account declines (``reason``; the first is the default): the challenger's
#: bot can act on it (another time control, later, a casual game ...) without reading ``text``
DECLINE_REASONS = (
    "generic",
    "later",
    "too-fast",
    "too-slow",
    "time-control",
    "rated",
    "casual",
    "not-these-bots",
    "not-now",
)
#: the most characters of a decline's ``text`` (what the decliner adds in words)
DECLINE_TEXT_MAX = 200


def _iso(t: float) -> str:
    return datetime.fromtimestamp(t, UTC).isoformat(timespec="seconds").replace("+00:00", "Z")


#: what a challenge keeps to itself: its expiry as a number, the digest of a player's secret and
#: whose limits it counts against (a player's address)
PRIVATE = ("expires", "secret", "owner")


def public(c: dict[str, Any]) -> dict[str, Any]:
    """The challenge as its parties see it (``PRIVATE`` left out). A decline stored with a
    reason in words (before reasons were ``DECLINE_REASONS``) shows as ``generic`` with those
    words as its ``text``."""
    out = {k: v for k, v in c.items() if k not in PRIVATE}
    reason = out.get("reason")
    if reason is not None and reason not in DECLINE_REASONS:
        out["reason"] = DECLINE_REASONS[0]
        out.setdefault("text", str(reason)[:DECLINE_TEXT_MAX])
    return out


def accounts_in(seats: list[dict[str, Any]]) -> list[str]:
    return [s["account"] for s in seats if s.get("kind") == "external"]


class Refused(Exception):
    """A challenge operation that cannot be done; ``slug`` is the problem type, the message
    says what to do next."""

    def __init__(self, slug: str, detail: str, **extensions: Any) -> None:
        super().__init__(detail)
        self.slug, self.detail, self.extensions = slug, detail, extensions


@dataclass
class Challenges:
    client: Any
    prefix: str
    notice_stream: Any  # account -> the key of its notices stream (``RedisStore.notice_stream``)
    store: ChallengeStore = field(init=False)
    accounts: BotAccountStore = field(init=False)

    def __post_init__(self) -> None:
        self.store = ChallengeStore(self.client, self.prefix, self.notice_stream)
        self.accounts = BotAccountStore(self.client, self.prefix)

    # --- limits ------------------------------------------------------------------------------
    def count_made(self, account: str, per_minute: int, who: str = "a bot account") -> None:
        """Count one challenge addressed to another account in the account's last minute (a
        sliding window); ``Refused`` past ``per_minute``, the refused one not counted."""
        if per_minute <= 0:
            return
        first = self.store.count_made(account, per_minute)
        if first is not None:
            wait = max(1, math.ceil(first + 60 - time.time()))
            raise Refused(
                "rate-limited",
                f"too many challenges: {who} may make {per_minute} a minute to other "
                f"accounts (challenges); retry after {wait} s",
                limit="challenges",
                retry_after=wait,
            )

    def check_open(self, account: str, most: int, who: str = "this account") -> None:
        if most > 0 and len(self.open_ids(account, "out")) >= most:
            raise Refused(
                "rate-limited",
                f"{who} has {most} open challenges, the most it may have; cancel one "
                "(POST /challenges/{challenge_id}/cancel) or wait for an answer",
                limit="open-challenges",
                retry_after=60,
            )

    def check_playing(
        self, account: str, most: int, finished: Any, who: str = "this account"
    ) -> None:
        """A challenge of the built-in bots only (it starts at once): ``Refused`` when the
        account has ``most`` unfinished games from such challenges (``finished``: game ids ->
        whether each is over or gone; those leave the count). Not a rate: a bot playing one game
        after another is never held back, only one starting many at once."""
        if most <= 0:
            return
        ids = self.store.started_games(account)
        if len(ids) < most:
            return
        over = [gid for gid, done in zip(ids, finished(ids), strict=True) if done]
        self.store.forget_games(account, over)
        if len(ids) - len(over) >= most:
            raise Refused(
                "rate-limited",
                f"{who} has {most} unfinished games from its challenges of the built-in "
                "bots, the most it may have; finish one (or resign it: POST "
                "/games/{game_id}/seats/{seat}/resign) before challenging again",
                limit="open-challenges",
                retry_after=60,
            )

    def playing(self, account: str, game_id: str, keep: int) -> None:
        """Count a game started from the account's challenge of the built-in bots (the key lives
        ``keep`` seconds after the last)."""
        self.store.add_game(account, game_id, keep)

    # --- storage -----------------------------------------------------------------------------
    def create(
        self,
        challenger: str | None,
        spec: dict[str, Any],
        expires_in: float,
        owner: str | None = None,
        secret: str | None = None,
    ) -> tuple[str, dict[str, Any]]:
        """Store an open challenge (``spec``: seats and table options) and tell the challenged
        account (if any). ``challenger``: the bot account, or None for a player, whose
        ``owner`` (``addr:<address>``) keys the limits and whose ``secret`` (its sha256 kept)
        reads the challenge. Returns (id, the challenge as stored)."""
        cid = secrets.token_hex(8)
        now = time.time()
        others = [a for a in accounts_in(spec["seats"]) if a != challenger]
        c = {
            "challenge_id": cid,
            "challenger": challenger,
            "challenged": others[0] if others else None,
            **spec,
            "created_at": _iso(now),
            "expires_at": _iso(now + expires_in),
            "expires": now + expires_in,
            "owner": owner or challenger,
        }
        if secret is not None:
            c["secret"] = hashlib.sha256(secret.encode("utf-8")).hexdigest()
        self.store.put(
            cid,
            json.dumps(c, separators=(",", ":")),
            int(expires_in) + KEEP_SECONDS,
            c["owner"],
            c["expires"],
            c["challenged"],
            json.dumps(public(c), separators=(",", ":")),
        )
        return cid, c

    def get(self, cid: str) -> dict[str, Any] | None:
        """The challenge with its ``status`` (open, accepted, declined, canceled, expired)."""
        stored = self.store.get(cid)
        if stored is None:
            return None
        raw, outcome = stored
        c: dict[str, Any] = json.loads(raw)
        if outcome is not None:
            c.update(json.loads(outcome))
        elif time.time() >= c["expires"]:
            c["status"] = "expired"
        else:
            c["status"] = "open"
        return c

    def decide(self, c: dict[str, Any], outcome: dict[str, Any], tell: bool = True) -> bool:
        """Record the challenge's outcome, once: False if another was recorded first. With
        ``tell``, the other account hears of it at once (``tell``); without, the caller tells
        it when ready (an accept: once the game exists)."""
        won = self.store.decide(c["challenge_id"], json.dumps(outcome))
        if won:
            self.store.unlist(
                c["challenge_id"], c.get("owner") or c["challenger"], c.get("challenged")
            )
            if tell:
                self.tell(c, outcome)
        return won

    def tell(self, c: dict[str, Any], outcome: dict[str, Any]) -> None:
        """The other account learns of the outcome on its notices stream: the challenger of an
        accept or a decline, the challenged account of a cancel (a challenge of the built-in
        bots has nobody to tell: its challenger has the answer)."""
        if c.get("challenged"):
            other = c["challenged"] if outcome["status"] == "canceled" else c["challenger"]
            if other is None:  # a player's: they read the challenge with its secret
                return
            self.store.notify(other, json.dumps({**public(c), **outcome}, separators=(",", ":")))

    def open_ids(self, account: str, way: str) -> list[str]:
        return self.store.open_ids(account, way)

    def open_challenges(self, account: str, way: str) -> list[dict[str, Any]]:
        """The account's open challenges, ``in`` (addressed to it) or ``out`` (its own),
        oldest first."""
        out = []
        for cid in self.open_ids(account, way):
            c = self.get(cid)
            if c is None or c["status"] != "open":
                self.store.drop(account, way, cid)
                continue
            out.append(c)
        return out

    def holds_secret(self, c: dict[str, Any], token: str | None) -> bool:
        """Whether ``token`` is the secret of a player's challenge ``c`` (constant time)."""
        if not token or not c.get("secret"):
            return False
        given = hashlib.sha256(token.encode("utf-8", "surrogatepass")).hexdigest()
        return hmac.compare_digest(given, c["secret"])

    def seat_accounts(self, game_id: str, seats: list[dict[str, Any]]) -> None:
        """The game joins its accounts' games and active games (as a ladder's does): their
        decisions streams follow it."""
        for account in set(accounts_in(seats)):
            self.accounts.seated(account, game_id)
