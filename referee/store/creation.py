"""Creating a game: writing its row, its seats and the first entries of its log."""

from __future__ import annotations

import uuid
from collections.abc import Sequence

from sqlmodel import Session

from referee.store.appending import Appended, write
from referee.store.tables import Game, Seat


def new_id() -> str:
    return uuid.uuid4().hex


def insert_game(session: Session, game: Game, seats: Sequence[Seat], appended: Appended) -> None:
    """Write a new game (its fields from `appended` set already), its seats and log rows."""
    session.add(game)
    session.add_all(seats)
    session.flush()
    write(session.connection(), appended)
