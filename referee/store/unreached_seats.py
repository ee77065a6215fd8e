"""Which seats of a game the referee has a way to, and cannot reach.

A seat was given a mail address, but the reach condition the service
gives (`referee.delivery.reachable`: some channel reaches it) no longer
holds: its mail bounced too often and it has no webhook.
"""

from __future__ import annotations

from functools import cache
from typing import Any

import sqlalchemy as sa
from sqlmodel import Session

from referee.store.decision_rows import Reaches
from referee.store.tables import Seat, core_table

_SEAT = core_table(Seat)


@cache
def _unreachable(reaches: Reaches) -> sa.Select[Any]:
    return sa.select(_SEAT.c.seat).where(
        _SEAT.c.game_id == sa.bindparam("game_id"),
        _SEAT.c.email.is_not(None),
        _SEAT.c.email != "",
        ~reaches(_SEAT),
    )


def unreachable_seats(session: Session, game_id: str, reaches: Reaches) -> frozenset[int]:
    """The game's seats that have a mail address and that `reaches` does not hold for."""
    query = _unreachable(reaches)
    found = session.connection().execute(query, {"game_id": game_id}).scalars()
    return frozenset(int(seat) for seat in found)
