"""An append's gate (``events.store.Gate``): a check of the caller's (the API's rate limits) run
first in the append's own script, where the store can: on one Redis a refusal writes nothing and
raises ``GateClosed``, a pass appends, and either way the gate's answer comes back with the
append's; where the store cannot (a replica wait), the gate is left unrun for the caller."""

from __future__ import annotations

import fakeredis
import pytest

import engine
from events.games.service import GameService
from events.store import RedisStore, ReplicaWait
from events.store.port import Gate, GateClosed

#: a gate over its own keys: counts a hit on KEYS[1] and lets the append go while it is under ARGV[1]
COUNTER = """
local n = redis.call('INCR', KEYS[1])
if n > tonumber(ARGV[1]) then return {1, n} end
return {0, n}
"""


def _command(games: GameService, gid: str) -> tuple[int, dict[str, object]]:
    from bots import get_bot
    from engine.rng import Rng

    state, _version, _ = games.load(gid)
    seat = min(engine.pending(state))
    decision = engine.legal(state, seat)
    assert decision is not None
    return seat, get_bot("random").act(decision, None, Rng(1))


def test_a_gate_that_lets_it_through_appends_and_answers(store: RedisStore) -> None:
    games = GameService(store)
    gid, version = games.create(2, seed="gate-1")
    counter = f"{store.prefix}:gate-counter:{gid}"
    gate = Gate(COUNTER, [counter], [5])
    seat, cmd = _command(games, gid)
    out = games.submit(gid, seat, cmd, "c1", expected_version=version, gate=gate)
    # one Redis runs it; a cluster, where the gate's keys live in other slots, leaves it unrun
    assert gate.reply == ([0, 1] if store.gates else None)
    assert store.version(gid) == out.version > version


def test_a_gate_that_refuses_writes_nothing(store: RedisStore) -> None:
    games = GameService(store)
    gid, version = games.create(2, seed="gate-2")
    counter = f"{store.prefix}:gate-counter:{gid}"
    store.client.set(counter, 5)
    gate = Gate(COUNTER, [counter], [5])
    seat, cmd = _command(games, gid)
    if not store.gates:  # (a cluster: the caller counts)
        games.submit(gid, seat, cmd, "c1", expected_version=version, gate=gate)
        assert gate.reply is None and store.version(gid) > version
        return
    with pytest.raises(GateClosed):
        games.submit(gid, seat, cmd, "c1", expected_version=version, gate=gate)
    assert gate.reply == [1, 6]
    assert store.version(gid) == version and store.command_result(gid, "c1") is None
    # the gate ran once: a retry of the command without it is applied
    games.forget(gid)
    assert games.submit(gid, seat, cmd, "c1", expected_version=version).version > version


def test_an_append_that_moved_on_runs_its_gate_once(store: RedisStore) -> None:
    """Without an expected version, an append refused as stale is decided again on the caught-up
    game and appended again: the gate is counted by the first attempt only."""
    games, other = GameService(store), GameService(store)
    gid, version = games.create(2, seed="gate-3")
    state, _, _ = games.load(gid)
    first, second = sorted(engine.pending(state))[:2]
    for seat, cid in ((first, "a"),):
        decision = engine.legal(state, seat)
        assert decision is not None
        cmd = {"kind": "start_tiles", "development": decision["options"][0]["development"]}
        other.submit(gid, seat, cmd, cid, version)  # another process moves the game on
    counter = f"{store.prefix}:gate-counter:{gid}"
    gate = Gate(COUNTER, [counter], [5])
    decision = engine.legal(state, second)
    assert decision is not None
    cmd = {"kind": "start_tiles", "development": decision["options"][0]["development"]}
    out = games.submit(gid, second, cmd, "b", gate=gate)  # its cache is behind: one conflict
    assert out.version == store.version(gid)
    assert int(store.client.get(counter) or 0) == (1 if store.gates else 0)


def test_a_store_waiting_for_replicas_leaves_the_gate_unrun(store: RedisStore) -> None:
    if not store.gates or isinstance(store.client, fakeredis.FakeRedis):
        pytest.skip("WAIT needs a real single Redis (fakeredis has none; a cluster never gates)")
    waiting = RedisStore(store.client, prefix=store.prefix, replica_wait=ReplicaWait(0, 1.0))
    games = GameService(waiting)
    gid, version = games.create(2, seed="gate-4")
    counter = f"{store.prefix}:gate-counter:{gid}"
    gate = Gate(COUNTER, [counter], [5])
    seat, cmd = _command(games, gid)
    out = games.submit(gid, seat, cmd, "c1", expected_version=version, gate=gate)
    assert not waiting.gates and gate.reply is None and store.client.get(counter) is None
    assert waiting.version(gid) == out.version > version
