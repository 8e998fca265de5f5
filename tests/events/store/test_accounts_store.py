"""Seat tokens and bot accounts on the store (``events.store.accounts``) on every adapter: a seat
is claimed once, an outstanding invite keeps it for its code, a rotation replaces the digest
only from the one it names, a revoked bot token no longer names its account, and a rotated one
never leaves two live tokens nor the old one working (crashed or raced at any step)."""

from __future__ import annotations

import uuid
from collections.abc import Callable
from typing import Any

import pytest

from events.store import RedisStore
from events.store.accounts import BotAccountStore, SeatTokenStore

from .test_create_and_outage import TS, first_events


def test_a_seat_is_claimed_once_invited_for_its_code_and_rotated_from_its_digest(
    store: RedisStore,
) -> None:
    tokens = SeatTokenStore(store)
    gid = uuid.uuid4().hex[:12]
    assert tokens.claim(gid, 0, "d0", "", "") == "nogame"
    store.create_game(gid, TS, "create", first_events(gid))
    assert tokens.claim(gid, 0, "d0", "", "Ann") == "ok"
    assert tokens.claim(gid, 0, "dx", "", "") == "taken"
    assert tokens.holds(tokens.seat_holds(gid, 0, "d0"))
    assert not tokens.holds(tokens.seat_holds(gid, 0, "dx"))
    assert not tokens.holds(tokens.seat_holds(gid, 1, "d0"))
    # seat 1: invited, so only the invite's digest claims it, once
    assert tokens.invite(gid, 0, "c0") == "taken"
    assert tokens.invite(gid, 1, "c1") == "ok"
    assert tokens.claim(gid, 1, "d1", "", "") == "invited"
    assert tokens.claim(gid, 1, "d1", "c1", "Bo") == "ok"
    assert tokens.claim(gid, 1, "d2", "c1", "") == "used"
    exists, digests = tokens.digests(gid)
    assert exists and digests == {0: "d0", 1: "d1"}
    (fields,) = tokens.fields([gid])
    assert fields["host"] == "0" and fields["name:1"] == "Bo" and fields["used:1"] == "c1"
    assert "invite:1" not in fields
    # a rotation from a digest that is no longer the seat's is stale; the admin's ('') is not
    assert tokens.rotate(gid, 0, "d0b", "dx") == "stale"
    assert tokens.rotate(gid, 0, "d0b", "d0") == "ok"
    assert tokens.rotate(gid, 0, "d0c", "") == "ok"
    assert tokens.rotate(gid, 2, "d", "") == "unclaimed"
    assert tokens.digests(gid)[1][0] == "d0c"


def test_a_revoked_bot_token_no_longer_names_its_account(store: RedisStore) -> None:
    accounts = BotAccountStore(store.client, store.prefix)
    accounts.create("acc", {"name": "n", "revoked_at": ""}, "digest")
    assert accounts.account_of("digest") == "acc"
    assert accounts.get("acc")["token"] == "digest"
    accounts.revoke("acc", "2026-01-01T00:00:00Z")
    assert accounts.account_of("digest") is None
    assert accounts.get("acc") == {"name": "n", "revoked_at": "2026-01-01T00:00:00Z", "token": ""}
    assert accounts.get("nobody") == {}


class Hooked:
    """The store's client, with ``before[name](*args)`` run once before the first call of that
    command and ``after[name](*args)`` once after it (a crash there raises; a racing writer
    runs there)."""

    def __init__(
        self,
        client: Any,
        before: dict[str, Callable[..., None]] | None = None,
        after: dict[str, Callable[..., None]] | None = None,
    ) -> None:
        self._client, self._before, self._after = client, before or {}, after or {}

    def __getattr__(self, name: str) -> Any:
        attr = getattr(self._client, name)
        first, then = self._before.pop(name, None), self._after.pop(name, None)
        if first is None and then is None:
            return attr

        def call(*args: Any, **kwargs: Any) -> Any:
            if first is not None:
                first(*args)
            out = attr(*args, **kwargs)
            if then is not None:
                then(*args)
            return out

        return call


class Crash(Exception):
    pass


def crash(*_: Any) -> None:
    raise Crash


def _account(store: RedisStore, **hooks: dict[str, Callable[..., None]]) -> BotAccountStore:
    plain = BotAccountStore(store.client, store.prefix)
    plain.create("acc", {"name": "n", "revoked_at": ""}, "old")
    return BotAccountStore(Hooked(store.client, **hooks), store.prefix)


def test_a_rotation_replaces_the_live_token_once(store: RedisStore) -> None:
    accounts = _account(store)
    assert accounts.rotate("acc", "old", "new")
    assert accounts.account_of("old") is None and accounts.account_of("new") == "acc"
    assert accounts.get("acc")["token"] == "new"
    assert not accounts.rotate("acc", "old", "other")  # the old token rotates no more
    assert accounts.account_of("other") is None and accounts.account_of("new") == "acc"
    assert accounts.get("acc")["token"] == "new"
    assert accounts.rotate("acc", "new", "newer") and accounts.account_of("newer") == "acc"


def test_a_rotation_that_crashes_leaves_no_two_live_tokens_and_never_the_old_one(
    store: RedisStore,
) -> None:
    # after the old key's deletion (step 1): no token works
    accounts = _account(store, after={"delete": crash})
    with pytest.raises(Crash):
        accounts.rotate("acc", "old", "new")
    assert accounts.account_of("old") is None and accounts.account_of("new") is None
    # after the swap (step 2), before the new key: no token works; a revocation still ends it
    accounts = _account(store, before={"set": crash})
    with pytest.raises(Crash):
        accounts.rotate("acc", "old", "new")
    assert accounts.account_of("old") is None and accounts.account_of("new") is None
    accounts.revoke("acc", "2026-01-01T00:00:00Z")
    assert accounts.get("acc")["token"] == "" and accounts.account_of("new") is None
    # after the new key (step 3): only the new token works
    accounts = _account(store, before={"hget": crash})
    with pytest.raises(Crash):
        accounts.rotate("acc", "old", "new")
    assert accounts.account_of("old") is None and accounts.account_of("new") == "acc"


def test_a_revocation_racing_a_rotation_leaves_no_live_token(store: RedisStore) -> None:
    plain = BotAccountStore(store.client, store.prefix)

    def revoke(*_: Any) -> None:
        plain.revoke("acc", "2026-01-01T00:00:00Z")

    # the revocation lands before the rotation, after its step 1, after its swap (it then reads
    # the new digest, whose key is not written yet), after its new key
    for hooks in (
        {"before": {"delete": revoke}},
        {"after": {"delete": revoke}},
        {"before": {"set": revoke}},
        {"after": {"set": revoke}},
    ):
        accounts = _account(store, **hooks)
        assert not accounts.rotate("acc", "old", "new"), hooks
        assert accounts.account_of("old") is None, hooks
        assert accounts.account_of("new") is None, hooks
        assert accounts.get("acc")["token"] == "", hooks
