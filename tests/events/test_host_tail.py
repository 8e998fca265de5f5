"""The host tail (``events.tail``): processes of one host hand each other the games' newest
envelopes through a shared memory-mapped file, so a process whose cached game is behind does not
ask the store for what another process just appended. Nothing read from it is trusted: torn or
foreign slots are misses, and envelopes the store does not hold are refused by the append and the
command is decided again on the store's game."""

from __future__ import annotations

import multiprocessing
import os
import uuid
from collections.abc import Callable, Iterator
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import fakeredis
import pytest

import engine
from bots import get_bot
from engine.rng import Rng
from events import RedisStore, seal_batch, verify_chain
from events.games import Games
from events.tail import HostTail, open_host_tail, store_key, store_tail

KEY = store_key("127.0.0.1:6379", 0, "test")


def _texts(first: int, n: int, size: int = 300) -> list[str]:
    return [f'{{"seq":{first + i},"pad":"{"x" * size}"}}' for i in range(n)]


@pytest.fixture
def tail_path(tmp_path: Path) -> str:
    return str(tmp_path / "tail")


# -- the slots ------------------------------------------------------------------------------------
def test_a_batch_is_read_back_from_the_version_a_reader_holds(tail_path: str) -> None:
    tail = HostTail(tail_path, slots=8)
    tail.put(KEY, "g1", 1, _texts(1, 3))
    tail.put(KEY, "g1", 4, _texts(4, 2))
    got = tail.get(KEY, "g1", 2, 5)
    assert got is not None
    assert [t.decode() for t in got] == _texts(3, 3)
    assert tail.get(KEY, "g1", 0, 1) is not None  # all of it, from the first
    assert tail.get(KEY, "g1", 5, 5) is None  # nothing newer than the reader's version
    assert tail.get(KEY, "g1", 2, 6) is None  # the reader needs more than the slot has
    assert tail.get(KEY, "g2", 2, 5) is None  # another game
    assert tail.get(store_key("elsewhere"), "g1", 2, 5) is None  # another store


def test_a_batch_that_does_not_continue_the_slot_replaces_it(tail_path: str) -> None:
    tail = HostTail(tail_path, slots=1)  # every game in one slot
    tail.put(KEY, "g1", 1, _texts(1, 3))
    tail.put(KEY, "g2", 1, _texts(1, 2))
    assert tail.get(KEY, "g1", 0, 1) is None
    tail.put(KEY, "g2", 7, _texts(7, 1))  # a gap (another host appended 3-6)
    assert tail.get(KEY, "g2", 2, 3) is None
    assert [t.decode() for t in tail.get(KEY, "g2", 6, 7) or []] == _texts(7, 1)


def test_a_full_slot_keeps_the_newest_envelopes(tail_path: str) -> None:
    tail = HostTail(tail_path, slots=2, slot_size=4096)
    for first in range(1, 200, 4):
        tail.put(KEY, "g1", first, _texts(first, 4))
    last = 200
    assert [t.decode() for t in tail.get(KEY, "g1", last - 4, last) or []] == _texts(last - 3, 4)
    assert tail.get(KEY, "g1", 10, last) is None  # long gone: the store answers
    big = ['{"pad":"' + "y" * 5000 + '"}']  # larger than a slot: not kept at all
    tail.put(KEY, "g1", last + 1, big)
    assert tail.get(KEY, "g1", last, last + 1) is None


def test_a_torn_or_spoiled_slot_is_a_miss(tail_path: str) -> None:
    tail = HostTail(tail_path, slots=1)
    tail.put(KEY, "g1", 1, _texts(1, 4))
    assert tail.get(KEY, "g1", 0, 4) is not None
    with open(tail_path, "r+b") as f:  # one byte of the third envelope changes under a reader
        f.seek(176 + 2 * (8 + len(_texts(1, 1)[0])) + 20)
        f.write(b"#")
    assert tail.get(KEY, "g1", 0, 4) is None
    assert tail.get(KEY, "g1", 3, 4) is not None  # the records after it are whole
    with open(tail_path, "r+b") as f:  # the header
        f.seek(8)
        f.write(b"\x07")
    assert tail.get(KEY, "g1", 3, 4) is None


