"""Numbers, times and lists in the words a mail's reader reads.

Relative times are measured from the mail's own Date, not from the
moment it is built, so building a row's message again gives the same text.
"""

from __future__ import annotations

import textwrap
from collections.abc import Sequence
from datetime import datetime
from itertools import pairwise

_UNITS = (("day", 86_400), ("hour", 3_600), ("minute", 60), ("second", 1))


def counted(number: int, word: str, plural: str | None = None) -> str:
    """`1 move`, `2 moves`."""
    return f"{number} {word if number == 1 else plural or word + 's'}"


def duration(seconds: float) -> str:
    """`2 minutes`, `3 days`, `1 day and 6 hours`: the two largest units, the second
    rounded to the nearest (23 hours and 59.9 minutes read `1 day`, not `23 hours and
    59 minutes`: a mail says how long, not to the second)."""
    left = _rounded(max(round(seconds), 0))
    parts: list[str] = []
    for word, size in _UNITS:
        if left >= size or (not parts and size == 1):
            amount, left = divmod(left, size)
            parts.append(counted(amount, word))
        if len(parts) == 2 or (parts and left == 0):
            break
    return " and ".join(parts)


def _rounded(seconds: int) -> int:
    """`seconds` to the nearest whole of the unit below its largest, carried upwards."""
    for (_word, size), (_smaller, step) in pairwise(_UNITS):
        if seconds >= size:
            return round(seconds / step) * step
    return seconds


def moment(at: datetime, since: datetime) -> str:
    """`in 2 days (2026-11-28 14:05 UTC)`: how far from `since`, then the UTC date."""
    seconds = (at - since).total_seconds()
    exact = at.strftime("%Y-%m-%d %H:%M UTC")
    if seconds < 0:
        return f"{duration(-seconds)} ago ({exact})"
    return f"in {duration(seconds)} ({exact})"


def wrapped(label: str, value: str, width: int = 72) -> list[str]:
    """`label value`, or the label and the value indented below it when that is too wide."""
    if len(label) + 1 + len(value) <= width:
        return [f"{label} {value}"]
    return [label, *textwrap.wrap(value, width - 2, initial_indent="  ", subsequent_indent="  ")]


def joined(items: Sequence[str]) -> str:
    """`a`, `a and b`, `a, b and c`."""
    if len(items) <= 1:
        return "".join(items)
    return ", ".join(items[:-1]) + " and " + items[-1]
