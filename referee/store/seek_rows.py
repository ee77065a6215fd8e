"""Open games as the store holds them: the seek, who sits at it, whom it invites."""

from __future__ import annotations

from collections.abc import Collection, Sequence

from sqlalchemy import ColumnElement, and_, or_
from sqlmodel import Session, col, delete, func, select

from referee.store.tables import (
    Game,
    GameStatus,
    Seek,
    SeekInvite,
    SeekPlayer,
    SeekStatus,
)


def insert(session: Session, seek: Seek, invited: Sequence[str]) -> None:
    session.add(seek)
    session.flush()
    for address in invited:
        session.add(SeekInvite(seek_id=seek.id, address=address))
    session.flush()


def locked(session: Session, seek_id: str) -> Seek | None:
    """The seek under its lock, so that joins, leaves and starts go one at a time."""
    return session.exec(select(Seek).where(Seek.id == seek_id).with_for_update()).first()


def seated(session: Session, seek_id: str) -> list[str]:
    """The addresses seated at the seek, in the order they joined (its creator first)."""
    query = (
        select(SeekPlayer.address)
        .where(SeekPlayer.seek_id == seek_id)
        .order_by(col(SeekPlayer.joined_at), col(SeekPlayer.address))
    )
    return list(session.exec(query))


def seated_at(session: Session, seek_ids: Collection[str]) -> dict[str, list[str]]:
    """`seated` for many seeks at once."""
    found: dict[str, list[str]] = {seek_id: [] for seek_id in seek_ids}
    if seek_ids:
        query = (
            select(SeekPlayer.seek_id, SeekPlayer.address)
            .where(col(SeekPlayer.seek_id).in_(seek_ids))
            .order_by(col(SeekPlayer.joined_at), col(SeekPlayer.address))
        )
        for seek_id, address in session.exec(query):
            found[seek_id].append(address)
    return found


def invited(session: Session, seek_id: str) -> list[str]:
    query = select(SeekInvite.address).where(SeekInvite.seek_id == seek_id)
    return sorted(session.exec(query))


def seat(session: Session, seek_id: str, address: str, at: str) -> None:
    session.add(SeekPlayer(seek_id=seek_id, address=address, joined_at=at))
    session.flush()


def unseat(session: Session, seek_id: str, address: str) -> None:
    session.execute(
        delete(SeekPlayer).where(
            col(SeekPlayer.seek_id) == seek_id, col(SeekPlayer.address) == address
        )
    )


def open_by(session: Session, address: str) -> int:
    """How many open seeks the player posted."""
    query = select(func.count()).where(Seek.by_address == address, Seek.status == SeekStatus.OPEN)
    return session.exec(query).one()


def _listed() -> ColumnElement[bool]:
    """Open, or started with seats that bots hold for whoever joins, its game in play."""
    warm = and_(
        col(Seek.status) == SeekStatus.STARTED,
        col(Seek.bot_seats_open) > 0,
        col(Seek.game_id).in_(select(Game.id).where(Game.status == GameStatus.ACTIVE)),
    )
    return or_(col(Seek.status) == SeekStatus.OPEN, warm)


def public(
    session: Session,
    game: str | None,
    before: str | None,
    limit: int,
    hidden_from: Collection[str] = (),
) -> list[Seek]:
    """Public seeks one may join, newest first, but for those posted by `hidden_from`."""
    query = select(Seek).where(_listed(), col(Seek.private).is_(False))
    if game is not None:
        query = query.where(Seek.game == game)
    if before is not None:
        query = query.where(Seek.created_at < before)
    if hidden_from:
        query = query.where(col(Seek.by_address).not_in(hidden_from))
    return list(session.exec(query.order_by(col(Seek.created_at).desc()).limit(limit)))


def of_player(session: Session, address: str) -> list[Seek]:
    """The player's seeks still listed: those it posted, sits at, or is invited to."""
    mine = select(SeekPlayer.seek_id).where(SeekPlayer.address == address)
    asked = select(SeekInvite.seek_id).where(SeekInvite.address == address)
    query = select(Seek).where(
        _listed(),
        or_(
            col(Seek.by_address) == address,
            col(Seek.id).in_(mine),
            col(Seek.id).in_(asked),
        ),
    )
    return list(session.exec(query.order_by(col(Seek.created_at).desc())))


def due_to_expire(session: Session, moment: str, limit: int) -> list[str]:
    """Open seeks whose time ran out, oldest first."""
    query = (
        select(Seek.id)
        .where(Seek.status == SeekStatus.OPEN, Seek.expires_at <= moment)
        .order_by(col(Seek.expires_at))
        .limit(limit)
    )
    return list(session.exec(query))


def of_game(session: Session, game_id: str) -> Seek | None:
    """The seek a game was started from, if one was."""
    return session.exec(select(Seek).where(Seek.game_id == game_id)).first()
