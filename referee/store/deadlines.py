"""Deadlines as the game row keeps them: reading a duration, when a turn runs out, the rows due.

Deadlines live on the game row and are applied by the service's sweep
(`referee.service.timing`), which is handed the time, so tests move the
clock instead of sleeping.
"""

from __future__ import annotations

import re
from datetime import datetime, timedelta
from typing import Protocol

from sqlmodel import Session, col, select

from referee.store.clock import parse_stamp
from referee.store.tables import Game, GameStatus

_DURATION = re.compile(r"([0-9]{1,6}(?:\.[0-9]{1,6})?) ?([smhd]?)")


def parse_deadline(text: str) -> int:
    """Seconds from `72h`, `90m`, `2d`, `45s` or a bare number of hours; ValueError otherwise."""
    text = text.strip().lower()
    units = {"s": 1, "m": 60, "h": 3600, "d": 86400}
    # ASCII digits only: float() would also take "inf", "1e9", "nan" and other scripts' digits.
    found = _DURATION.fullmatch(text)
    if found is None:
        raise ValueError(f"{text[:20]!r} is not a duration such as 72h, 90m or 2d")
    seconds = round(float(found.group(1)) * units[found.group(2) or "h"])
    if not 60 <= seconds <= 366 * 86400:
        raise ValueError("a deadline lies between 1 minute and 366 days")
    return seconds


class Timed(Protocol):
    """What the deadline of a game's turn is read from (a game row, a player's list's row)."""

    @property
    def status(self) -> str: ...
    @property
    def updated_at(self) -> str: ...
    @property
    def deadline_seconds(self) -> int | None: ...


def due_at(game: Timed) -> datetime | None:
    """When the seats to act now run out of time (None: no deadline)."""
    if game.deadline_seconds is None or game.status != GameStatus.ACTIVE:
        return None
    return parse_stamp(game.updated_at) + timedelta(seconds=game.deadline_seconds)


def with_deadlines(session: Session) -> list[Game]:
    """The running games that have a deadline."""
    query = select(Game).where(
        Game.status == GameStatus.ACTIVE, col(Game.deadline_seconds).is_not(None)
    )
    return list(session.exec(query))


def locked(session: Session, game_id: str, version: int) -> Game | None:
    """The game under its lock, if it is still at `version` and running."""
    game = session.exec(
        select(Game).where(Game.id == game_id).with_for_update(key_share=True)
    ).first()
    if game is None or game.version != version or game.status != GameStatus.ACTIVE:
        return None
    return game
