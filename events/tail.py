"""``HostTail``: the newest envelopes of each game, shared by the processes of one host.

Several processes serve the same games (gunicorn's workers, the RQ workers), each with its own
cache of the games it saw (``events.games.Games``). When a command reaches a process whose
cached game is behind - another process on the host served the game's previous commands - that
process has to fetch the missing envelopes from the store: a round trip, about half of all
commands with two gunicorn workers. The host tail lets it read them from memory instead.

After every append it stored, a process writes the game's newest envelopes (the JSON the store
holds) into a slot of a memory-mapped file that every process of the host maps; a process whose
cache is behind reads the envelopes it lacks from there. Nothing in the tail is trusted:

* every envelope in a slot carries a CRC-32, and so does the slot's header, which is written
  after the envelopes (and spoiled before envelopes a reader may be reading are overwritten); a
  reader checks both and that the header did not change while it read, so a slot another
  process rewrites meanwhile (no lock is taken) is refused, not half-read;
* the slot names the store (``store_key``: a digest of the store's address and prefix) and the
  game, and the envelopes it holds must continue the reader's cached head (each ``prev_hash`` is
  the hash before it), else the reader asks the store as before;
* the append itself checks the version and the head hash the command was decided on, so a
  command decided on envelopes the store does not hold (the store lost its tail in a failover,
  or another host appended meanwhile) is refused and decided again after a real catch-up.

A slot per game id (CRC-32 of the store key and game id, modulo the slot count): two games in
one slot evict each other, which only costs a round trip. A slot keeps the newest envelopes that
fit (``slot_size``), so a process far behind reads from the store.

The file (``default_path()``: ``/dev/shm/rfg-tail-<uid>``, tmpfs, so memory only; created
0600, refused if another user owns it or others may read it) takes ``slots * slot_size`` bytes
(16 MiB by default), allocated when it is opened: a full tmpfs refuses the tail then (the
processes read the store as before) rather than failing a write later. The tail holds what
the store holds, secrets included (seat-private events), so it is as private as the store's own
credentials: a process of the same user could write envelopes into it as it could into the
store. Off unless ``RFG_HOST_TAIL`` is ``on`` (the default file) or a path.
"""

from __future__ import annotations

import hashlib
import logging
import mmap
import os
import stat
import struct
import threading
import zlib
from collections.abc import Sequence

log = logging.getLogger(__name__)

#: a slot's header: CRC-32 of the rest of the header, first seq, last seq, end of its records,
#: store key (16 bytes), game id length, game id (up to 128 bytes, ``events.store.check_game_id``)
_HEADER = struct.Struct("<IIII16sB128s")
_HEADER_SIZE = 176  # _HEADER.size (161), rounded up
#: a record: the envelope JSON's length and CRC-32, then the JSON
_RECORD = struct.Struct("<II")
SLOTS = 1024
SLOT_SIZE = 16384


def default_path() -> str | None:
    """``/dev/shm/rfg-tail-<uid>`` where ``/dev/shm`` is a writable directory, else None."""
    base = "/dev/shm"
    if not os.path.isdir(base) or not os.access(base, os.W_OK):
        return None
    return os.path.join(base, f"rfg-tail-{os.getuid()}")


def store_key(*parts: object) -> bytes:
    """A 16-byte digest naming a store (its address, database and key prefix)."""
    return hashlib.blake2b("|".join(map(str, parts)).encode("utf-8"), digest_size=16).digest()


