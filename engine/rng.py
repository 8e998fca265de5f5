"""Deterministic per-game randomness (no `random` module, no clock), and the seed's commitment.

Two generators, chosen by the rules version a game is played under (``GameCreated.rules``):

* **keyed** (rules version 3 and later): a counter-based generator. The key is
  ``HMAC-SHA256(seed, "rfg/generator")``; draw *i* is the first 8 bytes of
  ``BLAKE2b(key=key, message=i as 8 big-endian bytes)``, and integers below *n* are sampled by
  rejection, so exactly uniform. Without the seed nothing about any draw can be computed, and a
  revealed draw says nothing about another one. The public commitment is
  ``sha256("rfg/commit" || 0x00 || seed)``: another label, so it reveals nothing of the key.
  From rules version 4 it binds the game as well, ``sha256("rfg/commit" || 0x00 || seed || 0x00
  || game)`` (``game``: the service's game id), so games dealt one seed (a ladder's duplicate
  set) publish unrelated commitments.
* **SplitMix64** (rules versions 1 and 2): the state is the first 8 bytes of sha256(seed), the
  same bytes that were published as ``seed_sha256``. Kept only so that old logs still replay;
  anybody who read the commitment could predict every draw.

Either way the generator's whole state is one integer kept in the game state, so a game can be
saved, copied and resumed exactly: a SplitMix64 state is below 2**64; a keyed state is
``KEYED_TAG | key << 64 | counter`` (256-bit key, 64-bit counter), always at least 2**320.
Chance events (rolls, tile draws, the 2-player die, setup) record their outcomes; folding them
advances the generator the same way, so replay both reproduces and checks every outcome.

Bots draw from generators keyed by ``bot_key(seed, label)`` (another label of the same seed), so
their choices are as unpredictable as the dice until the seed is revealed.
"""

from __future__ import annotations

import hashlib
import hmac
import struct
from collections.abc import Sequence
from typing import Any, TypeVar

T = TypeVar("T")

_MASK = (1 << 64) - 1
_KEY_MASK = (1 << 256) - 1
KEYED_TAG = 1 << 320
"""Marks a keyed generator state (every SplitMix64 state is below 2**64)."""

KEYED_SINCE_RULES = 3
"""The first rules version whose games use the keyed generator and the labelled commitment."""

BOUND_SINCE_RULES = 4
"""The first rules version whose commitment binds the game (``GameCreated.game``) to the seed."""

_blake2b = hashlib.blake2b


def _prf(seed: str, label: bytes) -> bytes:
    """A 32-byte secret derived from the seed under ``label`` (HMAC-SHA256 keyed by the seed)."""
    return hmac.new(seed.encode("utf-8"), label, hashlib.sha256).digest()


def keyed_state(key: bytes) -> int:
    """The start state of a keyed generator (counter 0)."""
    if len(key) != 32:
        raise ValueError("a generator key is 32 bytes")
    return KEYED_TAG | int.from_bytes(key, "big") << 64


def generator_key(seed: str) -> bytes:
    return _prf(seed, b"rfg/generator")


def bot_key(seed: str, label: str) -> bytes:
    """The key of a bot's generator for one decision (``label`` names seat and decision)."""
    return _prf(seed, b"rfg/bot\x00" + label.encode("utf-8"))


def start_state(seed: str, rules: int) -> int:
    """The generator state a game of the given rules version starts from."""
    if rules >= KEYED_SINCE_RULES:
        return keyed_state(generator_key(seed))
    return seed_state(seed)


def seed_state(seed: str) -> int:
    """The SplitMix64 start state of rules versions 1-2 (the first 8 bytes of sha256(seed))."""
    return int.from_bytes(hashlib.sha256(seed.encode("utf-8")).digest()[:8], "big")


def seed_hash(seed: str) -> str:
    """The commitment of rules versions 1-2: hex sha256 of the seed's UTF-8 bytes."""
    return hashlib.sha256(seed.encode("utf-8")).hexdigest()


def commitment(seed: str, rules: int, game: str = "") -> str:
    """The public commitment to a game's seed under its rules version (hex); from rules version
    4 over the seed and ``game``, the name the game is published under (no NUL in it)."""
    if rules >= BOUND_SINCE_RULES:
        message = b"rfg/commit\x00" + seed.encode("utf-8") + b"\x00" + game.encode("utf-8")
        return hashlib.sha256(message).hexdigest()
    if rules >= KEYED_SINCE_RULES:
        return hashlib.sha256(b"rfg/commit\x00" + seed.encode("utf-8")).hexdigest()
    return seed_hash(seed)


#: BLAKE2b already keyed, per generator key (``state >> 64``, tag bit included): copying one is
#: cheaper than keying a new hash for every draw; the digests are the same
_KEYED: dict[int, Any] = {}
_KEYED_LIMIT = 1024

