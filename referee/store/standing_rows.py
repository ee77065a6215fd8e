"""Standing seeks as the store holds them, and the open games each keeps going."""

from __future__ import annotations

from collections.abc import Collection

from sqlalchemy import ColumnElement, and_, or_, update
from sqlalchemy.orm import Mapped
from sqlmodel import Session, col, delete, func, select

from referee.store.tables import (
    Address,
    Game,
    GameStatus,
    Seek,
    SeekStatus,
    StandingSeek,
    core_table,
)

_SEEK = core_table(Seek)


def of_player(session: Session, address: str) -> list[StandingSeek]:
    """The player's standing seeks, in the order they were first asked for."""
    query = select(StandingSeek).where(StandingSeek.address == address)
    return list(session.exec(query.order_by(col(StandingSeek.id))))


def lock_player(session: Session, address: str) -> None:
    """Hold the player's row until the transaction ends, so that two changes of its
    standing seeks at once go one after the other."""
    session.exec(select(Address.address).where(Address.address == address).with_for_update())


def locked(session: Session, standing_id: int) -> StandingSeek | None:
    """The standing seek under its lock: two sweeps at once top it up once."""
    query = select(StandingSeek).where(StandingSeek.id == standing_id).with_for_update()
    return session.exec(query).first()


def _running(standing_id: int | Mapped[int | None]) -> ColumnElement[bool]:
    """A seek the standing seek posted that is open, or whose game is still in play."""
    playing = select(Game.id).where(Game.status == GameStatus.ACTIVE)
    return and_(
        col(Seek.standing_id) == standing_id,
        or_(
            col(Seek.status) == SeekStatus.OPEN,
            and_(col(Seek.status) == SeekStatus.STARTED, col(Seek.game_id).in_(playing)),
        ),
    )


def running(session: Session, standing_id: int) -> int:
    """How many of the standing seek's games are open or in play."""
    return session.exec(select(func.count()).where(_running(standing_id))).one()


def short(session: Session, seen_since: str, limit: int) -> list[int]:
    """Standing seeks with fewer games open or in play than their count, of players
    who have a public name and were seen since `seen_since`; oldest first."""
    games = (
        select(func.count())
        .where(_running(col(StandingSeek.id)))
        .correlate(StandingSeek)
        .scalar_subquery()
    )
    query = (
        select(StandingSeek.id)
        .join(Address, col(Address.address) == col(StandingSeek.address))
        .where(
            col(Address.public_name).is_not(None),
            col(Address.seen_at) >= seen_since,
            games < col(StandingSeek.count),
        )
        .order_by(col(StandingSeek.id))
        .limit(limit)
    )
    return [found for found in session.exec(query) if found is not None]


def remove(session: Session, standing_ids: Collection[int], at: str) -> None:
    """Remove standing seeks: the open seeks they posted are withdrawn, and those that
    started are theirs no more (a new standing seek may be given a removed one's id)."""
    if not standing_ids:
        return
    posted = _SEEK.c.standing_id.in_(standing_ids)
    connection = session.connection()
    connection.execute(
        update(_SEEK)
        .where(posted, _SEEK.c.status == SeekStatus.OPEN)
        .values(status=SeekStatus.WITHDRAWN, ended_at=at)
    )
    connection.execute(update(_SEEK).where(posted).values(standing_id=None))
    session.execute(delete(StandingSeek).where(col(StandingSeek.id).in_(standing_ids)))
