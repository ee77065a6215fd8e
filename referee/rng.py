"""Seeded randomness that is the same on every Python and every platform.

`random.Random` is avoided on purpose: its algorithms for `shuffle` and
`randrange` are implementation details that have changed between Python
versions, and a change would silently rewrite the history of every game.

Construction (fixed forever; `tests/test_rng.py` pins its first outputs):
block `i` of the stream is `SHA-256(seed_utf8 || ":" || i as 8 bytes
big-endian)`, split into four 64-bit big-endian words used in order.
`below(n)` rejects words at or above the largest multiple of `n` that fits
in 64 bits, so every result is exactly uniform. `shuffle` is Fisher-Yates
from the last position down, swapping position `i` with `below(i + 1)`.

Commit-reveal: a game publishes `commitment(seed)` when it is created and
the seed itself when it is over, so anyone can check the shuffle was fixed
in advance.
"""

from __future__ import annotations

import hashlib
import secrets
import struct
from collections.abc import Sequence
from typing import TypeVar

T = TypeVar("T")

_WORD = 1 << 64
# A block's digest as its four words, big-endian.
_BLOCK_WORDS = struct.Struct(">4Q")


def new_seed() -> str:
    """A fresh secret seed: 32 random bytes in hex."""
    return secrets.token_hex(32)


def commitment(seed: str) -> str:
    """The public SHA-256 (hex) of a seed, published before the game starts."""
    return hashlib.sha256(seed.encode("utf-8")).hexdigest()


class Rng:
    """A deterministic stream of uniform draws from a seed string."""

    __slots__ = ("_block", "_key", "_words")

    def __init__(self, seed: str) -> None:
        self._key = seed.encode("utf-8") + b":"
        self._block = 0
        self._words: list[int] = []

    def word(self) -> int:
        """The next uniform 64-bit integer."""
        if not self._words:
            self._next_block()
        return self._words.pop()

    def _next_block(self) -> None:
        digest = hashlib.sha256(self._key + self._block.to_bytes(8, "big")).digest()
        self._block += 1
        # Reversed so that pop() hands the words out in digest order.
        self._words = list(reversed(_BLOCK_WORDS.unpack(digest)))

    def below(self, n: int) -> int:
        """A uniform integer in `[0, n)`, for `1 <= n <= 2**64`."""
        if not 1 <= n <= _WORD:
            raise ValueError(f"below() needs 1 <= n <= 2**64, got {n}")
        limit = _WORD - _WORD % n
        # `word` written out: playouts draw here more than anywhere else.
        words = self._words
        while True:
            if not words:
                self._next_block()
                words = self._words
            value = words.pop()
            if value < limit:
                return value % n

    def choice(self, items: Sequence[T]) -> T:
        """A uniform element of a non-empty sequence."""
        return items[self.below(len(items))]

    def shuffle(self, items: list[T]) -> None:
        """Shuffle a list in place (Fisher-Yates, last position first)."""
        for i in range(len(items) - 1, 0, -1):
            j = self.below(i + 1)
            items[i], items[j] = items[j], items[i]

    def shuffled(self, items: Sequence[T]) -> list[T]:
        """A shuffled copy."""
        copy = list(items)
        self.shuffle(copy)
        return copy


_MASK = _WORD - 1


class QuickRng(Rng):
    """A cheap deterministic stream for bots' searches, seeded from an `Rng`.

    A search draws millions of times per move, and `Rng` spends a SHA-256
    every four draws: this SplitMix64 stream costs a few integer operations
    a draw. It decides no game's shuffle (only `Rng` does, forever), only
    which positions a bot looks at, and it is as reproducible: the same
    seed word gives the same stream on every Python and platform.
    """

    __slots__ = ("_state",)

    def __init__(self, seed: Rng) -> None:
        super().__init__("")
        self._state = seed.word()

    def word(self) -> int:
        self._state = state = (self._state + 0x9E3779B97F4A7C15) & _MASK
        mixed = ((state ^ (state >> 30)) * 0xBF58476D1CE4E5B9) & _MASK
        mixed = ((mixed ^ (mixed >> 27)) * 0x94D049BB133111EB) & _MASK
        return mixed ^ (mixed >> 31)

    def below(self, n: int) -> int:
        # `Rng.below` reads its digest's words directly; this stream has none.
        if not 1 <= n <= _WORD:
            raise ValueError(f"below() needs 1 <= n <= 2**64, got {n}")
        limit = _WORD - _WORD % n
        while True:
            value = self.word()
            if value < limit:
                return value % n
