"""Creating a game: writing its row, its seats and the first entries of its log."""

from __future__ import annotations

import os
import time
import uuid
from collections.abc import Sequence

from sqlmodel import Session

from referee.store.appending import Appended, write
from referee.store.tables import Game, Seat


def new_id() -> str:
    return uuid.uuid4().hex


def new_ordered_id() -> str:
    """A new id that sorts after the ids made before it (by the millisecond; a UUID of
    version 7's layout), with 74 random bits: for rows written at every move, whose
    primary key then grows at its right end instead of touching a page anywhere in an
    index as large as the history (each first touch after a checkpoint writes the
    whole page to the WAL)."""
    millis = time.time_ns() // 1_000_000
    random_bits = int.from_bytes(os.urandom(10), "big")
    rand_a, rand_b = random_bits >> 68 & 0xFFF, random_bits & (1 << 62) - 1
    value = millis << 80 | 0x7 << 76 | rand_a << 64 | 0b10 << 62 | rand_b
    return f"{value:032x}"


def insert_game(session: Session, game: Game, seats: Sequence[Seat], appended: Appended) -> None:
    """Write a new game (its fields from `appended` set already), its seats and log rows."""
    session.add(game)
    session.add_all(seats)
    session.flush()
    write(session.connection(), appended)
