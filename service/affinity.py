"""Game affinity for gunicorn: each game's requests are served by one worker process.

Every worker process keeps the games it served in memory (``events.games``). When two workers
take turns at one game, each command finds its copy one move behind and pays a catch-up: a
round trip to the store and folding the events it missed (about a seventh of a command's CPU,
``docs/volume.md``). The worker classes here remove that: a worker that accepts a connection
peeks at its request line (``MSG_PEEK``: nothing is consumed) and, when the path names a game
(``/games/<id>/...``) that belongs to another worker, passes the open connection to that worker
(``SCM_RIGHTS`` over a Unix socket pair) and goes back to accepting. The owner reads the
request as if it had accepted it itself. Which worker owns a game: ``crc32(game id) % workers``.

Only an optimisation, never a condition: the store decides every command as before, so a
request served by another worker is answered the same, only at the cost of a catch-up. A
connection is served where it was accepted when:

* its path names no game, or an event stream (held open for long; any worker serves it), or
  the request line is not readable (TLS terminated by gunicorn itself);
* the owner's slot is empty (no live worker, or one that stopped beating for ``STALE_AFTER``
  seconds) or its queue is full (the send would block: the kernel's ``max_dgram_qlen``);

A worker that holds no slot (more workers run than slots: a ``HUP`` reload's new workers while
the old ones leave) passes connections on but receives none; it takes a free slot within
``CLAIM_EVERY`` seconds. The socket pairs and the shared memory are made by the master before
it forks the first worker and are inherited, never named: no other process on the host can send
to a worker or receive its connections. A worker that replaces a dead one takes its slot, socket
and any connections queued there. A worker that leaves serves what is queued for it first.

* ``GameAffineWorker``: gunicorn's ``sync`` worker with routing (its settings apply);
* ``GameAffineThreadWorker``: gunicorn's ``gthread`` worker with routing, for new connections
  (a kept-alive connection stays with the worker that has it); ``rfg run`` uses it.

Use: ``gunicorn --worker-class service.affinity.GameAffineThreadWorker --threads 8 ...``.
"""

from __future__ import annotations

import errno
import fcntl
import mmap
import os
import re
import selectors
import socket
import struct
import time
import zlib
from functools import partial
from typing import Any

from gunicorn.workers.gthread import DEFAULT_WORKER_DATA_TIMEOUT, TConn, ThreadWorker
from gunicorn.workers.sync import SyncWorker

#: a slot whose worker has not beaten for this long gets no connections (a stuck or dead worker)
STALE_AFTER = 5.0
#: an idle worker beats at least this often (well within STALE_AFTER)
BEAT_EVERY = 1.0
#: how often a worker without a slot (more workers than slots, as in a reload) tries to take one
CLAIM_EVERY = 1.0
#: bytes of the request peeked at: the request line of any path this app serves
PEEK_BYTES = 256
_GAME_PATH = re.compile(rb"^[A-Z]{3,7} /games/([A-Za-z0-9_-]{1,64})(/[^ ?]*)?[ ?]")
_SLOT = struct.Struct("<qd")  # (pid, last beat on CLOCK_MONOTONIC); pid 0: empty


class _Slots:
    """Made by the master once, before the first fork, and inherited by every worker: per slot a
    Unix datagram socket pair (the queue of connections passed to the slot) and a heartbeat
    record in shared memory (a memfd). A worker holds a slot while it holds a POSIX record lock on
    the slot's byte of that memfd: the kernel drops the lock when the process ends, however it
    ends, so a replacement - after a crash, ``max_requests`` or a ``HUP`` reload - takes the slot
    and the connections queued in it."""

    def __init__(self, count: int) -> None:
        self.count = count
        self.pairs = [socket.socketpair(socket.AF_UNIX, socket.SOCK_DGRAM) for _ in range(count)]
        for sender, receiver in self.pairs:
            sender.setblocking(False)
            receiver.setblocking(False)
        self.fd = os.memfd_create("rfg-game-affinity", os.MFD_CLOEXEC)
        os.ftruncate(self.fd, _SLOT.size * count)
        self.beats = mmap.mmap(self.fd, _SLOT.size * count)

    def claim(self) -> int | None:
        """A free slot for this process (in a worker); None while every slot is held."""
        for i in range(self.count):
            try:
                fcntl.lockf(self.fd, fcntl.LOCK_EX | fcntl.LOCK_NB, 1, i, os.SEEK_SET)
            except OSError:  # held by a live worker
                continue
            return i
        return None

    def beat(self, slot: int, pid: int) -> None:
        _SLOT.pack_into(self.beats, slot * _SLOT.size, pid, time.monotonic())

    def live(self, slot: int) -> bool:
        pid, at = _SLOT.unpack_from(self.beats, slot * _SLOT.size)
        return pid != 0 and time.monotonic() - at < STALE_AFTER


