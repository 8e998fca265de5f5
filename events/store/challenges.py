"""Challenges on the store (what they mean: ``service.challenges``).

Keys (store prefix ``rfg``):

* ``rfg:challenge:{c:<id>}`` - hash: ``c`` (the challenge as JSON, never changed) and ``outcome``
  (JSON: status, game id, reason), set once with ``HSETNX``: of an accept, a decline and a cancel
  racing, exactly one wins. The key expires a while after the challenge would (``put``).
* ``rfg:{a:<owner>}:challenges:in`` / ``:out`` - sorted sets of the account's open challenges
  (score: when each expires, epoch seconds); expired members are trimmed when read. The owner is
  an account id, or ``addr:<address>`` for a player's (``out`` and the two below only).
* ``rfg:{a:<account>}:challenges:rate`` - sorted set: the challenges addressed to another account
  that the account made in the last minute (score: when);
* ``rfg:{a:<account>}:challenges:games`` - sorted set: the games started from the account's
  challenges of the built-in bots only (score: when).

Each account's keys share the hash tag ``{a:<account>}`` (its notices stream's, so a
challenge's notice and the account's indexes are in one slot on a Redis Cluster); a challenge's
own key has its own tag. No operation needs two slots atomically: the outcome is decided on the
challenge's key alone, and the indexes are tidied after it.
"""

from __future__ import annotations

import secrets
import time
from collections.abc import Callable, Sequence
from typing import Any

from events.store.redis_adapter import NOTICE_MAXLEN
from events.store.text import text

#: seconds of a challenge-rate window
RATE_WINDOW = 60


class ChallengeStore:
    """The challenges under one key prefix; ``notice_stream`` gives an account's notices stream
    key (``RedisStore.notice_stream``)."""

    def __init__(self, client: Any, prefix: str, notice_stream: Callable[[str], str]) -> None:
        self.client = client
        self.prefix = prefix
        self.notice_stream = notice_stream

    def _key(self, cid: str) -> str:
        return f"{self.prefix}:challenge:{{c:{cid}}}"

    def _index(self, account: str, way: str) -> str:
        return f"{self.prefix}:{{a:{account}}}:challenges:{way}"

    # --- counts behind the limits ------------------------------------------------------------
    def count_made(self, account: str, most: int) -> float | None:
        """Count one challenge the account made to another in its last ``RATE_WINDOW`` seconds;
        past ``most`` it is not counted and the answer is when the oldest counted one was made
        (epoch seconds), else None."""
        now = time.time()
        key = self._index(account, "rate")
        member = f"{now:.6f}:{secrets.token_hex(4)}"
        pipe = self.client.pipeline(transaction=True)
        pipe.zremrangebyscore(key, "-inf", now - RATE_WINDOW)
        pipe.zadd(key, {member: now})
        pipe.zcard(key)
        pipe.expire(key, RATE_WINDOW + 1)
        if int(pipe.execute()[2]) <= most:
            return None
        self.client.zrem(key, member)
        oldest = self.client.zrange(key, 0, 0, withscores=True)
        return float(oldest[0][1]) if oldest else now

    def started_games(self, account: str) -> list[str]:
        """The games started from the account's challenges of the built-in bots."""
        return [text(m) for m in self.client.zrange(self._index(account, "games"), 0, -1)]

    def forget_games(self, account: str, game_ids: Sequence[str]) -> None:
        if game_ids:
            self.client.zrem(self._index(account, "games"), *game_ids)

    def add_game(self, account: str, game_id: str, keep: int) -> None:
        """Count a game started from the account's challenge of the built-in bots (the key lives
        ``keep`` seconds after the last)."""
        key = self._index(account, "games")
        pipe = self.client.pipeline(transaction=False)
        pipe.zadd(key, {game_id: time.time()})
        pipe.expire(key, keep)
        pipe.execute()

    # --- challenges --------------------------------------------------------------------------
    def put(
        self,
        cid: str,
        challenge: str,
        keep: int,
        owner: str,
        expires: float,
        challenged: str | None,
        notice: str | None,
    ) -> None:
        """Store an open challenge (JSON) for ``keep`` seconds, list it among its owner's and,
        with ``challenged``, among that account's, which also hears ``notice``."""
        key = self._key(cid)
        pipe = self.client.pipeline(transaction=False)
        pipe.hset(key, "c", challenge)
        pipe.expire(key, keep)
        pipe.execute()
        self.client.zadd(self._index(owner, "out"), {cid: expires})
        if challenged is not None:
            pipe = self.client.pipeline(transaction=False)
            pipe.zadd(self._index(challenged, "in"), {cid: expires})
            if notice is not None:
                pipe.xadd(
                    self.notice_stream(challenged),
                    {"c": notice},
                    maxlen=NOTICE_MAXLEN,
                    approximate=True,
                )
            pipe.execute()

    def get(self, cid: str) -> tuple[str, str | None] | None:
        """(the challenge, its outcome or None while undecided) as JSON; None when unknown."""
        raw, outcome = self.client.hmget(self._key(cid), ["c", "outcome"])
        if raw is None:
            return None
        return text(raw), None if outcome is None else text(outcome)

    def decide(self, cid: str, outcome: str) -> bool:
        """Record the challenge's outcome (JSON), once: False if another was recorded first."""
        return bool(self.client.hsetnx(self._key(cid), "outcome", outcome))

    def notify(self, account: str, notice: str) -> None:
        """Write a challenge notice (JSON) to the account's notices stream."""
        self.client.xadd(
            self.notice_stream(account), {"c": notice}, maxlen=NOTICE_MAXLEN, approximate=True
        )

    def unlist(self, cid: str, owner: str, challenged: str | None) -> None:
        """Take a decided challenge off its owner's and the challenged account's lists."""
        self.client.zrem(self._index(owner, "out"), cid)
        if challenged:
            self.client.zrem(self._index(challenged, "in"), cid)

    def open_ids(self, account: str, way: str) -> list[str]:
        """The ids listed ``in`` (addressed to) or ``out`` (made by) the account, expired ones
        trimmed."""
        key = self._index(account, way)
        self.client.zremrangebyscore(key, "-inf", time.time())
        return [text(m) for m in self.client.zrange(key, 0, -1)]

    def drop(self, account: str, way: str, cid: str) -> None:
        """Take one challenge off one of the account's lists."""
        self.client.zrem(self._index(account, way), cid)
