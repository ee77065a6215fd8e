"""The seats whose messages wait unseen, and when each was last sent a mail of them: rows only.

`message_mail` keeps, per game and seat, when the short mail of its unseen
messages last went out (`referee.service.talk_mailing` decides when one is due).
"""

from __future__ import annotations

from dataclasses import dataclass

import sqlalchemy as sa
from sqlmodel import Session

from referee.store.table_messages import unseen_by
from referee.store.tables import MessageMail, Seat, TableMessage, core_table

_MESSAGE = core_table(TableMessage)
_SEAT = core_table(Seat)
_MAIL = core_table(MessageMail)


@dataclass(frozen=True, slots=True)
class Waiting:
    """A seat with a mail address and others' messages it has not seen, the oldest written
    at `since`, the latest numbered `last_seq`."""

    game_id: str
    seat: int
    address: str
    since: str
    last_seq: int


def waiting(session: Session, written_after: str, written_before: str) -> list[Waiting]:
    """The seats (people with an address) whose oldest unseen message, not of a seat they
    muted, was written between `written_after` and `written_before`."""
    oldest = sa.func.min(_MESSAGE.c.created_at)
    joined, unseen = unseen_by(_SEAT)
    query = (
        sa.select(_SEAT.c.game_id, _SEAT.c.seat, _SEAT.c.email, oldest, sa.func.max(_MESSAGE.c.seq))
        .select_from(joined)
        .where(
            _MESSAGE.c.created_at > written_after,
            unseen,
            _SEAT.c.email.is_not(None),
            _SEAT.c.email != "",
            _SEAT.c.bot.is_(None),
        )
        .group_by(_SEAT.c.game_id, _SEAT.c.seat, _SEAT.c.email)
        .having(oldest <= written_before)
        .order_by(_SEAT.c.game_id, _SEAT.c.seat)
    )
    return [
        Waiting(game_id, seat, email, since, last)
        for game_id, seat, email, since, last in session.connection().execute(query)
    ]


def last_text(session: Session, game_id: str, seat: int, since: str) -> str | None:
    """The text of the seat's latest message in the game, if written after `since`."""
    found = (
        session.connection()
        .execute(
            sa.select(_MESSAGE.c.text)
            .where(
                _MESSAGE.c.game_id == game_id,
                _MESSAGE.c.seat == seat,
                _MESSAGE.c.created_at > since,
            )
            .order_by(_MESSAGE.c.seq.desc())
            .limit(1)
        )
        .scalar()
    )
    return None if found is None else str(found)


def claim(session: Session, game_id: str, seat: int, stamp: str, quiet_since: str) -> bool:
    """Take the seat's next mail of unseen messages for `stamp`, unless one went out after
    `quiet_since`: one conditional UPDATE (or the first row), so two sweeps never both
    write one. A first row raced by another sweep fails the commit instead."""
    moved = session.connection().execute(
        sa.update(_MAIL)
        .where(
            _MAIL.c.game_id == game_id,
            _MAIL.c.seat == seat,
            _MAIL.c.sent_at <= quiet_since,
        )
        .values(sent_at=stamp)
    )
    if moved.rowcount:
        return True
    if session.get(MessageMail, (game_id, seat)) is not None:
        return False
    session.add(MessageMail(game_id=game_id, seat=seat, sent_at=stamp))
    session.flush()
    return True
