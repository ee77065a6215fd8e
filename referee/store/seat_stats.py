"""What a player's seats did, read for its profile: its games by status, its timeouts and
resignations, how long it took over its last moves, its last finished games.

A player's seats are those given its address (compared without case, on the index of
`lower(seat.email)`); each statement starts there and reaches a seat's moves by the
unique `(game_id, seq)` of `move`, so its cost follows the player's own games, not the
size of the server.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import sqlalchemy as sa
from sqlmodel import Session

from referee.engine import RESIGN_NOTATION
from referee.store.addresses import normal
from referee.store.tables import Game, GameStatus, Move, Seat, Source, Submission, core_table

_GAME = core_table(Game)
_SEAT = core_table(Seat)
_MOVE = core_table(Move)
_SUBMISSION = core_table(Submission)


def _held_by(address: str) -> sa.ColumnElement[bool]:
    return sa.func.lower(_SEAT.c.email) == normal(address)


def _moves_of(address: str) -> Any:
    """The moves of the player's seats that came from a submission, with it."""
    return (
        _SEAT.join(_MOVE, sa.and_(_MOVE.c.game_id == _SEAT.c.game_id, _MOVE.c.seat == _SEAT.c.seat))
        .join(_SUBMISSION, _SUBMISSION.c.id == _MOVE.c.submission_id)
        .join(_GAME, _GAME.c.id == _SEAT.c.game_id)
    ), _held_by(address)


def games_by_status(session: Session, address: str) -> dict[str, int]:
    """How many games the player holds a seat in, by status (`active`, `over`)."""
    rows = session.connection().execute(
        sa.select(_GAME.c.status, sa.func.count(sa.distinct(_GAME.c.id)))
        .select_from(_SEAT.join(_GAME, _GAME.c.id == _SEAT.c.game_id))
        .where(_held_by(address))
        .group_by(_GAME.c.status)
    )
    return {status: count for status, count in rows}


@dataclass(frozen=True, slots=True)
class Tally:
    # Moves the referee played for its seats when their time ran out.
    timeouts: int
    # Games it resigned itself (a forfeit on timeout is a timeout).
    resigned: int


def tally(session: Session, address: str) -> Tally:
    joined, held = _moves_of(address)
    timeout = _SUBMISSION.c.source == Source.TIMEOUT
    resigned = sa.and_(_MOVE.c.notation == RESIGN_NOTATION, sa.not_(timeout))
    row = (
        session.connection()
        .execute(
            sa.select(
                sa.func.count().filter(timeout),
                sa.func.count(sa.distinct(_MOVE.c.game_id)).filter(resigned),
            )
            .select_from(joined)
            .where(held, sa.or_(timeout, _MOVE.c.notation == RESIGN_NOTATION))
        )
        .one()
    )
    return Tally(timeouts=row[0] or 0, resigned=row[1] or 0)


@dataclass(frozen=True, slots=True)
class Answer:
    """One move of the player's and when its turn was asked of it: the game's move
    before it was logged, or the game was made, for its first."""

    asked_at: str
    moved_at: str


def answers(session: Session, address: str, most: int) -> list[Answer]:
    """The player's last `most` moves, latest first: played by the player itself or for
    it on timeout (a bot's moves for its seat are not its)."""
    joined, held = _moves_of(address)
    before = _MOVE.alias("before")
    joined = joined.outerjoin(
        before, sa.and_(before.c.game_id == _MOVE.c.game_id, before.c.seq == _MOVE.c.seq - 1)
    )
    rows = session.connection().execute(
        sa.select(_MOVE.c.created_at, before.c.created_at, _GAME.c.created_at)
        .select_from(joined)
        .where(held, _SUBMISSION.c.source != Source.BOT)
        .order_by(_MOVE.c.created_at.desc())
        .limit(most)
    )
    return [Answer(previous or made, moved) for moved, previous, made in rows]


@dataclass(frozen=True, slots=True)
class Finished:
    """A finished game of the player's: its result and the seats it held."""

    id: str
    game: str
    result: dict[str, Any] | None
    finished_at: str
    seats: Sequence[int]


def last_finished(session: Session, address: str, most: int) -> list[Finished]:
    """The player's `most` last finished games, the latest first (a finished game's
    `updated_at` is when its last move was logged)."""
    # From the player's seats to their games, not from every finished game to the seats.
    last = session.connection().execute(
        sa.select(_GAME.c.id)
        .select_from(_SEAT.join(_GAME, _GAME.c.id == _SEAT.c.game_id))
        .where(_held_by(address), _GAME.c.status == GameStatus.OVER)
        .group_by(_GAME.c.id, _GAME.c.updated_at)
        .order_by(_GAME.c.updated_at.desc(), _GAME.c.id)
        .limit(most)
    )
    order = [game_id for (game_id,) in last]
    rows = session.connection().execute(
        sa.select(_GAME.c.id, _GAME.c.name, _GAME.c.result, _GAME.c.updated_at).where(
            _GAME.c.id.in_(order)
        )
    )
    found = {row[0]: row for row in rows}
    games = [found[game_id] for game_id in order]
    seats: dict[str, list[int]] = {game_id: [] for game_id, *_ in games}
    if seats:
        held = session.connection().execute(
            sa.select(_SEAT.c.game_id, _SEAT.c.seat)
            .where(_SEAT.c.game_id.in_(list(seats)), _held_by(address))
            .order_by(_SEAT.c.seat)
        )
        for game_id, seat in held:
            seats[game_id].append(seat)
    return [
        Finished(game_id, name, result, at, tuple(seats[game_id]))
        for game_id, name, result, at in games
    ]
