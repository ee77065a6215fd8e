"""The games a deadline sweep works on: the running games whose turn may be due, and one
under its lock.

When a game's turn runs out, and what follows, is the service's
(`referee.service.turn_clock`, applied by `referee.service.deadlines`). This
module only narrows the running games down to those the rules could find
due, by index, so that a sweep costs what is due and not what is running: a
turn's clock starts at `updated_at` and only stands still (vacations), so a
turn is reminded no sooner than `REMIND_AT` of its time after it started, and
runs out no sooner than all of it. The deadlines in use are found first by
skipping along the index from one to the next (a handful, however many games
run), then each one's due rows by a range of the same index.
"""

from __future__ import annotations

from datetime import datetime, timedelta

import sqlalchemy as sa
from sqlmodel import Session, col, select

from referee.store.clock import stamp
from referee.store.tables import CLOCKED_ROWS, UNREMINDED_ROWS, Game, GameStatus, core_table

_GAME = core_table(Game)


def _deadlines_in_use(session: Session) -> list[int]:
    """The distinct turn's times of running games, by a loose scan of their index."""
    found = (
        sa.select(sa.func.min(_GAME.c.deadline_seconds).label("seconds"))
        .where(CLOCKED_ROWS)
        .cte("deadline", recursive=True)
    )
    following = (
        sa.select(sa.func.min(_GAME.c.deadline_seconds))
        .where(CLOCKED_ROWS, _GAME.c.deadline_seconds > found.c.seconds)
        .scalar_subquery()
    )
    found = found.union_all(sa.select(following).where(found.c.seconds.is_not(None)))
    query = sa.select(found.c.seconds).where(found.c.seconds.is_not(None))
    return list(session.connection().execute(query).scalars())


def maybe_due(session: Session, moment: datetime, remind_at: float) -> list[Game]:
    """The running games whose turn could be reminded (at `remind_at` of its time, not
    yet done at this version) or run out by `moment`: every game the rules may find due,
    and only a few more (those whose clock a vacation holds)."""
    deadlines = _deadlines_in_use(session)
    if not deadlines:
        return []

    def started_by(share: float) -> sa.ColumnElement[bool]:
        return sa.or_(
            *(
                (_GAME.c.deadline_seconds == seconds)
                & (_GAME.c.updated_at <= stamp(moment - timedelta(seconds=seconds * share)))
                for seconds in deadlines
            )
        )

    run_out = sa.select(_GAME.c.id).where(CLOCKED_ROWS, started_by(1.0))
    unreminded = sa.select(_GAME.c.id).where(UNREMINDED_ROWS, started_by(remind_at))
    ids = set(session.connection().execute(run_out.union(unreminded)).scalars())
    if not ids:
        return []
    query = select(Game).where(col(Game.id).in_(sorted(ids))).order_by(col(Game.updated_at))
    return list(session.exec(query))


def locked(session: Session, game_id: str, version: int) -> Game | None:
    """The game under its lock, if it is still at `version` and running."""
    game = session.exec(
        select(Game).where(Game.id == game_id).with_for_update(key_share=True)
    ).first()
    if game is None or game.version != version or game.status != GameStatus.ACTIVE:
        return None
    return game
