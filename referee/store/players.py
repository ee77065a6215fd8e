"""Players: the addresses the referee may mail, and the seats each holds, in every game.

A player is an address, compared without case (`addresses.normal`). It is
one the referee may mail in full: an address that accepted its mail, or one
a trusted client (the API key) seated, and that neither stopped the mail nor
bounced out. Its seats are every seat given that address, however it was invited.
"""

from __future__ import annotations

from collections.abc import Sequence

import sqlalchemy as sa
from sqlmodel import Session, col, select

from referee.store.addresses import normal
from referee.store.tables import Address, AddressState, Game, Seat


def _held_by(address: str) -> sa.ColumnElement[bool]:
    """A seat given `address` (already normal), matched on the index of lower(email)."""
    return sa.func.lower(col(Seat.email)) == address


def seats_of(session: Session, address: str) -> Sequence[tuple[Game, Seat]]:
    """Every seat the address holds, with its game, newest game first."""
    query = (
        select(Game, Seat)
        .join(Seat, col(Seat.game_id) == col(Game.id))
        .where(_held_by(normal(address)))
        .order_by(col(Game.created_at).desc(), col(Seat.seat))
    )
    return session.exec(query).all()


def seat_numbers(session: Session, address: str, game_id: str) -> list[int]:
    """The seats the address holds in one game, in seat order."""
    query = (
        select(Seat.seat)
        .where(col(Seat.game_id) == game_id, _held_by(normal(address)))
        .order_by(col(Seat.seat))
    )
    return list(session.exec(query))


def mailing_seat(session: Session, address: str) -> tuple[str, int] | None:
    """A seat through which the player at `address` may be mailed in full, or None when
    the address is no player: never heard of, stopped, bounced out, or only invited
    by games of untrusted clients. The newest such seat is chosen."""
    known = session.get(Address, normal(address))
    if known is None or known.state == AddressState.STOPPED or known.bounced_at is not None:
        return None
    query = (
        select(Seat.game_id, Seat.seat)
        .join(Game, col(Game.id) == col(Seat.game_id))
        .where(_held_by(known.address))
        .order_by(col(Game.created_at).desc(), col(Seat.seat))
        .limit(1)
    )
    if known.state != AddressState.ACCEPTED:
        query = query.where(col(Game.trusted))
    found = session.exec(query).first()
    return None if found is None else (found[0], found[1])