def owner_of(request_head: bytes, workers: int) -> int | None:
    """The slot that serves the request starting with ``request_head``; None: any worker."""
    m = _GAME_PATH.match(request_head)
    if m is None or (m.group(2) or b"").endswith(b"/stream"):
        return None
    return zlib.crc32(m.group(1)) % workers


class _Affinity:
    """What both worker classes share: the slot, the inbox, and passing a connection on."""

    _slots: _Slots | None = None  # the master's, made with the first worker object
    cfg: Any
    log: Any
    sockets: list[Any]

    def _make_slots(self) -> None:
        """In the master, as the worker object is made (before the fork): the slots, once. Where
        the system lacks what they need (memfd, ``SCM_RIGHTS``: Linux has both), the workers
        serve what they accept, as gunicorn's own classes do."""
        cls = _Affinity
        if cls._slots is None or cls._slots.count != max(1, self.cfg.workers):
            try:
                cls._slots = _Slots(max(1, self.cfg.workers))
            except (AttributeError, OSError) as exc:
                self.log.warning("game affinity off (each worker serves what it accepts): %s", exc)
                cls._slots = None
        self.slots: _Slots | None = cls._slots
        self.slot: int | None = None
        self.inbox: socket.socket | None = None
        self._claim_at = 0.0

    def _claim(self) -> bool:
        """In the worker: take a free slot (at start, then once a second while it has none);
        whether one was taken now."""
        now = time.monotonic()
        slots = self.slots
        if slots is None or self.slot is not None or now < self._claim_at:
            return False
        if not getattr(self, "alive", True):
            return False
        self._claim_at = now + CLAIM_EVERY
        slot = slots.claim()
        if slot is None:
            return False
        self.slot, self.inbox = slot, slots.pairs[slot][1]
        slots.beat(slot, os.getpid())
        return True

    def _beat(self, pid: int) -> None:
        if self.slots is not None and self.slot is not None:
            self.slots.beat(self.slot, pid)

    def _received(self) -> list[tuple[socket.socket, Any]]:
        """The connections queued in the inbox now (each with its peer's address)."""
        out: list[tuple[socket.socket, Any]] = []
        if self.inbox is None:
            return out
        while True:
            try:
                msg, fds, _flags, _addr = socket.recv_fds(self.inbox, 512, 4)
            except (BlockingIOError, InterruptedError):
                return out
            except OSError:
                self.log.exception("game affinity: the inbox failed; serving on without it")
                self.inbox = None
                return out
            for fd in fds:
                try:
                    family, addr = _unpack_address(msg)
                    client = socket.socket(family, socket.SOCK_STREAM, 0, fileno=fd)
                except (ValueError, OSError):
                    os.close(fd)
                    continue
                out.append((client, addr))

    def _owner_elsewhere(self, client: socket.socket, head: bytes | None = None) -> int | None:
        """The slot of the live worker that owns the game this connection's request names, if
        that is another worker's (the request stays unread in the socket): from ``head``, the
        request's first bytes already peeked at, else peeked at now (a blocking socket waits
        for them)."""
        slots = self.slots
        if slots is None or slots.count < 2:
            return None
        if head is None:
            try:
                head = client.recv(PEEK_BYTES, socket.MSG_PEEK)
            except OSError:
                return None
        owner = owner_of(head, slots.count)
        if owner is None or owner == self.slot or not slots.live(owner):
            return None
        return owner

    def _pass(self, client: socket.socket, addr: Any, owner: int) -> bool:
        """Send the open connection to ``owner``; False if its queue is full (serve it here)."""
        assert self.slots is not None, "an owner is only found with slots"
        try:
            socket.send_fds(
                self.slots.pairs[owner][0], [_pack_address(client.family, addr)], [client.fileno()]
            )
        except OSError:
            return False
        return True


def _pack_address(family: int, addr: Any) -> bytes:
    if isinstance(addr, tuple):
        return f"{int(family)} {addr[0]} {addr[1]}".encode()
    return f"{int(family)} {addr or ''} ".encode()


def _unpack_address(msg: bytes) -> tuple[int, Any]:
    family, host, port = msg.decode().split(" ", 2)
    if port:
        return int(family), (host, int(port))
    return int(family), host


