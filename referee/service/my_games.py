"""A player's games: every game it holds a seat in, its turns first.

The list puts the games where it is the player's turn first, soonest
deadline first; then the others by deadline; then the newest. It is read
from three statements whatever the number of games: every game held, with
what orders it (`player_seats.games_held`); the vacations that hold their clocks,
found by the player's address (none when no clock runs); sorted here (a
player holds hundreds of games, not millions); then the names and results
of the page's games alone (`player_seats.shown`), for the two lists of `/me` at once.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from datetime import datetime
from typing import TYPE_CHECKING, Any

from referee.i18n import _
from referee.service import refusals
from referee.service.players import Player
from referee.service.vacations import held_due_times
from referee.store import player_seats
from referee.store.tables import Game, GameStatus

if TYPE_CHECKING:
    from sqlmodel import Session

    from referee.service import Referee

MAX_PAGE = 200


@dataclass(frozen=True, slots=True)
class SeatShown:
    seat: int
    name: str
    # Whether the player asking holds this seat.
    me: bool
    # The public name of the player holding it, where a person does and chose one.
    profile: str | None = None


@dataclass(frozen=True, slots=True)
class MyGame:
    """One row of a player's list of games."""

    id: str
    game: str
    status: str
    seats: list[SeatShown]
    to_act: list[int]
    # Whether one of the player's seats must act now.
    my_turn: bool
    # When the seats to act run out of time (None: no deadline).
    deadline: datetime | None
    version: int
    created_at: str
    updated_at: str
    result: dict[str, Any] | None


@dataclass(frozen=True, slots=True)
class MyGames:
    games: list[MyGame]
    # Where the next page starts (None: this was the last).
    next_cursor: str | None


def _row(
    held: player_seats.HeldGame, shown: player_seats.GameShown, due: datetime | None
) -> MyGame:
    mine = set(held.mine)
    return MyGame(
        id=held.id,
        game=held.name,
        status=held.status,
        seats=[
            SeatShown(seat, name, seat in mine, profile)
            for seat, (name, profile) in enumerate(
                zip(shown.names, shown.profiles or [None] * len(shown.names), strict=True)
            )
        ],
        to_act=held.to_act,
        my_turn=not mine.isdisjoint(held.to_act),
        deadline=due,
        version=held.version,
        created_at=held.created_at,
        updated_at=held.updated_at,
        result=shown.result,
    )


def _in_order(
    held: list[player_seats.HeldGame], dues: dict[str, datetime | None]
) -> list[player_seats.HeldGame]:
    """My turn first; then the soonest deadline (none last); then the newest.

    Sorted on the rows as read, in stable passes from the last key to the
    first, so that no time is parsed but the deadlines' (the stamps sort as
    times): a row is built (`_row`) only for the page shown.
    """
    ordered = sorted(held, key=lambda game: game.id)
    ordered.sort(key=lambda game: game.created_at, reverse=True)

    def turn_and_deadline(game: player_seats.HeldGame) -> tuple[bool, float]:
        due = dues[game.id]
        waiting = set(game.mine).isdisjoint(game.to_act)
        return (waiting, math.inf if due is None else due.timestamp())

    ordered.sort(key=turn_and_deadline)
    return ordered


def my_games(
    referee: Referee,
    player: Player,
    *,
    status: str | None = None,
    my_turn: bool = False,
    cursor: str | None = None,
    limit: int = 50,
) -> MyGames:
    """A page of the player's games, in the list's order.

    The cursor is a position in that order: a game that changes place
    between two pages (a turn was played) may show on both or on neither,
    as in any list of live things; the first page is always whole.
    """
    start = _position(cursor)
    with referee.db.reading() as session:
        ordered = _ordered(session, player, status)
        if my_turn:
            ordered = [row for row in ordered if not set(row[0].mine).isdisjoint(row[0].to_act)]
        page = ordered[start : start + limit]
        shown = player_seats.shown(session, [game.id for game, _due in page])
    more = start + limit < len(ordered)
    return MyGames(_rows(page, shown), str(start + limit) if more else None)


def first_pages(referee: Referee, player: Player, limits: dict[str, int]) -> dict[str, MyGames]:
    """The first page of the list of each status in `limits` (of its size), each as
    `my_games(status=...)` gives it, read together: the page `/me` shows two."""
    with referee.db.reading() as session:
        ordered = _ordered(session, player, None)
        # The order is total: a status's games keep in it the order they have alone.
        games = {status: [row for row in ordered if row[0].status == status] for status in limits}
        pages = {status: games[status][:limit] for status, limit in limits.items()}
        shown = player_seats.shown(
            session, [game.id for page in pages.values() for game, _due in page]
        )
    return {
        status: MyGames(
            _rows(page, shown), str(limits[status]) if len(games[status]) > len(page) else None
        )
        for status, page in pages.items()
    }


_Ordered = list[tuple[player_seats.HeldGame, datetime | None]]


def _ordered(session: Session, player: Player, status: str | None) -> _Ordered:
    """Every game the player holds (of `status`) in the list's order, with its deadline."""
    held = player_seats.games_held(session, player.address, status)
    dues: dict[str, datetime | None] = dict.fromkeys((game.id for game in held), None)
    # Deadlines as they stand, vacations counted: they order the list. A list of
    # finished games (or games without deadlines) has no clock to look up.
    if any(game.status == GameStatus.ACTIVE and game.deadline_seconds is not None for game in held):
        dues = held_due_times(session, player.address, held)
    return [(game, dues[game.id]) for game in _in_order(held, dues)]


def _rows(page: _Ordered, shown: dict[str, player_seats.GameShown]) -> list[MyGame]:
    return [_row(game, shown[game.id], due) for game, due in page]


def _position(cursor: str | None) -> int:
    if cursor is None:
        return 0
    if not cursor.isdigit() or len(cursor) > 9:
        raise refusals.BadRequest(_("the cursor is not one this list gave"))
    return int(cursor)


@dataclass(frozen=True, slots=True)
class HeldSeat:
    """The player's (first) seat in one game, with what tells whether its links still work."""

    seat: int
    status: str
    updated_at: str


def held_seat(referee: Referee, player: Player, game_id: str) -> HeldSeat | None:
    """The player's first seat in the game `game_id`, or None when it holds none there
    (the page of an open game that started links its players to their seats)."""
    with referee.db.reading() as session:
        held = player_seats.seat_numbers(session, player.address, game_id)
        game = session.get(Game, game_id) if held else None
        if game is None:
            return None
        return HeldSeat(held[0], game.status, game.updated_at)