class HostTail:
    """The memory-mapped slots (see the module docstring). ``put`` after an append; ``get`` when
    a cached game is behind. A bad or changing slot is never an error: ``get`` answers None.

    A slot is a header and the records of one game's newest envelopes, one after the other.
    ``put`` adds a batch after the slot's records when it continues them (moving the newest
    records to the front first when the slot is full), else starts the slot afresh; the header
    is written last, its CRC last of all, and is spoiled first when records a reader might be
    reading are overwritten. ``get`` checks the header's CRC, each record's CRC, and that the
    header did not change while it read."""

    def __init__(self, path: str, slots: int = SLOTS, slot_size: int = SLOT_SIZE) -> None:
        if slots < 1 or slot_size < _HEADER_SIZE + 1024:
            raise ValueError(f"a host tail needs slots >= 1 and slot_size >= {_HEADER_SIZE + 1024}")
        self.path = path
        self.slots = slots
        self.slot_size = slot_size
        self._capacity = slot_size - _HEADER_SIZE
        self._lock = threading.Lock()
        self._pid = -1
        self._map: mmap.mmap | None = None

    # -- the mapping (per process: reopened after a fork) ---------------------------------------
    def _mapped(self) -> mmap.mmap:
        mm = self._map
        if mm is not None and self._pid == os.getpid():
            return mm
        with self._lock:
            if self._map is None or self._pid != os.getpid():
                self._map = self._open()
                self._pid = os.getpid()
            return self._map

    def _open(self) -> mmap.mmap:
        size = self.slots * self.slot_size
        flags = os.O_RDWR | os.O_CREAT | getattr(os, "O_NOFOLLOW", 0) | getattr(os, "O_CLOEXEC", 0)
        fd = os.open(self.path, flags, 0o600)
        try:
            info = os.fstat(fd)
            if not stat.S_ISREG(info.st_mode) or info.st_uid != os.getuid():
                raise PermissionError(f"{self.path} is not a file of this user")
            if info.st_mode & 0o077:
                raise PermissionError(f"{self.path} may be read by other users (chmod 600 it)")
            if info.st_size < size:
                os.ftruncate(fd, size)
            if hasattr(os, "posix_fallocate"):
                # the memory now, or an error now: a write to a page tmpfs cannot give later
                # would kill the process (SIGBUS) instead of raising
                os.posix_fallocate(fd, 0, size)
            return mmap.mmap(fd, size, mmap.MAP_SHARED, mmap.PROT_READ | mmap.PROT_WRITE)
        finally:
            os.close(fd)

    def _slot(self, key: bytes, game_id: bytes) -> int:
        return (zlib.crc32(game_id, zlib.crc32(key)) % self.slots) * self.slot_size

    # -- writing --------------------------------------------------------------------------------
    def put(self, key: bytes, game_id: str, first_seq: int, texts: Sequence[str]) -> None:
        """Record that the game's envelopes ``first_seq ...`` (their JSON, in order) were just
        stored."""
        if not texts:
            return
        gid = game_id.encode("utf-8")
        mm = self._mapped()
        at = self._slot(key, gid)
        data = at + _HEADER_SIZE
        records = []
        for text in texts:
            raw = text.encode("utf-8")
            records.append(_RECORD.pack(len(raw), zlib.crc32(raw)) + raw)
        new = b"".join(records)
        last_seq = first_seq + len(texts) - 1
        head = mm[at : at + _HEADER.size]
        crc, first, last, end, k, n, g = _HEADER.unpack(head)
        continues = (
            last == first_seq - 1
            and k == key
            and g[:n] == gid
            and end <= self._capacity
            and crc == zlib.crc32(head[4:])
        )
        if continues and end + len(new) <= self._capacity:
            mm[data + end : data + end + len(new)] = new  # past the records readers may read
            self._header(mm, at, first, last_seq, end + len(new), key, gid)
            return
        kept = self._newest(mm, data, end, self._capacity // 2) if continues else []
        skipped = (last - first + 1 - len(kept)) if continues else 0
        while new and len(new) > self._capacity:  # a batch larger than a slot: its newest
            new = new[_RECORD.size + _RECORD.unpack_from(new)[0] :]
            first_seq += 1
        if not new:
            return
        struct.pack_into("<I", mm, at, ~crc & 0xFFFFFFFF)  # spoiled: records are overwritten
        moved = b"".join(kept)
        mm[data : data + len(moved) + len(new)] = moved + new
        start = first + skipped if continues else first_seq
        self._header(mm, at, start, last_seq, len(moved) + len(new), key, gid)

    def _newest(self, mm: mmap.mmap, data: int, end: int, room: int) -> list[bytes]:
        """The newest records of a slot that fit in ``room`` bytes, oldest first."""
        out: list[bytes] = []
        offset = 0
        while offset < end:
            size = _RECORD.size + _RECORD.unpack_from(mm, data + offset)[0]
            out.append(mm[data + offset : data + offset + size])
            offset += size
        total = sum(map(len, out))
        while out and total > room:
            total -= len(out.pop(0))
        return out

    @staticmethod
    def _header(
        mm: mmap.mmap, at: int, first: int, last: int, end: int, key: bytes, gid: bytes
    ) -> None:
        body = _HEADER.pack(0, first, last, end, key, len(gid), gid)[4:]
        mm[at + 4 : at + _HEADER.size] = body
        struct.pack_into("<I", mm, at, zlib.crc32(body))

    # -- reading --------------------------------------------------------------------------------
    def get(self, key: bytes, game_id: str, after: int, upto: int) -> list[bytes] | None:
        """The JSON of the game's envelopes ``after + 1 ...`` (at least up to ``upto``, and as
        many more as the slot holds), or None when the slot does not hold them all (another
        game, too old, too new, or being rewritten)."""
        gid = game_id.encode("utf-8")
        mm = self._mapped()
        at = self._slot(key, gid)
        head = mm[at : at + _HEADER.size]
        crc, first, last, end, k, n, g = _HEADER.unpack(head)
        if k != key or g[:n] != gid or not first <= after + 1 <= last or last < upto:
            return None
        if end > self._capacity or crc != zlib.crc32(head[4:]):
            return None
        data = at + _HEADER_SIZE
        offset, limit = 0, end
        out: list[bytes] = []
        for seq in range(first, last + 1):
            if offset + _RECORD.size > limit:
                return None
            size, record_crc = _RECORD.unpack_from(mm, data + offset)
            offset += _RECORD.size
            if seq > after:
                if offset + size > limit:
                    return None
                text = mm[data + offset : data + offset + size]
                if zlib.crc32(text) != record_crc:
                    return None
                out.append(text)
            offset += size
        if mm[at : at + _HEADER.size] != head:  # rewritten meanwhile
            return None
        return out


class StoreTail:
    """A ``HostTail`` as one store sees it (its slots named by ``store_key``)."""

    def __init__(self, tail: HostTail, key: bytes) -> None:
        self.tail = tail
        self.key = key

    def put(self, game_id: str, first_seq: int, texts: Sequence[str]) -> None:
        self.tail.put(self.key, game_id, first_seq, texts)

    def get(self, game_id: str, after: int, upto: int) -> list[bytes] | None:
        return self.tail.get(self.key, game_id, after, upto)


_OPEN: dict[str, HostTail] = {}


def open_host_tail(setting: str | None) -> HostTail | None:
    """The host tail ``RFG_HOST_TAIL`` asks for: unset or ``off`` none (the default), ``on`` the
    default file (``default_path()``), else that path; None (logged) when it cannot be opened."""
    if not setting or setting.strip().lower() in ("off", "0", "false", "no"):
        return None
    on = setting.strip().lower() in ("on", "1", "true", "yes")
    path = default_path() if on else setting
    if path is None:
        return None
    tail = _OPEN.get(path) or HostTail(path)
    try:
        tail._mapped()
    except (OSError, ValueError) as exc:
        log.warning(
            "host tail %s unavailable (%s); cached games catch up from the store", path, exc
        )
        return None
    _OPEN[path] = tail  # one mapping per file and process, whatever the stores
    return tail


def store_tail(client: object, prefix: str, setting: str | None = None) -> StoreTail | None:
    """The host tail for a store on ``client`` under ``prefix``: ``setting`` (``on``, a path or
    ``off``), else ``$RFG_HOST_TAIL`` (unset: none). None for anything but a plain ``redis.Redis``
    (a fake server lives in one process; a cluster client names no one server)."""
    import redis

    if type(client) is not redis.Redis:
        return None
    if setting is None:
        from events import environment

        setting = environment.value("RFG_HOST_TAIL")
    tail = open_host_tail(setting)
    if tail is None:
        return None
    kwargs = client.connection_pool.connection_kwargs
    where = (kwargs.get("path") or f"{kwargs.get('host')}:{kwargs.get('port')}", kwargs.get("db"))
    return StoreTail(tail, store_key(*where, prefix))
