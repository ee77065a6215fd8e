"""The replies of a seat the referee answered lately, for the cap on answers.

Counted under the seat's row lock, so two replies taken at once never both
find room for the last answer.
"""

from __future__ import annotations

from dataclasses import dataclass

import sqlalchemy as sa
from sqlmodel import Session

from referee.store.tables import Inbound, Seat, Submission, SubmissionStatus, core_table

_INBOUND = core_table(Inbound)
_SEAT = core_table(Seat)
_SUBMISSION = core_table(Submission)


@dataclass(frozen=True, slots=True)
class Answered:
    """How many of a seat's replies since some time were answered, and when the first came."""

    count: int
    first_at: str | None


def answered_since(session: Session, game_id: str, seat: int, since: str) -> Answered:
    """The seat's replies received after `since` that the referee answered, but for
    moves it played (a move played is progress, never a loop); locks the seat."""
    connection = session.connection()
    connection.execute(
        sa.select(_SEAT.c.id)
        .where(_SEAT.c.game_id == game_id, _SEAT.c.seat == seat)
        .with_for_update()
    )
    query = (
        sa.select(sa.func.count(), sa.func.min(_INBOUND.c.received_at))
        .select_from(_INBOUND.outerjoin(_SUBMISSION, _SUBMISSION.c.id == _INBOUND.c.submission_id))
        .where(
            _INBOUND.c.game_id == game_id,
            _INBOUND.c.seat == seat,
            _INBOUND.c.received_at > since,
            _INBOUND.c.answered,
            sa.or_(
                _SUBMISSION.c.status.is_(None),
                _SUBMISSION.c.status != SubmissionStatus.ACCEPTED,
            ),
        )
    )
    count, first_at = connection.execute(query).one()
    return Answered(int(count), first_at)


def of_submission(session: Session, submission_id: str) -> tuple[bool, str | None] | None:
    """Whether the reply a submission came in is answered, and its `quiet_until`
    (None: no reply made it)."""
    found = (
        session.connection()
        .execute(
            sa.select(_INBOUND.c.answered, _INBOUND.c.quiet_until)
            .where(_INBOUND.c.submission_id == submission_id)
            .limit(1)
        )
        .first()
    )
    return None if found is None else (bool(found.answered), found.quiet_until)
