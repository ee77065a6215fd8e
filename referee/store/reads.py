"""Reading a game's rows: its turn, its seats, its snapshots and log; the games.

What the rows are replayed into (a state at any version) is the service's
(`referee.service.game_states`).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Protocol, cast

import sqlalchemy as sa
from sqlalchemy.orm import QueryableAttribute, defer
from sqlmodel import Session, col, select

from referee import games
from referee.engine import JSON
from referee.games import AnyGame
from referee.store.tables import Game, Move, Seat, Snapshot, core_table

# A snapshot every this many moves bounds the replay of `state?at=N` to
# fewer moves; the head itself is kept on the game's row.
SNAPSHOT_EVERY = 16

_GAME = core_table(Game)


class GameRow(Protocol):
    """What reading a game's state and appending to its log need of its row."""

    @property
    def id(self) -> str: ...
    @property
    def name(self) -> str: ...
    @property
    def rules_version(self) -> str: ...
    @property
    def options(self) -> dict[str, Any]: ...
    @property
    def seed(self) -> str: ...
    @property
    def status(self) -> str: ...
    @property
    def version(self) -> int: ...
    @property
    def head_hash(self) -> str: ...
    @property
    def state(self) -> dict[str, Any] | None: ...


def rules_of(game: GameRow) -> AnyGame:
    """The rules the game was created under: a game ends under the rules it began with."""
    return games.get(game.name, game.rules_version)


@dataclass(frozen=True, slots=True)
class Turn:
    """What is checked of a game before a submission is recorded for it."""

    id: str
    name: str
    rules_version: str
    options: JSON
    status: str
    version: int
    to_act: list[int]


_TURN = sa.select(*(_GAME.c[name] for name in Turn.__dataclass_fields__)).where(
    _GAME.c.id == sa.bindparam("game_id")
)


def turn(session: Session, game_id: str) -> Turn | None:
    """The game's turn as it stands, read with one Core statement: this runs for every move."""
    row = session.connection().execute(_TURN, {"game_id": game_id}).first()
    return None if row is None else Turn(*row)


def every_game_id(session: Session) -> list[str]:
    """Every game's id, in id order (an operator's walk over all of them)."""
    return list(session.exec(select(Game.id).order_by(col(Game.id))))


def ids_starting(session: Session, prefix: str, most: int) -> list[str]:
    """Up to `most` game ids that begin with `prefix` (not empty), in order: a range of
    the primary key, which both databases read on its index (LIKE may not, and cannot
    read PostgreSQL's `uuid` at all)."""
    query = (
        select(Game.id)
        .where(col(Game.id) >= prefix.ljust(32, "0"), col(Game.id) <= prefix.ljust(32, "f"))
        .order_by(col(Game.id))
        .limit(most)
    )
    return list(session.exec(query))


def game_by_id(session: Session, game_id: str) -> Game | None:
    return session.get(Game, game_id)


def seats(session: Session, game_id: str) -> list[Seat]:
    return list(session.exec(select(Seat).where(Seat.game_id == game_id).order_by(col(Seat.seat))))


def nearest_snapshot(session: Session, game_id: str, version: int) -> Snapshot | None:
    """The latest snapshot kept at or before `version`, if any."""
    return session.exec(
        select(Snapshot)
        .where(Snapshot.game_id == game_id, Snapshot.version <= version)
        .order_by(col(Snapshot.version).desc())
        .limit(1)
    ).first()


def moves_through(session: Session, game_id: str, after: int, version: int) -> list[Move]:
    """The logged moves after `after`, up to and with `version`, in order."""
    return list(
        session.exec(
            select(Move)
            .where(Move.game_id == game_id, Move.seq > after, Move.seq <= version)
            .order_by(col(Move.seq))
        )
    )


def move_at(session: Session, game_id: str, seq: int) -> Move:
    """The logged move `seq`."""
    return session.exec(select(Move).where(Move.game_id == game_id, Move.seq == seq)).one()


def log(session: Session, game_id: str, after: int = 0, limit: int | None = None) -> list[Move]:
    query = select(Move).where(Move.game_id == game_id, Move.seq > after).order_by(col(Move.seq))
    if limit is not None:
        query = query.limit(limit)
    return list(session.exec(query))


def list_games(
    session: Session, status: str | None, name: str | None, before: str | None, limit: int
) -> list[Game]:
    # Not the head states: a list shows none of them.
    query = select(Game).options(defer(cast(QueryableAttribute[Any], Game.state)))
    if status is not None:
        query = query.where(Game.status == status)
    if name is not None:
        query = query.where(Game.name == name)
    if before is not None:
        query = query.where(Game.created_at < before)
    return list(session.exec(query.order_by(col(Game.created_at).desc()).limit(limit)))