def _write_from_another_process(path: str) -> None:
    HostTail(path, slots=8).put(KEY, "g1", 1, _texts(1, 5))


def test_what_one_process_writes_another_reads(tail_path: str) -> None:
    reader = HostTail(tail_path, slots=8)
    reader.get(KEY, "g1", 0, 1)  # mapped before the writer exists
    proc = multiprocessing.get_context("spawn").Process(
        target=_write_from_another_process, args=(tail_path,)
    )
    proc.start()
    proc.join(60)
    assert proc.exitcode == 0
    assert [t.decode() for t in reader.get(KEY, "g1", 1, 5) or []] == _texts(2, 4)


def test_a_file_others_may_read_or_a_fake_server_gets_no_tail(
    tail_path: str, caplog: pytest.LogCaptureFixture
) -> None:
    Path(tail_path).write_bytes(b"")
    os.chmod(tail_path, 0o644)
    assert open_host_tail(tail_path) is None
    assert "may be read by other users" in caplog.text
    assert open_host_tail("off") is None
    assert open_host_tail(None) is None  # off unless asked for
    fake = fakeredis.FakeRedis(server=fakeredis.FakeServer())
    assert store_tail(fake, "p", str(Path(tail_path).with_name("other"))) is None
    assert RedisStore(fake, prefix="p").tail is None


# -- two processes serving one game -------------------------------------------------------------
T0 = datetime(2026, 1, 1, tzinfo=UTC)


class _Clock:
    """The same timestamps in every run, so two runs of one script store identical logs."""

    def __init__(self) -> None:
        self.n = 0

    def __call__(self) -> datetime:
        self.n += 1
        return T0 + timedelta(seconds=self.n)


@pytest.fixture
def real_store(real_redis: Any, tail_path: str) -> Iterator[Callable[..., RedisStore]]:
    """Stores on the real Redis under fresh prefixes (``run`` names one; the same run, the same
    keys); ``tail=False`` for a store without the host tail."""
    base = f"t{uuid.uuid4().hex[:12]}"

    def make(tail: bool = True, run: str = "") -> RedisStore:
        return RedisStore(real_redis, prefix=base + run, host_tail=tail_path if tail else "off")

    yield make
    keys = list(real_redis.scan_iter(match=f"{base}*", count=1000))
    if keys:
        real_redis.delete(*keys)


def _counted(store: Any, method: str = "catch_up") -> list[int]:
    """Count a store's calls of ``method`` (catch-ups, appends: round trips); they still go to
    Redis."""
    calls = [0]
    inner = getattr(store, method)

    def counted(*args: Any, **kwargs: Any) -> Any:
        calls[0] += 1
        return inner(*args, **kwargs)

    setattr(store, method, counted)
    return calls


def _play(
    make: Callable[..., RedisStore], tail: bool, seed: str, commands: int
) -> tuple[list[str], int]:
    """One game, its commands sent to two processes (two ``Games``) at random, each command
    decided beforehand on the stored game with its ``expected_version``: the stored log and the
    catch-ups from the store the two processes made."""
    run = "t" if tail else "s"
    oracle = Games(make(tail=False, run=run), clock=_Clock())
    stores = [make(tail=tail, run=run), make(tail=tail, run=run)]
    counts = [_counted(s) for s in stores]
    clock = _Clock()
    gid, _ = oracle.create(2, seed=seed, game_id=f"g{seed}")
    clock.n = oracle.clock.n  # type: ignore[attr-defined]
    procs = [Games(s, clock=clock) for s in stores]
    pick, rng, bot = Rng(11), Rng(12), get_bot("random")
    for n in range(commands):
        state, version, _ = oracle.load(gid)
        if state.over:
            break
        seat = min(engine.pending(state))
        cmd = bot.act(engine.legal(state, seat), None, rng)
        out = procs[pick.below(2)].submit(gid, seat, cmd, f"c{n}", expected_version=version)
        assert out.version > version
    log = [e.to_json() for e in stores[0].read(gid)]
    verify_chain(stores[0].read(gid, upcast=False))
    return log, sum(c[0] for c in counts)


