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
* more workers are running than slots (a ``HUP`` reload's new workers, until replaced).

The socket pairs are made by the master before it forks the first worker and are inherited,
never named: no other process on the host can send to a worker or receive its connections. A
worker that replaces a dead one takes its slot, socket and any connections queued there. A
worker that leaves serves what is queued for it first.

* ``GameAffineWorker``: gunicorn's ``sync`` worker with routing (its settings apply);
* ``GameAffineThreadWorker``: gunicorn's ``gthread`` worker with routing, for new connections
  (a kept-alive connection stays with the worker that has it); ``rfg run`` uses it.

Use: ``gunicorn --worker-class service.affinity.GameAffineThreadWorker --threads 8 ...``.
"""

from __future__ import annotations

import errno
import mmap
import os
import re
import selectors
import socket
import struct
import time
import weakref
import zlib
from typing import Any

from gunicorn.workers.gthread import DEFAULT_WORKER_DATA_TIMEOUT, TConn, ThreadWorker
from gunicorn.workers.sync import SyncWorker

#: a slot whose worker has not beaten for this long gets no connections (a stuck or dead worker)
STALE_AFTER = 5.0
#: bytes of the request peeked at: the request line of any path this app serves
PEEK_BYTES = 256
_GAME_PATH = re.compile(rb"^[A-Z]{3,7} /games/([A-Za-z0-9_-]{1,64})(/[^ ?]*)?[ ?]")
_SLOT = struct.Struct("<qd")  # (pid, last beat on CLOCK_MONOTONIC); pid 0: empty


class _Slots:
    """What the master makes once, before the first fork: a socket pair and a heartbeat record
    per slot (anonymous shared memory), and which worker object holds each slot."""

    def __init__(self, count: int) -> None:
        self.count = count
        self.pairs = [socket.socketpair(socket.AF_UNIX, socket.SOCK_DGRAM) for _ in range(count)]
        for sender, receiver in self.pairs:
            sender.setblocking(False)
            receiver.setblocking(False)
        self.beats = mmap.mmap(-1, _SLOT.size * count)
        self.holders: list[weakref.ref[Any] | None] = [None] * count

    def claim(self, worker: Any) -> int | None:
        """A free slot for a new worker object (in the master); None when every slot is held."""
        for i, holder in enumerate(self.holders):
            held = holder() if holder is not None else None
            if held is None or not _alive(getattr(held, "pid", None)):
                self.holders[i] = weakref.ref(worker)
                return i
        return None

    def beat(self, slot: int, pid: int) -> None:
        _SLOT.pack_into(self.beats, slot * _SLOT.size, pid, time.monotonic())

    def live(self, slot: int) -> bool:
        pid, at = _SLOT.unpack_from(self.beats, slot * _SLOT.size)
        return pid != 0 and time.monotonic() - at < STALE_AFTER


def _alive(pid: Any) -> bool:
    if not isinstance(pid, int) or pid <= 0:
        return True  # made, not forked yet (gunicorn's "[booting]")
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    return True


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

    def _take_slot(self) -> None:
        """In the master, as the worker object is made (before the fork)."""
        cls = _Affinity
        if cls._slots is None or cls._slots.count != max(1, self.cfg.workers):
            cls._slots = _Slots(max(1, self.cfg.workers))
        self.slots = cls._slots
        self.slot = self.slots.claim(self)
        self.inbox: socket.socket | None = None

    def _open_inbox(self) -> None:
        """In the worker, first thing: keep this slot's receiving end, beat."""
        slots = self.slots
        for i, (_sender, receiver) in enumerate(slots.pairs):
            if i == self.slot:
                self.inbox = receiver
            else:
                receiver.close()  # (the master keeps its copy for the slot's next worker)
        if self.slot is not None:
            slots.beat(self.slot, os.getpid())

    def _beat(self, pid: int) -> None:
        if self.slot is not None:
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

    def _owner_elsewhere(self, client: socket.socket, wait: bool) -> int | None:
        """The slot of the live worker that owns the game this connection's request names, if
        that is another worker's (the request stays unread in the socket). ``wait``: for the
        request's first bytes (a blocking socket), else only what has arrived."""
        slots = self.slots
        if self.slot is None or slots.count < 2:
            return None
        try:
            head = client.recv(PEEK_BYTES, socket.MSG_PEEK | (0 if wait else socket.MSG_DONTWAIT))
        except OSError:
            return None
        owner = owner_of(head, slots.count)
        if owner is None or owner == self.slot or not slots.live(owner):
            return None
        return owner

    def _pass(self, client: socket.socket, addr: Any, owner: int) -> bool:
        """Send the open connection to ``owner``; False if its queue is full (serve it here)."""
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
        self._take_slot()

    def init_process(self) -> None:
        self._open_inbox()
        super().init_process()

    def notify(self) -> None:
        super().notify()
        self._beat(os.getpid())

    def run(self) -> None:
        for s in self.sockets:
            s.setblocking(False)
        if self.inbox is not None:
            self.wait_fds = [*self.wait_fds, self.inbox]  # type: ignore[has-type]
        timeout = self.timeout or 0.5
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
        owner = self._owner_elsewhere(client, wait=True)
        if owner is not None and self._pass(client, addr, owner):
            client.close()  # (this copy only: the owner holds the connection now)
            return
        self.handle(listener, client, addr)


class _Conn(TConn):
    """A gthread connection that may have been passed to another worker: then closing it here
    closes this process's copy only (a graceful close would shut the connection down)."""

    passed = False

    def close(self, graceful: bool = False) -> None:
        super().close(graceful=graceful and not self.passed)


class GameAffineThreadWorker(ThreadWorker, _Affinity):
    """gunicorn's gthread worker, passing each new connection for a game to the worker that
    owns it (a kept-alive connection stays where it is)."""

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self._take_slot()

    def init_process(self) -> None:
        self._open_inbox()
        super().init_process()

    def notify(self) -> None:
        super().notify()
        self._beat(os.getpid())

    def run(self) -> None:
        self._server_name = self.sockets[0].getsockname()
        if self.inbox is not None:
            self.poller.register(self.inbox, selectors.EVENT_READ, self._inbox_ready)
        try:
            super().run()
        finally:
            self._beat(0)

    def _inbox_ready(self, _fileobj: Any) -> None:
        server = self._server_name
        for client, addr in self._received():
            self.nr_conns += 1
            self.enqueue_req(_Conn(self.cfg, client, addr, server))

    def accept(self, listener: Any) -> None:
        try:
            client, addr = listener.accept()
        except OSError as e:
            if e.errno not in (errno.EAGAIN, errno.ECONNABORTED, errno.EWOULDBLOCK):
                raise
            return
        self.nr_conns += 1
        client.setblocking(True)
        self.enqueue_req(_Conn(self.cfg, client, addr, listener.getsockname()))

    def handle(self, conn: Any) -> Any:
        if not conn.initialized and not getattr(conn, "routed", False):
            conn.routed = True
            if conn.data_ready or conn.wait_for_data(DEFAULT_WORKER_DATA_TIMEOUT):
                conn.data_ready = True
                owner = self._owner_elsewhere(conn.sock, wait=False)
                if owner is not None and self._pass(conn.sock, conn.client, owner):
                    conn.passed = True
                    return False  # closed here (this copy only)
        return super().handle(conn)
