"""Envelope: canonical JSON, hashing, sealing, and chain verification."""

from __future__ import annotations

import hashlib
import json
from dataclasses import replace
from datetime import UTC, datetime, timedelta, timezone
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from engine.canonical import canonical_json
from events.store import (
    GENESIS_HASH,
    ChainBroken,
    Envelope,
    InvalidBatch,
    iso_utc,
    seal_batch,
    verify_chain,
)

TS = "2025-03-01T12:00:00.000000Z"

json_values = st.recursive(
    st.none()
    | st.booleans()
    | st.integers(min_value=-(2**53), max_value=2**53)
    | st.floats(allow_nan=False, allow_infinity=False)
    | st.text(max_size=20),
    lambda children: (
        st.lists(children, max_size=4) | st.dictionaries(st.text(max_size=8), children, max_size=4)
    ),
    max_leaves=12,
)
payloads = st.dictionaries(
    st.text(max_size=8).filter(lambda k: k not in ("type", "v")), json_values, max_size=5
)


def one(payload: dict[str, Any] | None = None, **kw: Any) -> Envelope:
    args: dict[str, Any] = dict(
        game_id="g1",
        seq=1,
        visibility="public",
        command_id="c1",
        actor="seat:0",
        ts=TS,
        prev_hash=GENESIS_HASH,
    )
    args.update(kw)
    return Envelope.from_event({"type": "DiceRolled", "v": 2, **(payload or {})}, **args)


@settings(max_examples=150, deadline=None)
@given(payloads)
def test_json_round_trip_is_canonical_and_lossless(payload: dict[str, Any]) -> None:
    env = one(payload)
    text = env.to_json()
    back = Envelope.from_json(text)
    assert back == env
    assert back.to_json() == text  # one spelling
    assert env.checked_json() == text
    assert json.loads(text)["payload"] == payload
    assert back.event() == {"type": "DiceRolled", "v": 2, **payload}
    assert verify_chain([back]) == env.hash


@settings(max_examples=150, deadline=None)
@given(st.text(max_size=30), st.text(max_size=30), st.text(max_size=30), payloads)
def test_checked_json_equals_to_json_with_hostile_strings(
    actor: str, command_id: str, game_id: str, payload: dict[str, Any]
) -> None:
    hostile = ',"payload":{"x":1},"hash":"'
    env = one(payload, actor=actor + hostile, command_id=hostile + command_id, game_id=game_id)
    assert env.checked_json() == env.to_json()
    with pytest.raises(InvalidBatch, match="stale"):
        replace(env, actor=actor + "!").checked_json()


def test_hash_is_sha256_of_canonical_body() -> None:
    env = one({"b": 1, "a": [1, 2], "u": "é"})
    body = {k: v for k, v in json.loads(env.to_json()).items() if k != "hash"}
    text = json.dumps(body, sort_keys=True, separators=(",", ":"), ensure_ascii=False)
    assert env.hash == hashlib.sha256(text.encode()).hexdigest()
    assert canonical_json({"b": 1, "a": 2}) == '{"a":2,"b":1}'
    assert '"u":"é"' in env.to_json()


@pytest.mark.parametrize(
    "field,value",
    [
        ("type", "Other"),
        ("schema_version", 3),
        ("game_id", "g2"),
        ("seq", 2),
        ("visibility", "seat:1"),
        ("command_id", "c2"),
        ("actor", "timeout"),
        ("ts", "2025-03-01T12:00:01Z"),
        ("payload", {"x": 2}),
        ("prev_hash", "1" * 64),
    ],
)
def test_every_field_is_covered_by_the_hash(field: str, value: Any) -> None:
    env = one({"x": 1})
    changed = replace(env, **{field: value})
    assert changed.compute_hash() != env.hash
    with pytest.raises(ChainBroken):
        verify_chain([changed], prev_hash=changed.prev_hash, first_seq=changed.seq)


def test_seal_batch_chains_and_numbers() -> None:
    envs = seal_batch(
        [{"type": "A"}, {"type": "B", "v": 4, "vis": "seat:2"}, {"type": "C", "x": None}],
        game_id="g",
        expected_version=7,
        prev_hash="ab" * 32,
        command_id="cmd",
        actor="bot:random",
        ts=TS,
        visibility=lambda e: e.get("vis", "server"),
    )
    assert [e.seq for e in envs] == [8, 9, 10]
    assert envs[0].prev_hash == "ab" * 32
    assert [e.prev_hash for e in envs[1:]] == [e.hash for e in envs[:-1]]
    assert [e.visibility for e in envs] == ["server", "seat:2", "server"]
    assert [e.schema_version for e in envs] == [1, 4, 1]
    assert verify_chain(envs, prev_hash="ab" * 32, first_seq=8) == envs[-1].hash
    with pytest.raises(ChainBroken, match="expected seq 1"):
        verify_chain(envs)
    with pytest.raises(ChainBroken, match="prev_hash"):
        relinked = replace(envs[1], prev_hash="cd" * 32).sealed()  # valid hash, broken link
        verify_chain([envs[0], relinked, envs[2]], prev_hash="ab" * 32, first_seq=8)


@pytest.mark.parametrize(
    "ts",
    ["2025-03-01 12:00", "yesterday", "2025-03-01T12:00:00", "2025-03-01T12:00:00+02:00"],
)
def test_timestamps_must_be_iso_utc(ts: str) -> None:
    with pytest.raises(ValueError, match="iso_utc"):
        seal_batch(
            [{"type": "A"}],
            game_id="g",
            expected_version=0,
            prev_hash=GENESIS_HASH,
            command_id="c",
            actor="system",
            ts=ts,
        )


def test_iso_utc() -> None:
    moment = datetime(2025, 3, 1, 13, 0, tzinfo=timezone(timedelta(hours=1)))
    assert iso_utc(moment) == "2025-03-01T12:00:00.000000Z"
    assert datetime.fromisoformat(iso_utc(datetime.now(UTC))).tzinfo is not None
    with pytest.raises(ValueError, match="aware"):
        iso_utc(datetime(2025, 1, 1))


@pytest.mark.parametrize("vis", ["everyone", "seat:", "seat:x", "", "Public"])
def test_visibility_is_checked(vis: str) -> None:
    with pytest.raises(ValueError, match="seat:N"):
        seal_batch(
            [{"type": "A"}],
            game_id="g",
            expected_version=0,
            prev_hash=GENESIS_HASH,
            command_id="c",
            actor="system",
            ts=TS,
            visibility=vis,
        )


@pytest.mark.parametrize(
    "event", [{"v": 1}, {"type": 3}, {"type": "A", "v": 0}, {"type": "A", "v": "2"}]
)
def test_bad_events_are_refused(event: dict[str, Any]) -> None:
    with pytest.raises(InvalidBatch):
        Envelope.from_event(
            event,
            game_id="g",
            seq=1,
            visibility="public",
            command_id="c",
            actor="system",
            ts=TS,
            prev_hash=GENESIS_HASH,
        )


def test_from_json_rejects_foreign_documents() -> None:
    with pytest.raises(ValueError, match="missing fields"):
        Envelope.from_json('{"type": "A"}')
