"""The rated games' rows: the lock ratings are written under, the finished games still
to take in, what deciding whether a game counts reads of it, the rated games in order,
and every skill and change (for rebuilding them).

Which games count and how they move skills is the service's
(`referee.service.rating`); this module reads and writes the rows.
"""

from __future__ import annotations

from collections.abc import Collection, Sequence
from dataclasses import dataclass, field

import sqlalchemy as sa
from sqlalchemy.dialects import postgresql, sqlite
from sqlmodel import Session, col, select

from referee.store.addresses import normal
from referee.store.tables import (
    Address,
    Game,
    GameStatus,
    Move,
    RatedGame,
    Rating,
    RatingChange,
    Seat,
    SeatHandover,
    Seek,
    Setting,
    Source,
    core_table,
)

# The `Setting` row whose lock every writer of ratings holds: one game at a time,
# in order, whichever worker takes it in.
LOCK_KEY = "ratings"
_SETTING = core_table(Setting)
_GAME = core_table(Game)
_SEAT = core_table(Seat)
_ADDRESS = core_table(Address)
_INSERT_LOCK = {
    "postgresql": postgresql.insert(_SETTING).on_conflict_do_nothing(),
    "sqlite": sqlite.insert(_SETTING).on_conflict_do_nothing(),
}


def lock(session: Session) -> None:
    """Take the ratings' lock until `session` ends (made on first use). On SQLite the
    write transaction holds the file's one lock already."""
    connection = session.connection()
    insert = _INSERT_LOCK[connection.dialect.name]
    connection.execute(insert.values(key=LOCK_KEY, value="the ratings' writers' lock"))
    connection.execute(
        sa.select(_SETTING.c.key).where(_SETTING.c.key == LOCK_KEY).with_for_update()
    )


def unrated(session: Session, limit: int) -> list[Game]:
    """Up to `limit` finished games the ratings have not taken in, in the order they
    take them: by when each ended (its last change), then id."""
    taken = select(RatedGame.game_id).where(RatedGame.game_id == Game.id)
    query = (
        select(Game)
        .where(Game.status == GameStatus.OVER, sa.not_(col(Game.taken_in)), ~taken.exists())
        .order_by(col(Game.updated_at), col(Game.id))
        .limit(limit)
    )
    return list(session.exec(query))


@dataclass(frozen=True, slots=True)
class SeatFacts:
    """A seat as the ratings see it: whose it is and whether a bot ever held it."""

    seat: int
    # The player's address (normalized), None for a seat with none.
    address: str | None
    public_name: str | None
    bot: str | None
    bot_since: int | None


@dataclass(slots=True)
class GameFacts:
    """What deciding whether a finished game counts reads of it."""

    game_id: str
    on_timeout: str | None
    # Its seek's `rated`, or None when it came from no seek.
    seek_rated: bool | None = None
    seats: list[SeatFacts] = field(default_factory=list)
    handed_over: bool = False
    # The sources of its accepted moves (rest, mail, timeout, bot).
    sources: set[str] = field(default_factory=set)


def facts(session: Session, games: Sequence[Game]) -> dict[str, GameFacts]:
    """`GameFacts` of each of `games`, read in a few statements for all of them."""
    found = {game.id: GameFacts(game.id, game.on_timeout) for game in games}
    if not found:
        return found
    ids = list(found)
    for game_id, rated in session.exec(
        select(Seek.game_id, Seek.rated).where(col(Seek.game_id).in_(ids))
    ):
        if game_id is not None:
            found[game_id].seek_rated = rated
    seats = session.connection().execute(
        sa.select(
            _SEAT.c.game_id,
            _SEAT.c.seat,
            _SEAT.c.email,
            _SEAT.c.bot,
            _SEAT.c.bot_since,
            _ADDRESS.c.public_name,
        )
        .select_from(_SEAT.outerjoin(_ADDRESS, sa.func.lower(_SEAT.c.email) == _ADDRESS.c.address))
        .where(_SEAT.c.game_id.in_(ids))
        .order_by(_SEAT.c.game_id, _SEAT.c.seat)
    )
    for game_id, seat, email, bot, bot_since, name in seats:
        address = None if email is None else normal(email)
        found[game_id].seats.append(SeatFacts(seat, address, name, bot, bot_since))
    for game_id in session.exec(
        select(SeatHandover.game_id).where(col(SeatHandover.game_id).in_(ids)).distinct()
    ):
        found[game_id].handed_over = True
    sources = select(Move.game_id, Move.source).where(
        col(Move.game_id).in_(ids), col(Move.source).in_([Source.BOT, Source.TIMEOUT])
    )
    for game_id, source in session.exec(sources.distinct()):
        found[game_id].sources.add(source)
    return found


def add_rated_game(session: Session, rated: RatedGame) -> int:
    """Write that a game was taken in; its `seq`, the order it was taken in."""
    session.add(rated)
    session.flush()
    session.connection().execute(
        sa.update(_GAME).where(_GAME.c.id == rated.game_id).values(taken_in=True)
    )
    assert rated.seq is not None
    return rated.seq


def rated_games(session: Session, after: int, limit: int) -> list[RatedGame]:
    """Up to `limit` rated games after `seq`, in the order they were taken in."""
    query = (
        select(RatedGame)
        .where(col(RatedGame.seq) > after)
        .order_by(col(RatedGame.seq))
        .limit(limit)
    )
    return list(session.exec(query))


def games_by_id(session: Session, game_ids: Collection[str]) -> dict[str, Game]:
    if not game_ids:
        return {}
    return {game.id: game for game in session.exec(select(Game).where(col(Game.id).in_(game_ids)))}


def every_rating(session: Session) -> list[Rating]:
    return list(session.exec(select(Rating)))


def every_change(session: Session) -> list[RatingChange]:
    return list(session.exec(select(RatingChange)))