def test_a_process_behind_reads_what_the_other_appended_from_the_tail(
    real_store: Callable[..., RedisStore],
) -> None:
    with_tail, catch_ups = _play(real_store, True, "tail-1", 80)
    without, catch_ups_without = _play(real_store, False, "tail-1", 80)
    assert with_tail == without  # the same log, envelope for envelope
    assert catch_ups <= 2  # each process's first sight of the game
    assert catch_ups_without > 20  # a round trip each time the other process served the last


def test_envelopes_the_store_does_not_hold_are_refused_and_decided_again(
    real_store: Callable[..., RedisStore], tail_path: str
) -> None:
    a, b = Games(real_store()), Games(real_store())
    appends = _counted(b.store, "append")
    gid, _ = a.create(2, seed="tail-2")
    rng, bot = Rng(4), get_bot("random")

    def next_command(games: Games) -> tuple[int, dict[str, Any], int]:
        state, version, _ = games.load(gid)
        seat = min(engine.pending(state))
        return seat, bot.act(engine.legal(state, seat), None, rng), version

    for n in range(4):
        seat, cmd, version = next_command(a)
        a.submit(gid, seat, cmd, f"c{n}", expected_version=version)
    b.load(gid)  # b's cache: the game now
    state, head_version, head_hash = a.load(gid)
    seat, cmd, version = next_command(a)
    stored = a.submit(gid, seat, cmd, "c4", expected_version=version)
    tail = HostTail(tail_path)
    store = real_store()
    assert store.tail is not None
    # the tail now says something else happened next: the same events under another command id
    # (another history, as a store that lost its newest events and took others would hold) ...
    forged = seal_batch(
        [e.event() for e in stored.envelopes],
        game_id=gid,
        expected_version=head_version,
        prev_hash=head_hash,
        command_id="never-stored",
        actor="seat:0",
        ts="2026-01-01T00:00:00Z",
        visibility=engine.visibility,
    )
    tail.put(store.tail.key, gid, head_version + 1, [e.checked_json() for e in forged])
    seat, cmd, version = next_command(a)
    b.submit(gid, seat, cmd, "c5", expected_version=version)  # decided on it, refused, again
    envs = store.read(gid, upcast=False)
    verify_chain(envs)
    assert all(e.command_id != "never-stored" for e in envs)
    assert _commands(envs)[-2:] == ["c4", "c5"]
    assert appends[0] == 2  # decided on the tail's envelopes and refused, then on the store's

    # ... or that more happened than the store holds: b decides on the store's game
    b.load(gid)
    seat, cmd, version = next_command(a)
    a.submit(gid, seat, cmd, "c6", expected_version=version)  # the tail holds it
    state, v6, h6 = a.load(gid)
    seat, cmd, _ = next_command(a)
    record = engine.command_submitted(seat, cmd)
    engine.evolve(state, record)
    lost = seal_batch(
        [record, *engine.play(state, seat, cmd)],
        game_id=gid,
        expected_version=v6,
        prev_hash=h6,
        command_id="lost",
        actor=f"seat:{seat}",
        ts="2026-01-01T00:00:00Z",
        visibility=engine.visibility,
    )
    tail.put(store.tail.key, gid, v6 + 1, [e.checked_json() for e in lost])  # after c6
    catch_ups = _counted(b.store)
    out = b.submit(gid, seat, cmd, "c7", expected_version=v6)
    envs = store.read(gid, upcast=False)
    verify_chain(envs)
    assert "lost" not in {e.command_id for e in envs}
    assert _commands(envs)[-2:] == ["c6", "c7"] and out.version == envs[-1].seq
    # the tail went past the client's version: the store decides (one catch-up, from the game
    # b had cached before it read the tail)
    assert catch_ups[0] == 1


def _commands(envs: list[Any]) -> list[str]:
    """The command ids of a log, one per batch."""
    out: list[str] = []
    for env in envs:
        if not out or out[-1] != env.command_id:
            out.append(env.command_id)
    return out
