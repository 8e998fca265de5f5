"""Deterministic per-game randomness (no `random` module, no clock).

The game's generator is SplitMix64 seeded from sha256 of the game seed. Its whole state is one
64-bit integer kept in the game state, so a game can be saved, copied and resumed exactly. Chance
events (rolls, tile draws, the 2-player die, setup) record their outcomes; folding them advances
the generator the same way, so replay both reproduces and checks every outcome.
"""

from __future__ import annotations

import hashlib
from collections.abc import Sequence
from typing import TypeVar

T = TypeVar("T")

_MASK = (1 << 64) - 1


def seed_state(seed: str) -> int:
    """The initial generator state for a game seed (any string)."""
    return int.from_bytes(hashlib.sha256(seed.encode("utf-8")).digest()[:8], "big")


def seed_hash(seed: str) -> str:
    """The public commitment to a seed: hex sha256 of its UTF-8 bytes."""
    return hashlib.sha256(seed.encode("utf-8")).hexdigest()


def next_u64(state: int) -> tuple[int, int]:
    """One SplitMix64 step: (new state, 64-bit output)."""
    state = (state + 0x9E3779B97F4A7C15) & _MASK
    z = state
    z = ((z ^ (z >> 30)) * 0xBF58476D1CE4E5B9) & _MASK
    z = ((z ^ (z >> 27)) * 0x94D049BB133111EB) & _MASK
    return state, z ^ (z >> 31)


def below(state: int, n: int) -> tuple[int, int]:
    """A uniform integer in [0, n) (rejection sampling, so exactly uniform).

    The SplitMix64 step is inlined: this is the engine's hottest function.
    """
    limit = _MASK - (_MASK + 1) % n
    while True:
        state = (state + 0x9E3779B97F4A7C15) & _MASK
        z = ((state ^ (state >> 30)) * 0xBF58476D1CE4E5B9) & _MASK
        z = ((z ^ (z >> 27)) * 0x94D049BB133111EB) & _MASK
        z ^= z >> 31
        if z <= limit:
            return state, z % n


class Rng:
    """A small mutable wrapper used by bots and by code that draws several outcomes in a row."""

    __slots__ = ("state",)

    def __init__(self, state: int) -> None:
        self.state = state

    @classmethod
    def from_seed(cls, seed: str) -> Rng:
        return cls(seed_state(seed))

    def below(self, n: int) -> int:
        self.state, x = below(self.state, n)
        return x

    def choice(self, seq: Sequence[T]) -> T:
        return seq[self.below(len(seq))]

    def chance(self, p_num: int, p_den: int) -> bool:
        return self.below(p_den) < p_num

    def shuffle(self, items: list[T]) -> None:
        for i in range(len(items) - 1, 0, -1):
            j = self.below(i + 1)
            items[i], items[j] = items[j], items[i]
