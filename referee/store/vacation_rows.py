"""Players' vacations: the rows of each address's time away, and the seats they hold still.

A vacation is a span [starts_at, ends_at) of an address; `ends_at` becomes
the moment it was ended when it is ended early. The rows of past vacations
are kept: a turn that began before one still counts the time it stood still,
and the allowance counts the days used. The rules on them are the service's
(`referee.service.vacations`).
"""

from __future__ import annotations

from collections.abc import Sequence
from datetime import datetime
from typing import Protocol

import sqlalchemy as sa
from sqlmodel import Session, col, select

from referee.store.addresses import normal
from referee.store.clock import parse_stamp, stamp
from referee.store.tables import Address, Game, GameStatus, Seat, Vacation, core_table

# A span of time away, [from, until): the clock runs again at `until`.
Span = tuple[datetime, datetime]


class TurnBegun(Protocol):
    """A game as its seats' time away is looked up: its id, and when its turn began."""

    @property
    def id(self) -> str: ...
    @property
    def updated_at(self) -> str: ...


# Games whose seats one query looks up (the sweep passes every game with a deadline).
_CHUNK = 500


def seats_away(
    session: Session, games: Sequence[TurnBegun], moment: datetime
) -> dict[str, dict[int, list[Span]]]:
    """For each game, each seat's vacations that began by `moment` and end after the
    game's turn began: what holds its clock still now (a vacation still planned
    is its player's own business until it begins)."""
    found: dict[str, dict[int, list[Span]]] = {}
    if not games:
        return found
    began = {game.id: game.updated_at for game in games}
    ids = sorted(began)
    for first in range(0, len(ids), _CHUNK):
        chunk = ids[first : first + _CHUNK]
        query = (
            select(Seat.game_id, Seat.seat, Vacation.starts_at, Vacation.ends_at)
            .join(Vacation, col(Vacation.address) == sa.func.lower(col(Seat.email)))
            .where(
                col(Seat.game_id).in_(chunk),
                col(Vacation.starts_at) <= stamp(moment),
                col(Vacation.ends_at) > min(began[game_id] for game_id in chunk),
            )
        )
        for game_id, seat, starts_at, ends_at in session.exec(query):
            if ends_at > began[game_id]:
                span = (parse_stamp(starts_at), parse_stamp(ends_at))
                found.setdefault(game_id, {}).setdefault(seat, []).append(span)
    return found


_GAME = core_table(Game)
_SEAT = core_table(Seat)
_VACATION = core_table(Vacation)


def seats_away_held(
    session: Session, address: str, moment: datetime
) -> dict[str, dict[int, list[Span]]]:
    """`seats_away` for every running game with a deadline that `address` holds a seat
    in: the games found by a join, not named one by one, as a player's list reads
    hundreds of them (and no clock of another game runs)."""
    mine = _SEAT.alias("mine")
    query = (
        sa.select(_SEAT.c.game_id, _SEAT.c.seat, _VACATION.c.starts_at, _VACATION.c.ends_at)
        # From the player's seats (its index): SQLite would otherwise read every
        # running game. A game where it holds two seats gives each span twice.
        .distinct()
        .select_from(
            mine.join(_GAME, _GAME.c.id == mine.c.game_id)
            .join(_SEAT, _SEAT.c.game_id == _GAME.c.id)
            .join(_VACATION, _VACATION.c.address == sa.func.lower(_SEAT.c.email))
        )
        .where(
            sa.func.lower(mine.c.email) == normal(address),
            _GAME.c.status == GameStatus.ACTIVE,
            _GAME.c.deadline_seconds.is_not(None),
            _VACATION.c.starts_at <= stamp(moment),
            _VACATION.c.ends_at > _GAME.c.updated_at,
        )
    )
    found: dict[str, dict[int, list[Span]]] = {}
    for game_id, seat, starts_at, ends_at in session.connection().execute(query).all():
        span = (parse_stamp(starts_at), parse_stamp(ends_at))
        found.setdefault(game_id, {}).setdefault(seat, []).append(span)
    return found


def lock_address(session: Session, address: str) -> None:
    """Hold the address's row until the transaction ends, so that two changes of one
    player's vacation are made one after the other (SQLite's one writer does so anyway)."""
    session.exec(select(Address).where(col(Address.address) == address).with_for_update()).first()


def of_address(session: Session, address: str) -> list[Vacation]:
    """Every vacation of an address (already normal), past and planned, earliest first."""
    query = (
        select(Vacation).where(col(Vacation.address) == address).order_by(col(Vacation.starts_at))
    )
    return list(session.exec(query))


def add(session: Session, address: str, starts_at: str, ends_at: str, created_at: str) -> Vacation:
    row = Vacation(address=address, starts_at=starts_at, ends_at=ends_at, created_at=created_at)
    session.add(row)
    session.flush()
    return row


def end(session: Session, row: Vacation, ends_at: str) -> None:
    """Set when the vacation ends (earlier or later than planned)."""
    row.ends_at = ends_at
    session.add(row)


def drop(session: Session, row: Vacation) -> None:
    """Forget a vacation that has not begun."""
    session.delete(row)
