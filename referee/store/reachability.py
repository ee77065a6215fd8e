"""Which seats of a game the referee has a way to, and cannot reach.

A seat was given a mail address, but no channel reaches it now
(`referee.delivery.reachable`): its mail bounced too often and it has no
webhook. Its turns still run out on the game's deadline; the other
players are shown that it is unreachable.
"""

from __future__ import annotations

import sqlalchemy as sa
from sqlmodel import Session

from referee.delivery import reachable
from referee.store.tables import Seat, core_table

_SEAT = core_table(Seat)
_UNREACHABLE = sa.select(_SEAT.c.seat).where(
    _SEAT.c.game_id == sa.bindparam("game_id"),
    _SEAT.c.email.is_not(None),
    _SEAT.c.email != "",
    ~reachable(_SEAT),
)


def unreachable_seats(session: Session, game_id: str) -> frozenset[int]:
    """The game's seats that have a mail address the referee no longer reaches."""
    found = session.connection().execute(_UNREACHABLE, {"game_id": game_id}).scalars()
    return frozenset(int(seat) for seat in found)
