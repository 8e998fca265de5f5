"""One reader per process that watches Redis streams for every event stream it serves.

An open event stream (a seat's, a spectator's, a bot account's decisions) spends nearly all its
life waiting for the next entry of one Redis stream: the game's events or the account's notices.
Were each to wait with its own ``XREAD BLOCK``, 5,000 open streams would hold 5,000 Redis
connections. Instead every stream of the process asks this ``Fanout`` to ``wait(key, after,
timeout)``, and one reader thread (a greenlet under gunicorn's gevent worker) watches every key
that someone waits on:

* on a single Redis (or the embedded server, or fakeredis) with one ``XREAD BLOCK`` over all the
  keys (``block_ms`` at most, so a key someone starts to wait on joins within that), then, for the
  keys that moved, one pipelined ``XREVRANGE ... COUNT 1`` to learn each one's newest entry;
* on a Redis Cluster, whose ``XREAD`` cannot name keys of different hash slots, with one pipelined
  ``XREVRANGE ... COUNT 1`` per key every ``poll_seconds`` (one round trip per node).

When a key's newest entry moves past what a waiter has, the waiter wakes (a ``Condition`` per key)
and reads what is new itself, from the pooled client. The reader's reads are the game store's
(``events.store.redis_adapter.StreamWatch``). ``generation(key)`` counts the moves, so a
cache of what was read (``service.sse``'s feed pages) knows when it is stale.

While the store does not answer, the reader logs it once, wakes every waiter (their own reads
then report the outage to their clients) and tries again each second. Thread-safe; under gevent
the standard ``threading`` module is gevent's, so the same code serves both.
"""

from __future__ import annotations

import logging
import threading
import time
import weakref
from dataclasses import dataclass, field
from typing import Any

from events.store.outage import DOWN
from events.store.redis_adapter import StreamWatch
from events.store.text import text

log = logging.getLogger(__name__)
#: what redis-py raises while Redis is down, restarting or stalled
STORE_ERRORS = DOWN

StreamId = tuple[int, int]
#: every ``Fanout`` of the process, for ``close_all``
_instances: weakref.WeakSet[Fanout] = weakref.WeakSet()


def close_all() -> None:
    """Wake every waiter of every ``Fanout`` of the process, now and from now on: the process is
    stopping (``service.sse.stop_streams``)."""
    for fanout in list(_instances):
        fanout.close()


def parse_id(raw: Any) -> StreamId:
    """A Redis stream id (``"1700000000000-3"``, ``b"12-0"`` or ``"12"``) as a comparable pair."""
    ms, _, seq = text(raw).partition("-")
    return int(ms), int(seq or 0)


def _id_text(sid: StreamId) -> str:
    return f"{sid[0]}-{sid[1]}"


@dataclass
class _Watch:
    """One watched key: the newest entry the reader has seen, how often it moved, and who waits."""

    top: StreamId
    cond: threading.Condition
    generation: int = 0
    waiters: int = 0
    seen_at: float = field(default_factory=time.monotonic)


