"""When a seat's game page was last seen open, and what its seat did since a notice.

The game page marks its seat seen when it is shown and, while it stays
open, as its live stream goes on (`referee.service.page_presence`); the mail
channel reads the mark to hold a turn mail back a while from a player who
is looking at the game already (`referee.delivery.mail`).
"""

from __future__ import annotations

from collections.abc import Sequence

import sqlalchemy as sa
from sqlmodel import Session

from referee.store.tables import Move, Outbox, Seat, core_table

_SEAT = core_table(Seat)
_MOVE = core_table(Move)
_NOTICE = core_table(Outbox)


def mark(connection: sa.Connection, game_id: str, seat: int, at: str, fresh_after: str) -> None:
    """Note that the seat's page was open at `at`, unless it was noted since `fresh_after`
    (a stream that stays open writes once in a while, not at every beat)."""
    connection.execute(
        sa.update(_SEAT)
        .where(
            _SEAT.c.game_id == game_id,
            _SEAT.c.seat == seat,
            sa.or_(_SEAT.c.page_seen_at.is_(None), _SEAT.c.page_seen_at < fresh_after),
        )
        .values(page_seen_at=at)
    )


def seen_at(session: Session, game_id: str, seat: int) -> str | None:
    """When the seat's page was last seen open (None: never)."""
    found: str | None = (
        session.connection()
        .execute(
            sa.select(_SEAT.c.page_seen_at).where(_SEAT.c.game_id == game_id, _SEAT.c.seat == seat)
        )
        .scalar()
    )
    return found


def versions(session: Session, notice_ids: Sequence[int]) -> dict[int, int]:
    """The game version each notice was written for, by notice (those that name one)."""
    rows = session.connection().execute(
        sa.select(_NOTICE.c.id, _NOTICE.c.payload).where(_NOTICE.c.id.in_(list(notice_ids)))
    )
    return {
        row.id: int(row.payload["version"])
        for row in rows
        if isinstance(row.payload, dict) and "version" in row.payload
    }


def moved_after(session: Session, game_id: str, seat: int, version: int) -> bool:
    """Whether the seat has a move logged after the game's `version`."""
    query = sa.select(_MOVE.c.seq).where(
        _MOVE.c.game_id == game_id, _MOVE.c.seat == seat, _MOVE.c.seq > version
    )
    return session.connection().execute(query.limit(1)).first() is not None