#: the rejection limit of ``below`` for each small n (the largest accepted 64-bit output)
_LIMITS = [0] + [_MASK - (_MASK + 1) % n for n in range(1, 1024)]
_U64 = struct.Struct(">Q")
_pack = _U64.pack
_unpack = _U64.unpack

#: keyed draws made recently: state -> its 64-bit output. Every chance outcome of a game is drawn
#: twice, when a command decides it and when its event is folded (and checked); the fold takes the
#: draw from here instead of hashing again. A draw depends on the state alone, so this changes no
#: outcome; a draw never asked for again leaves when the table fills up (replay, pure ``decide``).
_DRAWN: dict[int, int] = {}
_DRAWN_LIMIT = 4096


def _keyed_hash(tagged_key: int) -> Any:
    if len(_KEYED) >= _KEYED_LIMIT:
        _KEYED.clear()
    h = _KEYED[tagged_key] = _blake2b(
        digest_size=8, key=(tagged_key & _KEY_MASK).to_bytes(32, "big")
    )
    return h


def _limit(n: int) -> int:
    return _MASK - (_MASK + 1) % n


def below(state: int, n: int) -> tuple[int, int]:
    """(new state, a uniform integer in [0, n)), by rejection sampling, so exactly uniform.

    The SplitMix64 step is inlined: this is the engine's hottest function.
    """
    limit = _LIMITS[n] if 0 < n < 1024 else _limit(n)
    if state >= KEYED_TAG:
        while True:
            z = _DRAWN.pop(state, None)
            if z is None:
                tagged_key = state >> 64
                keyed = _KEYED.get(tagged_key)
                if keyed is None:
                    keyed = _keyed_hash(tagged_key)
                h = keyed.copy()
                h.update(_pack(state & _MASK))
                z = _unpack(h.digest())[0]
                if len(_DRAWN) >= _DRAWN_LIMIT:
                    _DRAWN.clear()
                _DRAWN[state] = z
            state += 1
            if z <= limit:
                return state, z % n
    while True:
        state = (state + 0x9E3779B97F4A7C15) & _MASK
        z = ((state ^ (state >> 30)) * 0xBF58476D1CE4E5B9) & _MASK
        z = ((z ^ (z >> 27)) * 0x94D049BB133111EB) & _MASK
        z ^= z >> 31
        if z <= limit:
            return state, z % n


class Rng:
    """A small mutable wrapper used by bots and by code that draws several outcomes in a row.

    A keyed generator keeps its key's hash and its counter apart (``state`` puts them together
    again), so a draw does not take the 320-bit state apart; the draws are the same as ``below``'s.
    """

    __slots__ = ("_base", "_counter", "_hash")

    def __init__(self, state: int) -> None:
        self._base = 0
        self._counter = 0
        self._hash: Any = None
        self.state = state

    @property
    def state(self) -> int:
        """The generator's whole state, as ``below`` takes it."""
        return self._base + self._counter

    @state.setter
    def state(self, state: int) -> None:
        if state >= KEYED_TAG:
            self._base = state & ~_MASK
            self._counter = state & _MASK
            tagged_key = state >> 64
            self._hash = _KEYED.get(tagged_key) or _keyed_hash(tagged_key)
        else:
            self._base = state
            self._counter = 0
            self._hash = None

    @classmethod
    def from_seed(cls, seed: str) -> Rng:
        """A SplitMix64 generator: for tools and tests, never for anything secret."""
        return cls(seed_state(seed))

    @classmethod
    def keyed(cls, key: bytes) -> Rng:
        return cls(keyed_state(key))

    @classmethod
    def for_bot(cls, seed: str, label: str) -> Rng:
        """A bot's generator: secret until the game's seed is revealed, reproducible after."""
        return cls(keyed_state(bot_key(seed, label)))

    def below(self, n: int) -> int:
        keyed = self._hash
        if keyed is None:
            self._base, x = below(self._base, n)
            return x
        limit = _LIMITS[n] if 0 < n < 1024 else _limit(n)
        c = self._counter
        while c <= _MASK:
            h = keyed.copy()
            h.update(_pack(c))
            c += 1
            z = _unpack(h.digest())[0]
            if z <= limit:
                self._counter = c
                return z % n
        self.state = self._base + c  # the counter ran over into the key (never, in practice)
        return self.below(n)

    def choice(self, seq: Sequence[T]) -> T:
        return seq[self.below(len(seq))]

    def chance(self, p_num: int, p_den: int) -> bool:
        return self.below(p_den) < p_num

    def shuffle(self, items: list[T]) -> None:
        below = self.below
        for i in range(len(items) - 1, 0, -1):
            j = below(i + 1)
            items[i], items[j] = items[j], items[i]
