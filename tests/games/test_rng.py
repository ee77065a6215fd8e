"""The seeded stream is part of every game's history: pin it forever."""

import hashlib
from collections import Counter

import pytest
from hypothesis import given
from hypothesis import strategies as st

from referee.rng import Rng, commitment, new_seed


def reference_words(seed: str, count: int) -> list[int]:
    """The documented construction, written out independently of Rng."""
    words: list[int] = []
    block = 0
    while len(words) < count:
        digest = hashlib.sha256(seed.encode() + b":" + block.to_bytes(8, "big")).digest()
        words += [int.from_bytes(digest[i : i + 8], "big") for i in range(0, 32, 8)]
        block += 1
    return words[:count]


def test_first_words_are_pinned() -> None:
    rng = Rng("referee")
    assert [rng.word() for _ in range(5)] == [
        13497869300109921368,
        13552650487632224702,
        1163954042099868030,
        12279449216702810396,
        1367591478823899623,
    ]


@given(st.text(max_size=40), st.integers(1, 20))
def test_stream_follows_the_documented_construction(seed: str, count: int) -> None:
    rng = Rng(seed)
    assert [rng.word() for _ in range(count)] == reference_words(seed, count)


def test_below_and_shuffle_are_pinned() -> None:
    rng = Rng("referee")
    assert [rng.below(6) for _ in range(12)] == [2, 2, 0, 2, 5, 1, 4, 4, 2, 5, 5, 4]
    assert Rng("referee").shuffled(range(10)) == [3, 0, 4, 7, 1, 5, 9, 6, 2, 8]


def test_below_rejects_the_biased_tail() -> None:
    # n = 3 * 2**62: 2**64 is not a multiple, so words >= 3 * 2**62 must be redrawn.
    n = 3 << 62
    seed = next(s for s in map(str, range(1000)) if Rng(s).word() >= n)
    rng, words = Rng(seed), reference_words(seed, 10)
    expected = next(w for w in words if w < n) % n
    assert rng.below(n) == expected


@given(st.text(max_size=20), st.lists(st.integers(), max_size=30))
def test_shuffle_is_a_permutation_and_repeatable(seed: str, items: list[int]) -> None:
    once = Rng(seed).shuffled(items)
    assert sorted(once) == sorted(items)
    assert Rng(seed).shuffled(items) == once


def test_shuffle_is_roughly_uniform() -> None:
    counts = Counter(tuple(Rng(str(i)).shuffled("abc")) for i in range(6000))
    assert len(counts) == 6
    assert all(800 < c < 1200 for c in counts.values())


def test_below_rejects_bad_bounds() -> None:
    with pytest.raises(ValueError):
        Rng("x").below(0)
    with pytest.raises(ValueError):
        Rng("x").below((1 << 64) + 1)


def test_commitment_is_sha256_of_the_seed() -> None:
    seed = new_seed()
    assert len(seed) == 64 and seed != new_seed()
    assert commitment(seed) == hashlib.sha256(seed.encode()).hexdigest()


def test_the_quick_stream_draws_from_its_own_words() -> None:
    """`QuickRng` is SplitMix64 seeded by one word of an `Rng`: every draw,
    `below` included, comes from that stream, not from SHA-256 blocks."""
    from referee.rng import QuickRng

    quick = QuickRng(Rng("quick"))
    again = QuickRng(Rng("quick"))
    words = [quick.word() for _ in range(3)]
    assert words == [again.word() for _ in range(3)]
    assert len(set(words)) == 3
    # below(2**64) is the next word itself (no rejection at that bound).
    follow = QuickRng(Rng("quick"))
    for _ in range(3):
        follow.word()
    assert quick.below(2**64) == follow.word()
    # Its shuffle draws a `below` a position from that stream too.
    draws = QuickRng(Rng("quick"))
    expected = list(range(5))
    for i in range(4, 0, -1):
        j = draws.below(i + 1)
        expected[i], expected[j] = expected[j], expected[i]
    assert QuickRng(Rng("quick")).shuffled(range(5)) == expected


def reference_shuffled(words: list[int], items: list[int]) -> list[int]:
    """The documented shuffle over a stream of words, rejections included."""
    stream = iter(words)
    items = list(items)
    for i in range(len(items) - 1, 0, -1):
        n = i + 1
        limit = (1 << 64) - (1 << 64) % n
        word = next(w for w in stream if w < limit)
        j = word % n
        items[i], items[j] = items[j], items[i]
    return items


@given(st.text(max_size=20), st.integers(0, 9), st.integers(0, 120))
def test_shuffle_follows_the_documented_construction(seed: str, before: int, size: int) -> None:
    rng = Rng(seed)
    for _ in range(before):
        rng.word()
    words = reference_words(seed, before + size + 1)
    assert rng.shuffled(range(size)) == reference_shuffled(words[before:], list(range(size)))
    assert rng.word() == words[before + max(size - 1, 0)]


def test_shuffle_redraws_a_rejected_word() -> None:
    # No seed is known to give a word the small bounds reject (one in 2**54 does), so the
    # stream is written in: 3 rejects 2**64 - 1, the top of its biased tail; 2 takes
    # 2**64 - 2.
    rng = Rng("tail")
    words = [(1 << 64) - 1, 5, (1 << 64) - 2, 11]
    rng._words = words[::-1]
    assert rng.shuffled(range(3)) == reference_shuffled(words, [0, 1, 2]) == [1, 0, 2]
    assert rng.word() == 11


def test_below_redraws_a_rejected_word_of_a_small_bound() -> None:
    # As for the shuffle, the stream is written in: 3 rejects 2**64 - 1 and takes
    # 2**64 - 2, whose remainder is 2.
    rng = Rng("tail")
    rng._words = [7, (1 << 64) - 2, 5, (1 << 64) - 1]
    assert [rng.below(3), rng.below(3), rng.below(3)] == [5 % 3, 2, 7 % 3]
