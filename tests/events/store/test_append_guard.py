"""An append's guard (``events.store.port.Guard``): a field of one of the game's hashes must hold a value,
checked by the append script before anything else; ``GameService.submit`` runs the caller's own check
(``confirm``) before every other outcome, so a refused credential is answered first."""

from __future__ import annotations

from typing import Any

import pytest

import engine
from events.games.service import Change, GameService
from events.store import ConcurrencyConflict, InvalidBatch, RedisStore
from events.store.port import Guard, GuardRefused


class Refused(Exception):
    """What the caller's check raises in these tests (the API raises its 401/403 problem)."""


def _token_key(store: RedisStore, gid: str) -> str:
    return store.game_keys(gid)[4]


def _guard(store: RedisStore, gid: str, value: str, calls: list[str], ok: bool) -> Guard:
    def confirm() -> None:
        calls.append("confirm")
        if not ok:
            raise Refused("wrong credential")

    return Guard(_token_key(store, gid), "seat:0", value, confirm)


def _first_command(games: GameService, gid: str) -> tuple[int, dict[str, Any]]:
    from bots import get_bot
    from engine.rng import Rng

    state, _version, _ = games.load(gid)
    seat = min(engine.pending(state))
    decision = engine.legal(state, seat)
    assert decision is not None
    return seat, get_bot("random").act(decision, None, Rng(1))


def _stored(store: RedisStore, gid: str) -> tuple[int, int]:
    return store.version(gid), len(store.read(gid))


def test_a_guarded_append_lands_only_when_the_field_holds_the_value(store: RedisStore) -> None:
    games = GameService(store)
    gid, version = games.create(2, seed="guard-1")
    store.client.hset(_token_key(store, gid), "seat:0", "digest-0")
    seat, cmd = _first_command(games, gid)
    before = _stored(store, gid)

    calls: list[str] = []
    wrong = _guard(store, gid, "digest-1", calls, ok=False)
    with pytest.raises(Refused):
        games.submit(gid, seat, cmd, "c1", expected_version=version, guard=wrong)
    assert calls == ["confirm"] and wrong.refused and not wrong.passed
    assert _stored(store, gid) == before, "nothing was stored"
    assert store.command_result(gid, "c1") is None

    calls.clear()
    right = _guard(store, gid, "digest-0", calls, ok=True)
    out = games.submit(gid, seat, cmd, "c1", expected_version=version, guard=right)
    assert right.passed and calls == [], "the script checked it: no check of the caller's"
    assert out.version > version and store.version(gid) == out.version


def test_a_refused_guard_whose_check_passes_appends_without_it(store: RedisStore) -> None:
    """A credential the guard does not know (a bot account's token): the caller's whole check
    decides, and the command is stored once."""
    games = GameService(store)
    gid, version = games.create(2, seed="guard-2")
    seat, cmd = _first_command(games, gid)
    calls: list[str] = []
    guard = _guard(store, gid, "no-such-digest", calls, ok=True)
    out = games.submit(gid, seat, cmd, "c1", expected_version=version, guard=guard)
    assert calls == ["confirm"] and guard.confirmed and not guard.passed
    assert not out.result.duplicate and store.version(gid) == out.version


def test_every_other_outcome_runs_the_callers_check_first(store: RedisStore) -> None:
    games = GameService(store)
    heard: list[Change] = []
    games.subscribe(heard.append)
    gid, version = games.create(2, seed="guard-3")
    store.client.hset(_token_key(store, gid), "seat:0", "digest-0")
    seat, cmd = _first_command(games, gid)
    games.submit(gid, seat, cmd, "c1", expected_version=version)
    heard.clear()
    stored = _stored(store, gid)

    def attempt(**kwargs: Any) -> list[str]:
        calls: list[str] = []
        with pytest.raises(Refused):
            games.submit(gid, seat, guard=_guard(store, gid, "digest-x", calls, False), **kwargs)
        return calls

    # a retry of the applied command: refused before its first answer, listeners hear nothing
    assert attempt(command=cmd, command_id="c1", expected_version=version) == ["confirm"]
    assert heard == []
    # a stale version, an illegal command, an unknown game: the caller's answer, not theirs
    assert attempt(command=cmd, command_id="c2", expected_version=version) == ["confirm"]
    assert attempt(command={"kind": "nonsense"}, command_id="c3") == ["confirm"]
    calls: list[str] = []
    with pytest.raises(Refused):
        games.submit("nope", 0, cmd, "c4", guard=_guard(store, "nope", "d", calls, False))
    assert calls == ["confirm"]
    assert _stored(store, gid) == stored, "nothing was stored"

    # with the caller's check passing, the same outcomes are the ones they were
    ok: list[str] = []
    guard = _guard(store, gid, "digest-x", ok, True)
    out = games.submit(gid, seat, cmd, "c1", expected_version=version, guard=guard)
    assert out.result.duplicate and ok == ["confirm"] and len(heard) == 1
    with pytest.raises(ConcurrencyConflict):
        games.submit(
            gid, seat, cmd, "c2", expected_version=version, guard=_guard(store, gid, "x", ok, True)
        )


def test_the_store_refuses_a_guard_on_another_games_key(store: RedisStore) -> None:
    games = GameService(store)
    gid, version = games.create(2, seed="guard-4")
    other, _ = games.create(2, seed="guard-5")
    guard = Guard(_token_key(store, other), "seat:0", "x", lambda: None)
    with pytest.raises(InvalidBatch, match="not a key of game"):
        store.append(gid, version, "c1", [], guard=guard)
    assert store.version(gid) == version and store.command_result(gid, "c1") is None


def test_a_refused_guard_writes_nothing_in_the_store(store: RedisStore) -> None:
    games = GameService(store)
    gid, version = games.create(2, seed="guard-6")
    stream, meta, cmds, views = store.keys(gid)

    def snapshot() -> tuple[Any, ...]:
        c = store.client
        return c.xlen(stream), c.hgetall(meta), c.hgetall(cmds), c.hgetall(views)

    before = snapshot()
    guard = Guard(_token_key(store, gid), "seat:0", "x", lambda: None)
    with pytest.raises(GuardRefused):
        store.append(gid, version, "c1", [], views={"public": "{}"}, status="x", guard=guard)
    assert snapshot() == before
    assert not guard.passed
