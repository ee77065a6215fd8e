"""The clock of a game's turn: reading a deadline, when a turn runs out, when it is reminded.

A deadline is kept on the game's row (`deadline_seconds`, the turn starting
at `updated_at`); these rules say what follows from it, and the sweep
(`referee.service.deadlines`) applies them, handed the time, so tests move
the clock instead of sleeping. A turn's clock stands still while a seat to
act is on vacation (`frozen_due`); the vacations come from
`referee.store.vacation_rows`, as each seat's spans of time away.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping, Sequence
from datetime import datetime, timedelta
from typing import Protocol

from referee.i18n import _
from referee.store.clock import parse_stamp
from referee.store.tables import Game, GameStatus
from referee.store.vacation_rows import Span

_DURATION = re.compile(r"([0-9]{1,6}(?:\.[0-9]{1,6})?) ?([smhd]?)")


def parse_deadline(text: str) -> int:
    """Seconds from `72h`, `90m`, `2d`, `45s` or a bare number of hours; ValueError otherwise."""
    text = text.strip().lower()
    units = {"s": 1, "m": 60, "h": 3600, "d": 86400}
    # ASCII digits only: float() would also take "inf", "1e9", "nan" and other scripts' digits.
    found = _DURATION.fullmatch(text)
    if found is None:
        raise ValueError(
            _("{text} is not a duration such as 72h, 90m or 2d").format(text=repr(text[:20]))
        )
    seconds = round(float(found.group(1)) * units[found.group(2) or "h"])
    if not 60 <= seconds <= 366 * 86400:
        raise ValueError(_("a deadline lies between 1 minute and 366 days"))
    return seconds


class Timed(Protocol):
    """What the deadline of a game's turn is read from (a game row, a player's list's row)."""

    @property
    def id(self) -> str: ...
    @property
    def status(self) -> str: ...
    @property
    def updated_at(self) -> str: ...
    @property
    def deadline_seconds(self) -> int | None: ...
    @property
    def to_act(self) -> list[int]: ...


# Each seat's spans of time away (seats without any left out).
SeatsAway = Mapping[int, Sequence[Span]]
# The share of a turn's time after which the seats to act are reminded.
REMIND_AT = 0.8


def frozen_due(start: datetime, seconds: float, away: Iterable[Span]) -> datetime:
    """When a clock started at `start` with `seconds` to run has run them out, if it
    stands still during each span of `away` (in any order, overlapping or not).

    Time the clock had left when a span began is what it has left when the span
    ends, so the moment found is never inside a span: time that would run out
    just as one begins runs out when it ends.
    """
    moment, left = start, timedelta(seconds=seconds)
    for begins, ends in sorted(away):
        if ends <= moment:
            continue
        if begins > moment:
            if begins - moment > left:
                break
            left -= begins - moment
        moment = ends
    return moment + left


def _stopping(game: Timed, away: SeatsAway | None) -> list[Span]:
    """The spans during which the game's clock stands still: any seat to act is away
    (in a simultaneous round, one seat away holds the clock for all)."""
    return [span for seat in game.to_act for span in (away or {}).get(seat, ())]


def due_at(game: Timed, away: SeatsAway | None = None) -> datetime | None:
    """When the seats to act now run out of time (None: no deadline), the clock
    standing still while one of them is away."""
    if game.deadline_seconds is None or game.status != GameStatus.ACTIVE:
        return None
    return frozen_due(turn_start(game), game.deadline_seconds, _stopping(game, away))


def reminder_due(game: Game, away: SeatsAway | None = None) -> datetime | None:
    """When the seats to act are reminded: at `REMIND_AT` of their time, on the same clock."""
    if game.deadline_seconds is None or game.status != GameStatus.ACTIVE:
        return None
    seconds = game.deadline_seconds * REMIND_AT
    return frozen_due(turn_start(game), seconds, _stopping(game, away))


def held(game: Game, away: SeatsAway | None, moment: datetime) -> bool:
    """Whether a seat to act is away at `moment`, which stops the game's clock."""
    return any(begins <= moment < ends for begins, ends in _stopping(game, away))


def seats_away_at(away: SeatsAway, moment: datetime) -> dict[int, datetime]:
    """The seats away at `moment`, each with when it is back."""
    found: dict[int, datetime] = {}
    for seat, spans in away.items():
        for begins, ends in spans:
            if begins <= moment < ends:
                found[seat] = max(ends, found.get(seat, ends))
    return found


def turn_start(game: Timed) -> datetime:
    """When the turn's clock started: at the game's last change."""
    return parse_stamp(game.updated_at)
