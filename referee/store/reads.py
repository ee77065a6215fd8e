"""Reading a game: its turn, its seats, its state at any version, its history and log; the games."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Protocol, cast

import sqlalchemy as sa
from sqlalchemy.orm import QueryableAttribute, defer
from sqlmodel import Session, col, select

from referee import games
from referee.engine import JSON, Played
from referee.games import AnyGame
from referee.replay import new_state
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


def seats(session: Session, game_id: str) -> list[Seat]:
    return list(session.exec(select(Seat).where(Seat.game_id == game_id).order_by(col(Seat.seat))))


def state_at(session: Session, game: GameRow, version: int) -> Any:
    """The state after `version` moves.

    At the head, the state kept on the game's row; elsewhere (or with that
    dropped) the nearest snapshot and the log after it, or without any
    snapshot a replay from the seed: both are caches that only save time.
    """
    rules = rules_of(game)
    if version == game.version and game.state is not None:
        return rules.state_from_json(game.state)
    snap = session.exec(
        select(Snapshot)
        .where(Snapshot.game_id == game.id, Snapshot.version <= version)
        .order_by(col(Snapshot.version).desc())
        .limit(1)
    ).first()
    if snap is None:
        state = new_state(rules, game.seed, len(seats(session, game.id)), game.options)
        start = 0
    else:
        state = rules.state_from_json(snap.state)
        start = snap.version
    if start < version:
        tail = session.exec(
            select(Move)
            .where(Move.game_id == game.id, Move.seq > start, Move.seq <= version)
            .order_by(col(Move.seq))
        )
        for row in tail:
            state = rules.play(state, row.seat, rules.move_from_json(row.move))
    return state


def state_and_previous(session: Session, game: GameRow, version: int) -> tuple[Any, Any | None]:
    """The state after `version` moves and the state a move earlier (None at 0).

    Pictures mark the last move by comparing the two. One replay serves both:
    to `version - 1`, then that one move more (at the head, the state kept
    on the row saves even that step).
    """
    if version == 0:
        return state_at(session, game, 0), None
    previous = state_at(session, game, version - 1)
    rules = rules_of(game)
    if version == game.version and game.state is not None:
        return rules.state_from_json(game.state), previous
    last = session.exec(select(Move).where(Move.game_id == game.id, Move.seq == version)).one()
    return rules.play(previous, last.seat, rules.move_from_json(last.move)), previous


def history(session: Session, game: GameRow) -> tuple[Any, list[Played[Any, Any]]]:
    """The state before the first move, and every logged move with the state after it.

    A whole replay from the seed, for what needs each move's consequence (a
    finished game's score breakdown), not only where the game stands.
    """
    rules = rules_of(game)
    start = new_state(rules, game.seed, len(seats(session, game.id)), game.options)
    played: list[Played[Any, Any]] = []
    state = start
    for row in log(session, game.id):
        move = rules.move_from_json(row.move)
        state = rules.play(state, row.seat, move)
        played.append(Played(row.seat, move, state))
    return start, played


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