class GameAffineWorker(SyncWorker, _Affinity):
    """gunicorn's sync worker, passing each connection for a game to the worker that owns it."""

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self._make_slots()

    def notify(self) -> None:
        super().notify()
        if self._claim() and self.inbox is not None:
            self.wait_fds = [*self.wait_fds, self.inbox]  # type: ignore[has-type]
        self._beat(os.getpid())

    def run(self) -> None:
        for s in self.sockets:
            s.setblocking(False)
        # an idle worker wakes at least each BEAT_EVERY seconds to beat (gunicorn's sync worker
        # sleeps for half its --timeout): else it would look stale and get nothing routed
        timeout = min(self.timeout or 0.5, BEAT_EVERY)
        try:
            while self.alive:
                self.notify()
                served = self._serve_inbox()
                for listener in self.sockets:
                    try:
                        self.accept(listener)
                        served = True
                    except OSError as e:
                        if e.errno not in (errno.EAGAIN, errno.ECONNABORTED, errno.EWOULDBLOCK):
                            raise
                if served:
                    continue
                if not self.is_parent_alive():
                    return
                self.wait(timeout)
        finally:  # leaving: no more connections come here; serve those that did
            self._beat(0)
            while self._serve_inbox():
                pass

    def _serve_inbox(self) -> bool:
        received = self._received()
        for client, addr in received:  # (blocking: the sender made it so before peeking)
            self.handle(self.sockets[0], client, addr)
        return bool(received)

    def accept(self, listener: Any) -> None:
        client, addr = listener.accept()
        client.setblocking(True)
        owner = self._owner_elsewhere(client)
        if owner is not None and self._pass(client, addr, owner):
            client.close()  # (this copy only: the owner holds the connection now)
            return
        self.handle(listener, client, addr)


class _Conn(TConn):
    """A gthread connection that may have been passed to another worker: then closing it here
    closes this process's copy only (a graceful close would shut the connection down)."""

    passed = False  # sent to another worker

    def close(self, graceful: bool = False) -> None:
        super().close(graceful=graceful and not self.passed)


class GameAffineThreadWorker(ThreadWorker, _Affinity):
    """gunicorn's gthread worker, passing each new connection for a game to the worker that
    owns it (a kept-alive connection stays where it is).

    A new connection is routed by the main thread as soon as its request's first bytes are
    there; until then it waits in the poller, not in a thread (gthread's own worker would hold
    a thread for up to 5 s first), for as long as gthread would let it wait in all (its 5 s,
    then ``--keep-alive``). So clients that connect and say nothing do not hold up the threads
    the other requests need."""

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self._make_slots()

    def notify(self) -> None:
        super().notify()
        if self._claim() and self.inbox is not None and self.poller is not None:
            self.poller.register(self.inbox, selectors.EVENT_READ, self._inbox_ready)
        # stopping (the loop still serves what it holds, and what is queued): no more routed here
        self._beat(os.getpid() if self.alive else 0)

    def run(self) -> None:
        self._server_name = self.sockets[0].getsockname()
        try:
            super().run()
        finally:
            self._beat(0)

    def _inbox_ready(self, _fileobj: Any) -> None:
        server = self._server_name
        for client, addr in self._received():
            self.nr_conns += 1
            conn = _Conn(self.cfg, client, addr, server)
            conn.data_ready = True  # (the sender saw its first bytes)
            self.enqueue_req(conn)

    def accept(self, listener: Any) -> None:
        try:
            client, addr = listener.accept()
        except OSError as e:
            if e.errno not in (errno.EAGAIN, errno.ECONNABORTED, errno.EWOULDBLOCK):
                raise
            return
        self.nr_conns += 1
        conn = _Conn(self.cfg, client, addr, listener.getsockname())  # (non-blocking now)
        try:
            head = client.recv(PEEK_BYTES, socket.MSG_PEEK)
        except BlockingIOError:  # nothing sent yet: wait in the poller
            conn.timeout = time.monotonic() + DEFAULT_WORKER_DATA_TIMEOUT + self.cfg.keepalive
            self.pending_conns.append(conn)
            self.poller.register(
                client, selectors.EVENT_READ, partial(self.on_pending_socket_readable, conn)
            )
            return
        except OSError:
            head = b""  # (reset: the thread that takes it finds out and closes it)
        self._route(conn, head)

    def on_pending_socket_readable(self, conn: Any, client: Any) -> None:
        self.poller.unregister(client)
        self.pending_conns.remove(conn)
        try:
            head = client.recv(PEEK_BYTES, socket.MSG_PEEK)
        except OSError:
            head = b""
        self._route(conn, head)

    def _route(self, conn: _Conn, head: bytes) -> None:
        """A new connection whose first bytes arrived: passed to its game's worker, or served
        here."""
        conn.data_ready = True
        owner = self._owner_elsewhere(conn.sock, head) if head else None
        if owner is not None and self._pass(conn.sock, conn.client, owner):
            self.nr_conns -= 1
            conn.passed = True
            conn.close()  # (this copy only)
            return
        self.enqueue_req(conn)
