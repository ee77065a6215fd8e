"""Bots' seats people take over: the game under its lock, the seat a newcomer takes, the
handovers still waiting for the bot's turn, and the seat made the person's.

Which seat is taken and when it changes hands is the service's
(`referee.service.handovers`); this module reads and writes the rows. Deciding
asks for a game's waiting handovers after every move of a game that has bots'
seats, so those reads are single Core statements.
"""

from __future__ import annotations

from dataclasses import dataclass

import sqlalchemy as sa
from sqlmodel import Session, col, select

from referee.store.tables import Address, Game, Seat, SeatHandover, core_table

_SEAT = core_table(Seat)
_HANDOVER = core_table(SeatHandover)
_ADDRESS = core_table(Address)

# The player's public name as it is when the seat becomes theirs.
_WAITING = (
    sa.select(_HANDOVER.c.seat, _HANDOVER.c.address, _HANDOVER.c.bot, _ADDRESS.c.public_name)
    .select_from(_HANDOVER.outerjoin(_ADDRESS, _ADDRESS.c.address == _HANDOVER.c.address))
    .where(_HANDOVER.c.game_id == sa.bindparam("game_id"), _HANDOVER.c.from_seq.is_(None))
    .order_by(_HANDOVER.c.seat)
)


@dataclass(frozen=True, slots=True)
class Waiting:
    """A handover whose seat the bot still holds (its turn was under way)."""

    seat: int
    address: str
    bot: str
    # The player's public name (None only for an address that lost it since).
    name: str | None


def locked_game(session: Session, game_id: str) -> Game | None:
    """The game under the lock deciding takes, so that no move is judged meanwhile."""
    query = select(Game).where(Game.id == game_id).with_for_update(key_share=True)
    return session.exec(query).first()


def free_bot_seat(session: Session, game_id: str, level: str) -> Seat | None:
    """The lowest-numbered seat a bot of `level` held from the start and nobody took over."""
    taken = select(SeatHandover.seat).where(SeatHandover.game_id == game_id)
    query = (
        select(Seat)
        .where(
            Seat.game_id == game_id,
            Seat.bot == level,
            col(Seat.bot_since).is_(None),
            col(Seat.seat).not_in(taken),
        )
        .order_by(col(Seat.seat))
        .limit(1)
    )
    return session.exec(query).first()


def insert(session: Session, handover: SeatHandover) -> None:
    session.add(handover)
    session.flush()


def waiting(connection: sa.Connection, game_id: str) -> list[Waiting]:
    """The game's handovers that wait for the bot's turn to end, by seat."""
    return [Waiting(*row) for row in connection.execute(_WAITING, {"game_id": game_id})]


def hand_seat(
    connection: sa.Connection,
    game_id: str,
    seat: int,
    *,
    name: str,
    address: str,
    token_hash: str,
    from_seq: int,
) -> None:
    """Make the seat its person's from move `from_seq` on: named, mailed, its own token."""
    connection.execute(
        sa.update(_SEAT)
        .where(_SEAT.c.game_id == game_id, _SEAT.c.seat == seat)
        .values(
            bot=None,
            bot_since=None,
            name=name,
            email=address,
            token_hash=token_hash,
            linked_at=None,
        )
    )
    connection.execute(
        sa.update(_HANDOVER)
        .where(_HANDOVER.c.game_id == game_id, _HANDOVER.c.seat == seat)
        .values(from_seq=from_seq)
    )


def done(session: Session, game_id: str) -> list[SeatHandover]:
    """The game's seats taken over from bots (the person's now), by seat."""
    query = (
        select(SeatHandover)
        .where(SeatHandover.game_id == game_id, col(SeatHandover.from_seq).is_not(None))
        .order_by(col(SeatHandover.seat))
    )
    return list(session.exec(query))
