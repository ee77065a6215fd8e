"""Numbers, times and lists in the words a mail's reader reads, in its language.

Relative times are measured from the mail's own Date, not from the
moment it is built, so building a row's message again gives the same text.
Moments are said in the reader's zone (`referee.i18n.when`).
"""

from __future__ import annotations

import textwrap
from collections.abc import Sequence
from datetime import datetime
from itertools import pairwise

from referee.i18n import _, ngettext, when

_UNITS = (("day", 86_400), ("hour", 3_600), ("minute", 60), ("second", 1))


def _unit(amount: int, word: str) -> str:
    """`1 day`, `3 hours`, in the reader's language."""
    if word == "day":
        return ngettext("%(n)d day", "%(n)d days", amount) % {"n": amount}
    if word == "hour":
        return ngettext("%(n)d hour", "%(n)d hours", amount) % {"n": amount}
    if word == "minute":
        return ngettext("%(n)d minute", "%(n)d minutes", amount) % {"n": amount}
    return ngettext("%(n)d second", "%(n)d seconds", amount) % {"n": amount}


def moves(number: int) -> str:
    """`1 move`, `2 moves`."""
    return ngettext("%(n)d move", "%(n)d moves", number) % {"n": number}


def games(number: int) -> str:
    """`1 game`, `2 games`."""
    return ngettext("%(n)d game", "%(n)d games", number) % {"n": number}


def players(number: int) -> str:
    """`1 player`, `2 players`."""
    return ngettext("%(n)d player", "%(n)d players", number) % {"n": number}


def duration(seconds: float) -> str:
    """`2 minutes`, `3 days`, `1 day and 6 hours`: the two largest units, the second
    rounded to the nearest (23 hours and 59.9 minutes read `1 day`, not `23 hours and
    59 minutes`: a mail says how long, not to the second)."""
    left = _rounded(max(round(seconds), 0))
    parts: list[str] = []
    for word, size in _UNITS:
        if left >= size or (not parts and size == 1):
            amount, left = divmod(left, size)
            parts.append(_unit(amount, word))
        if len(parts) == 2 or (parts and left == 0):
            break
    if len(parts) == 1:
        return parts[0]
    return _("%(larger)s and %(smaller)s") % {"larger": parts[0], "smaller": parts[1]}


def _rounded(seconds: int) -> int:
    """`seconds` to the nearest whole of the unit below its largest, carried upwards."""
    for (_word, size), (_smaller, step) in pairwise(_UNITS):
        if seconds >= size:
            return round(seconds / step) * step
    return seconds


def moment(at: datetime, since: datetime) -> str:
    """`in 2 days (Sat, Nov 28, 2:05 PM UTC)`: how far from `since`, then the moment in
    the reader's zone, its name said."""
    seconds = (at - since).total_seconds()
    exact = when(at, since)
    if seconds < 0:
        return _("%(length)s ago (%(moment)s)") % {"length": duration(-seconds), "moment": exact}
    return _("in %(length)s (%(moment)s)") % {"length": duration(seconds), "moment": exact}


def wrapped(label: str, value: str, width: int = 72) -> list[str]:
    """`label value`, or the label and the value indented below it when that is too wide."""
    if len(label) + 1 + len(value) <= width:
        return [f"{label} {value}"]
    return [label, *textwrap.wrap(value, width - 2, initial_indent="  ", subsequent_indent="  ")]


def joined(items: Sequence[str]) -> str:
    """`a`, `a and b`, `a, b and c`."""
    if len(items) <= 1:
        return "".join(items)
    return _("%(some)s and %(last)s") % {"some": ", ".join(items[:-1]), "last": items[-1]}
