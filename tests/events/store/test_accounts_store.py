"""Seat tokens and bot accounts on the store (``events.store.accounts``) on every adapter: a seat
is claimed once, an outstanding invite keeps it for its code, a rotation replaces the digest
only from the one it names, and a revoked bot token no longer names its account."""

from __future__ import annotations

import uuid

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
