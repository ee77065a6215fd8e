"""What a player's seats did, read for its profile: its games by status, its timeouts and
resignations, how long it took over its last moves, its last finished games.

A profile reads these for the games its player's totals do not hold yet
(`untallied_seats`: games in play, and finished games the ratings' job has
not taken in), and the ratings' job reads them for each game it takes in
(`seats_of_game`), so that what a profile costs follows the player's games
in play, not its history (docs/performance.md). Timeouts and resignations
are counted on partial indexes that hold those moves alone, and the last
moves are looked for in the latest games first.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

import sqlalchemy as sa
from sqlmodel import Session, select

from referee.automatic import FORCED
from referee.engine import RESIGN_NOTATION
from referee.store.addresses import normal
from referee.store.tables import (
    UNTALLIED_ROWS,
    Game,
    Move,
    Seat,
    Source,
    Submission,
    core_table,
)

_GAME = core_table(Game)
_SEAT = core_table(Seat)
_MOVE = core_table(Move)
_SUBMISSION = core_table(Submission)
# Written as literals, not bound: SQLite uses a partial index only for a query whose
# terms name its condition's values (`ix_submission_timeout`, `ix_move_resign`).
_TIMEOUT: sa.ColumnElement[str] = sa.literal_column(f"'{Source.TIMEOUT.value}'")
_RESIGN: sa.ColumnElement[str] = sa.literal_column(f"'{RESIGN_NOTATION}'")
# Games whose moves are read at once while looking for the player's last moves.
_GAMES_A_READ = 50


@dataclass(frozen=True, slots=True)
class HeldSeat:
    """A seat the player holds, with its game's status and times."""

    game_id: str
    seat: int
    status: str
    updated_at: str
    created_at: str


def untallied_seats(session: Session, address: str) -> list[HeldSeat]:
    """The seats the player holds in games its totals do not hold (`Seat.tallied`): in
    play, or finished and not tallied yet; the latest changed game first."""
    rows = session.connection().execute(
        sa.select(
            _SEAT.c.game_id, _SEAT.c.seat, _GAME.c.status, _GAME.c.updated_at, _GAME.c.created_at
        )
        .select_from(_SEAT.join(_GAME, _GAME.c.id == _SEAT.c.game_id))
        .where(sa.func.lower(_SEAT.c.email) == normal(address), UNTALLIED_ROWS)
        .order_by(_GAME.c.updated_at.desc(), _GAME.c.id, _SEAT.c.seat)
    )
    return [HeldSeat(*row) for row in rows]


def mark_tallied(session: Session, game_id: str) -> None:
    """Mark a game's seats as held by their players' totals."""
    session.connection().execute(
        sa.update(_SEAT).where(_SEAT.c.game_id == game_id).values(tallied=True)
    )


def seats_of_game(session: Session, game: Game) -> dict[str, list[HeldSeat]]:
    """A game's seats held by players, by the player's address."""
    held: dict[str, list[HeldSeat]] = {}
    for seat in session.exec(select(Seat).where(Seat.game_id == game.id)):
        if seat.email:
            held.setdefault(normal(seat.email), []).append(
                HeldSeat(game.id, seat.seat, game.status, game.updated_at, game.created_at)
            )
    return held


def games_by_status(held: Sequence[HeldSeat]) -> dict[str, int]:
    """How many games the player holds a seat in, by status (`active`, `over`)."""
    return dict(Counter(status for _, status in {(s.game_id, s.status) for s in held}))


@dataclass(frozen=True, slots=True)
class Tally:
    # Moves the referee played for its seats when their time ran out.
    timeouts: int
    # Games it resigned itself (a forfeit on timeout is a timeout).
    resigned: int


def tally(session: Session, held: Sequence[HeldSeat]) -> Tally:
    """The timeouts and resignations of the seats `held`."""
    seats = {(seat.game_id, seat.seat) for seat in held}
    if not seats:
        return Tally(0, 0)
    games = sorted({game_id for game_id, _ in seats})
    connection = session.connection()
    timeouts = connection.execute(
        sa.select(_MOVE.c.game_id, _MOVE.c.seat, sa.func.count())
        .where(_MOVE.c.game_id.in_(games), _MOVE.c.source == _TIMEOUT)
        .group_by(_MOVE.c.game_id, _MOVE.c.seat)
    )
    resigned = connection.execute(
        sa.select(_MOVE.c.game_id, _MOVE.c.seat).where(
            _MOVE.c.game_id.in_(games),
            _MOVE.c.notation == _RESIGN,
            _MOVE.c.source.not_in([Source.TIMEOUT, FORCED]),
        )
    )
    return Tally(
        timeouts=sum(count for game_id, seat, count in timeouts if (game_id, seat) in seats),
        resigned=len({game_id for game_id, seat in resigned if (game_id, seat) in seats}),
    )


@dataclass(frozen=True, slots=True)
class Answer:
    """One move of the player's and when its turn was asked of it: the game's move
    before it was logged, or the game was made, for its first."""

    asked_at: str
    moved_at: str


def answers(session: Session, held: Sequence[HeldSeat], most: int) -> list[Answer]:
    """The last `most` moves of the seats `held`, latest first: played by the player
    itself or for it on timeout (a bot's moves for its seat are not its).

    A move is never later than its game's last change, so the games are read latest
    changed first, and the search stops once `most` moves are found that are all later
    than the next game's last change: no game after it can hold a later one.
    """
    before = _MOVE.alias("before")
    found: list[Answer] = []
    for start in range(0, len(held), _GAMES_A_READ):
        chunk = held[start : start + _GAMES_A_READ]
        if len(found) == most and found[-1].moved_at >= chunk[0].updated_at:
            break
        made = {seat.game_id: seat.created_at for seat in chunk}
        seats = {(seat.game_id, seat.seat) for seat in chunk}
        rows = session.connection().execute(
            sa.select(_MOVE.c.game_id, _MOVE.c.seat, _MOVE.c.created_at, before.c.created_at)
            .select_from(
                _MOVE.outerjoin(
                    before,
                    sa.and_(before.c.game_id == _MOVE.c.game_id, before.c.seq == _MOVE.c.seq - 1),
                )
            )
            .where(_MOVE.c.game_id.in_(sorted(made)), _MOVE.c.source.not_in([Source.BOT, FORCED]))
        )
        found += [
            Answer(previous or made[game_id], moved)
            for game_id, seat, moved, previous in rows
            if (game_id, seat) in seats
        ]
        found = sorted(found, key=lambda answer: answer.moved_at, reverse=True)[:most]
    return found


@dataclass(frozen=True, slots=True)
class Finished:
    """A finished game of the player's: its result and the seats it held."""

    id: str
    game: str
    result: dict[str, Any] | None
    finished_at: str
    seats: Sequence[int]


def finished_games(session: Session, seats: Mapping[str, Sequence[int]]) -> list[Finished]:
    """The finished games `seats` names, with the seats the player held in each, in its
    order (a finished game's `updated_at` is when its last move was logged)."""
    if not seats:
        return []
    rows = session.connection().execute(
        sa.select(_GAME.c.id, _GAME.c.name, _GAME.c.result, _GAME.c.updated_at).where(
            _GAME.c.id.in_(list(seats))
        )
    )
    found = {row[0]: row for row in rows}
    return [
        Finished(game_id, found[game_id][1], found[game_id][2], found[game_id][3], tuple(held_in))
        for game_id, held_in in seats.items()
        if game_id in found
    ]
