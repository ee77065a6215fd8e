"""What the trim sweep drops, older than a moment: finished games' cached states (the head
state on the game's row and its snapshots) and decided submissions, the delivery rows
of notices done with, and notices left with none. Never a move, a game's result or seed.

When to trim is the service's (`referee.service.trimming`); each read here walks a
partial index of the rows it may drop alone, so a sweep with nothing to do costs one
index probe each, whatever the history holds.
"""

from __future__ import annotations

from collections.abc import Sequence

import sqlalchemy as sa
from sqlmodel import Session

from referee.store.tables import (
    CACHED_OVER_ROWS,
    DONE_ROWS,
    Delivery,
    Game,
    Outbox,
    Snapshot,
    Submission,
    SubmissionStatus,
    core_table,
)

_GAME = core_table(Game)
_SNAPSHOT = core_table(Snapshot)
_DELIVERY = core_table(Delivery)
_OUTBOX = core_table(Outbox)
_SUBMISSION = core_table(Submission)


def cached_finished(session: Session, before: str, most: int) -> list[str]:
    """Up to `most` finished games, last changed before `before`, still holding a
    cached state; the longest finished first."""
    query = (
        sa.select(_GAME.c.id)
        .where(CACHED_OVER_ROWS, _GAME.c.updated_at < before)
        .order_by(_GAME.c.updated_at)
        .limit(most)
    )
    return list(session.connection().execute(query).scalars())


def drop_states(session: Session, game_ids: Sequence[str]) -> int:
    """Drop these games' cached states: the head state (SQL NULL, not JSON null, so
    that the index of cached games lets them go) and every snapshot; and their decided
    submissions, whose moves keep their sources. How many submissions went."""
    if not game_ids:
        return 0
    connection = session.connection()
    connection.execute(sa.update(_GAME).where(_GAME.c.id.in_(game_ids)).values(state=sa.null()))
    connection.execute(sa.delete(_SNAPSHOT).where(_SNAPSHOT.c.game_id.in_(game_ids)))
    dropped = connection.execute(
        sa.delete(_SUBMISSION).where(
            _SUBMISSION.c.game_id.in_(game_ids),
            _SUBMISSION.c.status != SubmissionStatus.PENDING,
        )
    )
    return dropped.rowcount


def drop_done_deliveries(session: Session, before: str, most: int) -> int:
    """Drop up to `most` deliveries done with before `before`; how many."""
    found = sa.select(_DELIVERY.c.id).where(DONE_ROWS, _DELIVERY.c.done_at < before).limit(most)
    ids = list(session.connection().execute(found).scalars())
    if ids:
        session.connection().execute(sa.delete(_DELIVERY).where(_DELIVERY.c.id.in_(ids)))
    return len(ids)


def drop_bare_notices(session: Session, before: str, most: int) -> int:
    """Drop up to `most` notices made before `before` that no delivery row names any
    more; how many."""
    named = sa.select(_DELIVERY.c.id).where(_DELIVERY.c.notice_id == _OUTBOX.c.id).exists()
    found = (
        sa.select(_OUTBOX.c.id)
        .where(_OUTBOX.c.created_at < before, ~named)
        .order_by(_OUTBOX.c.created_at)
        .limit(most)
    )
    ids = list(session.connection().execute(found).scalars())
    if ids:
        session.connection().execute(sa.delete(_OUTBOX).where(_OUTBOX.c.id.in_(ids)))
    return len(ids)