class Fanout:
    """The process's one reader of the streams its event streams wait on (module docstring)."""

    def __init__(
        self,
        watch: StreamWatch,
        *,
        cluster: bool = False,
        block_ms: int = 250,
        poll_seconds: float = 0.1,
    ) -> None:
        #: the reader's reads; on a single Redis its client's socket timeout exceeds ``block_ms``
        self.watch = watch
        self.cluster = cluster
        self.block_ms = block_ms
        self.poll_seconds = poll_seconds
        # an RLock, not a Lock, though nothing takes it twice: a ``Condition`` asks its lock
        # whether the caller holds it (every ``wait`` and ``notify``); an RLock knows its owner,
        # while over a Lock the Condition tries a non-blocking acquire, and gevent's Lock, when
        # that fails, yields to its hub (``gevent.thread.LockType.acquire``, for spin locks): a
        # greenlet switch more per stream and event, 11 % of a crowd's server CPU
        # (bench/streams.py --scenario crowd, 5,000 spectators: 58 us per event and stream, 65 us
        # with a Lock)
        self._lock = threading.RLock()
        self._keys: dict[str, _Watch] = {}
        self._some = threading.Condition(self._lock)  # a key to watch, for an idle reader
        self._reader: threading.Thread | None = None
        self._moves = 0  # every move of every key, numbered: a key's generation is its last
        self.down = False
        self.closed = False  # the process is stopping: no waiter waits any more
        _instances.add(self)

    def wait(self, key: str, after: Any, timeout: float) -> bool:
        """Wait up to ``timeout`` seconds for an entry of ``key`` newer than ``after`` (a stream
        id, or its pair of numbers); True as soon as the reader has seen one (at once if it already has), False when the
        time is up. True also when the store stopped answering (the caller's next read says so) and
        once the fanout is closed (``close``)."""
        mark = after if isinstance(after, tuple) else parse_id(after)
        deadline = time.monotonic() + max(0.0, timeout)
        with self._lock:
            watch = self._keys.get(key)
            if watch is None:
                # the caller has read up to ``after``: anything newer is news
                self._moves += 1
                watch = _Watch(mark, threading.Condition(self._lock), self._moves)
                self._keys[key] = watch
                self._some.notify()
                self._start()
            watch.waiters += 1
            try:
                started = watch.generation
                while watch.top <= mark:
                    if self.closed:
                        return True
                    if self.down and watch.generation != started:
                        return True
                    left = deadline - time.monotonic()
                    if left <= 0:
                        self._start()  # a reader that died (it should not) is replaced
                        return False
                    watch.cond.wait(left)
                return True
            finally:
                watch.waiters -= 1
                watch.seen_at = time.monotonic()

    def close(self) -> None:
        """Wake every waiter, and answer every later ``wait`` at once (the process stops)."""
        with self._lock:
            self.closed = True
            for watch in self._keys.values():
                watch.cond.notify_all()

    def generation(self, key: str) -> int:
        """A number that changes whenever the reader sees ``key`` move (-1: nobody waits on it)."""
        with self._lock:
            watch = self._keys.get(key)
            return -1 if watch is None else watch.generation

    def watched(self) -> int:
        """How many keys the reader watches."""
        with self._lock:
            return len(self._keys)

    def _start(self) -> None:
        if self._reader is None or not self._reader.is_alive():
            self._reader = threading.Thread(target=self._run, name="rfg-fanout", daemon=True)
            self._reader.start()

    # the reader --------------------------------------------------------------------------------

    def _run(self) -> None:
        while True:
            with self._lock:
                self._forget_unwatched()
                while not self._keys:
                    self._some.wait()
                watching = {k: w.top for k, w in self._keys.items()}
            try:
                tops = self._poll(watching) if self.cluster else self._block(watching)
            except STORE_ERRORS as exc:
                self._store_down(exc)
                time.sleep(1.0)
                continue
            except Exception:  # noqa: BLE001 - the reader must outlive any surprise
                log.exception("event stream reader: unexpected error; retrying in 1 s")
                self._store_down(None)
                time.sleep(1.0)
                continue
            if self.down:
                log.warning("event stream reader: the store answers again")
                self.down = False
            self._moved(tops)

    def _block(self, watching: dict[str, StreamId]) -> dict[str, StreamId]:
        moved = self.watch.moved({k: _id_text(v) for k, v in watching.items()}, self.block_ms)
        if not moved:
            return {}
        return self._newest(moved)

    def _poll(self, watching: dict[str, StreamId]) -> dict[str, StreamId]:
        tops = self._newest(list(watching))
        time.sleep(self.poll_seconds)
        return tops

    def _newest(self, keys: list[str]) -> dict[str, StreamId]:
        return {k: parse_id(top) for k, top in self.watch.newest(keys).items()}

    def _moved(self, tops: dict[str, StreamId]) -> None:
        with self._lock:
            for key, top in tops.items():
                watch = self._keys.get(key)
                if watch is not None and top > watch.top:
                    watch.top = top
                    self._moves += 1
                    watch.generation = self._moves
                    watch.cond.notify_all()

    def _store_down(self, exc: BaseException | None) -> None:
        with self._lock:
            if not self.down and exc is not None:
                log.warning("event stream reader: the store does not answer (%s)", exc)
            self.down = True
            for watch in self._keys.values():
                self._moves += 1
                watch.generation = self._moves
                watch.cond.notify_all()

    def _forget_unwatched(self) -> None:
        """Drop keys nobody has waited on for a few seconds (held by the lock)."""
        now = time.monotonic()
        for key in [k for k, w in self._keys.items() if not w.waiters and now - w.seen_at > 5]:
            del self._keys[key]
