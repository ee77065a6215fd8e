"""Seeded randomness that is the same on every Python and every platform.

`random.Random` is avoided on purpose: its algorithms for `shuffle` and
`randrange` are implementation details that have changed between Python
versions, and a change would silently rewrite the history of every game.

Construction (fixed forever; `tests/games/test_rng.py` pins its first outputs):
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
import operator
import secrets
import struct
from collections.abc import Sequence
from typing import TypeVar

T = TypeVar("T")

_WORD = 1 << 64
_MASK = _WORD - 1
# A block's counter, 8 bytes big-endian.
_COUNTER = struct.Struct(">Q")
# A digest read backwards as four little-endian words gives its big-endian
# words, last first: pop() then hands them out in digest order.
_WORDS_LAST_FIRST = struct.Struct("<4Q")
# `below(n)` accepts words under the largest multiple of `n` that fits in 64
# bits; worked out once for the small bounds that draws mostly use.
_TABLED = 1024
_LIMITS = tuple(_WORD - _WORD % n if n else 0 for n in range(_TABLED))
# Each of those limits is above this: no bound up to `_TABLED` rejects a word under it.
_NEVER_REJECTED = _WORD - _TABLED
# The shortest shuffle (its last position) whose draws are made all at once.
_BATCHED = 8


def _limit(n: int) -> int:
    """The rejection limit of `below(n)`; `ValueError` outside `1 <= n <= 2**64`."""
    if not 1 <= n <= _WORD:
        raise ValueError(f"below() needs 1 <= n <= 2**64, got {n}")
    return _WORD - _WORD % n


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
        words = self._words or self._next_block()
        return words.pop()

    def _next_block(self) -> list[int]:
        """Hash the next block; its words, last first (pop() takes them in order)."""
        block = self._block
        self._block = block + 1
        digest = hashlib.sha256(self._key + _COUNTER.pack(block)).digest()
        self._words = words = list(_WORDS_LAST_FIRST.unpack(digest[::-1]))
        return words

    def below(self, n: int) -> int:
        """A uniform integer in `[0, n)`, for `1 <= n <= 2**64`."""
        if 0 < n < _TABLED:
            # The small bounds playouts draw, most often: `word` written out, and a word
            # under every one of their limits taken at once.
            value = (self._words or self._next_block()).pop()
            if value < _NEVER_REJECTED or value < _LIMITS[n]:
                return value % n
            # Rejected: the draw goes on from the next word, as below.
        limit = _LIMITS[n] if 0 < n < _TABLED else _limit(n)
        words = self._words
        while True:
            if not words:
                words = self._next_block()
            value = words.pop()
            if value < limit:
                return value % n

    def choice(self, items: Sequence[T]) -> T:
        """A uniform element of a non-empty sequence."""
        return items[self.below(len(items))]

    def shuffle(self, items: list[T]) -> None:
        """Shuffle a list in place (Fisher-Yates, last position first)."""
        last = len(items) - 1
        # A short list is shuffled a `below` a position: drawing all at once costs more
        # than it saves under some ten positions.
        if not _BATCHED <= last < _TABLED:
            self._shuffle_by_draws(items)
            return
        # The `below(i + 1)` of every position i at once: where no word is near the
        # top of the range, no draw rejects one, and each is its word modulo the bound.
        words = self._ahead(last)
        if max(words) >= _NEVER_REJECTED:
            self._shuffle_by_draws(items)
            return
        del self._words[-last:]
        # The bounds worked out by `map` in C: the loop is left with the swaps alone.
        draws = map(operator.mod, words, range(last + 1, 1, -1))
        for i, j in zip(range(last, 0, -1), draws, strict=True):
            items[i], items[j] = items[j], items[i]

    def _shuffle_by_draws(self, items: list[T]) -> None:
        """`shuffle` as defined: a `below` a position."""
        for i in range(len(items) - 1, 0, -1):
            j = self.below(i + 1)
            items[i], items[j] = items[j], items[i]

    def _ahead(self, count: int) -> list[int]:
        """The next `count` words of the stream, in order, left to be drawn."""
        words = self._words
        missing = count - len(words)
        if missing > 0:
            block = self._block
            blocks = (missing + 3) // 4
            self._block = block + blocks
            key, counter = self._key, _COUNTER.pack
            digests = b"".join(
                [hashlib.sha256(key + counter(n)).digest() for n in range(block, block + blocks)]
            )
            # Read backwards, as in `_next_block`: all the new words, last first.
            self._words = words = [*struct.unpack(f"<{4 * blocks}Q", digests[::-1]), *words]
        return words[: -count - 1 : -1]

    def shuffled(self, items: Sequence[T]) -> list[T]:
        """A shuffled copy."""
        copy = list(items)
        self.shuffle(copy)
        return copy


# SplitMix64's constants.
_GOLDEN_GAMMA = 0x9E3779B97F4A7C15
_MIX_1 = 0xBF58476D1CE4E5B9
_MIX_2 = 0x94D049BB133111EB


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
        self._state = state = (self._state + _GOLDEN_GAMMA) & _MASK
        mixed = ((state ^ (state >> 30)) * _MIX_1) & _MASK
        mixed = ((mixed ^ (mixed >> 27)) * _MIX_2) & _MASK
        return mixed ^ (mixed >> 31)

    def below(self, n: int) -> int:
        limit = _LIMITS[n] if 0 < n < _TABLED else _limit(n)
        # `word` written out, for the searches' playouts: a call costs as much
        # as the mixing.
        state = self._state
        while True:
            state = (state + _GOLDEN_GAMMA) & _MASK
            mixed = ((state ^ (state >> 30)) * _MIX_1) & _MASK
            mixed = ((mixed ^ (mixed >> 27)) * _MIX_2) & _MASK
            value = mixed ^ (mixed >> 31)
            if value < limit:
                self._state = state
                return value % n

    def shuffle(self, items: list[T]) -> None:
        # Its own `below` a position: the words come from the mixing, not from blocks.
        self._shuffle_by_draws(items)
