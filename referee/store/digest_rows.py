"""The digest's queries: who is due a digest at an hour, claiming that hour, and each one's turns.

Set-based on purpose: the digest of an hour is written for every player
of that hour at once (10,000 players with 5 games each in a few
statements per batch), never with a query per player or per game.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import sqlalchemy as sa
from sqlalchemy.dialects.postgresql import JSONB
from sqlmodel import Session, col, select

from referee.store.mail_settings import DEFAULT_DIGEST_HOURS
from referee.store.tables import (
    Address,
    AddressState,
    Game,
    GameStatus,
    Mute,
    Seat,
    TurnMail,
    core_table,
)

_ADDRESS = core_table(Address)
_GAME = core_table(Game)
_SEAT = core_table(Seat)
_MUTE = core_table(Mute)
_SEAT_ADDRESS = sa.func.lower(_SEAT.c.email)


@dataclass(frozen=True, slots=True)
class Slot:
    """The local hours due at a sweep in some time zones (None: the players who chose
    none, in UTC), and the stamp of their digest: the UTC start of the local hour."""

    zones: tuple[str | None, ...]
    hours: tuple[int, ...]
    stamp: str


def _chose_hour(dialect: str, hours: Sequence[int]) -> sa.ColumnElement[bool]:
    """Whether an address's `digest_hours` (a JSON list, NULL for the default) holds one
    of `hours`."""
    chosen = _ADDRESS.c.digest_hours
    default = sa.true() if set(hours) & set(DEFAULT_DIGEST_HOURS) else sa.false()
    if dialect == "postgresql":
        listed = sa.or_(*(sa.cast(chosen, JSONB).contains([hour]) for hour in hours))
    else:
        each = sa.func.json_each(chosen).table_valued("value")
        listed = sa.select(each.c.value).where(each.c.value.in_(list(hours))).exists()
    return (chosen.is_(None) & default) | (chosen.is_not(None) & listed)


def _in_zones(zones: Sequence[str | None]) -> sa.ColumnElement[bool]:
    named = [zone for zone in zones if zone is not None]
    found = _ADDRESS.c.time_zone.in_(named)
    return found | _ADDRESS.c.time_zone.is_(None) if None in zones else found


def _not_written(hour_stamp: str) -> sa.ColumnElement[bool]:
    return _ADDRESS.c.digest_hour.is_(None) | (_ADDRESS.c.digest_hour != hour_stamp)


def zones(session: Session) -> list[str | None]:
    """The time zones of the players told by digest (None: not chosen), each once."""
    query = sa.select(_ADDRESS.c.time_zone).where(_ADDRESS.c.turn_mail == TurnMail.DIGEST)
    return list(session.connection().execute(query.distinct()).scalars())


def due(session: Session, slots: Sequence[Slot]) -> list[tuple[str, str]]:
    """The addresses whose zone is in a slot, which want a digest at one of its hours and
    have none written for its stamp yet, with that stamp; leaving out those the referee
    may not mail at all.

    Why by zone: the local hour needs the zone's rules of daylight-saving time, which
    Python has for every IANA zone and the stores do not share (SQLite has none), and
    the zones of the digest players are few (`zones`, one short read of the partial
    index of digest players). So the sweep reckons each zone's hour and stamp itself,
    and this one statement, whatever the number of zones, takes the slots (one per
    distinct local hour and stamp: zones alike at that moment share one) as
    alternatives of its condition, read from that partial index as a single UTC hour
    was."""
    if not slots:
        return []
    dialect = session.get_bind().dialect.name
    stamps = {zone: slot.stamp for slot in slots for zone in slot.zones}
    query = (
        sa.select(_ADDRESS.c.address, _ADDRESS.c.time_zone)
        .where(
            _ADDRESS.c.turn_mail == TurnMail.DIGEST,
            _ADDRESS.c.state != AddressState.STOPPED,
            _ADDRESS.c.bounced_at.is_(None),
            sa.or_(
                *(
                    _in_zones(slot.zones)
                    & _chose_hour(dialect, slot.hours)
                    & _not_written(slot.stamp)
                    for slot in slots
                )
            ),
        )
        .order_by(_ADDRESS.c.address)
    )
    return [(address, stamps[zone]) for address, zone in session.connection().execute(query)]


def claim(connection: sa.Connection, addresses: Sequence[str], hour_stamp: str) -> list[str]:
    """Mark the hour's digest written for those of `addresses` that have none yet; returns
    them. One conditional UPDATE: of two sweeps racing, each address goes to one."""
    if not addresses:
        return []
    claimed = connection.execute(
        sa.update(_ADDRESS)
        .where(
            _ADDRESS.c.address.in_(list(addresses)),
            _ADDRESS.c.turn_mail == TurnMail.DIGEST,
            _not_written(hour_stamp),
        )
        .values(digest_hour=hour_stamp)
        .returning(_ADDRESS.c.address)
    )
    return list(claimed.scalars())


@dataclass(frozen=True, slots=True)
class HeldSeat:
    """A seat a player holds in a running game it may be mailed about, not muted."""

    address: str
    game_id: str
    seat: int
    to_act: list[int]
    version: int
    updated_at: str
    deadline_seconds: int | None
    created_at: str

    # As a deadline reads a game (`deadlines.Timed`): the seats listed are of running games.
    @property
    def id(self) -> str:
        return self.game_id

    @property
    def status(self) -> str:
        return GameStatus.ACTIVE


def running_seats(connection: sa.Connection, addresses: Sequence[str]) -> list[HeldSeat]:
    """The seats `addresses` hold in running games that are not muted by them and whose
    mail they may get in full (they accepted the referee's mail, or the game is trusted)."""
    if not addresses:
        return []
    muted = (
        sa.select(_MUTE.c.game_id)
        .where(_MUTE.c.address == _ADDRESS.c.address, _MUTE.c.game_id == _SEAT.c.game_id)
        .exists()
    )
    query = (
        sa.select(
            _ADDRESS.c.address,
            _SEAT.c.game_id,
            _SEAT.c.seat,
            _GAME.c.to_act,
            _GAME.c.version,
            _GAME.c.updated_at,
            _GAME.c.deadline_seconds,
            _GAME.c.created_at,
        )
        .select_from(
            _SEAT.join(_GAME, _GAME.c.id == _SEAT.c.game_id).join(
                _ADDRESS, _ADDRESS.c.address == _SEAT_ADDRESS
            )
        )
        .where(
            _SEAT_ADDRESS.in_(list(addresses)),
            _GAME.c.status == GameStatus.ACTIVE,
            (_ADDRESS.c.state == AddressState.ACCEPTED) | _GAME.c.trusted,
            ~muted,
            # A seat handed to a bot is not its player's to play any more.
            _SEAT.c.bot.is_(None),
        )
    )
    return [HeldSeat(*row) for row in connection.execute(query)]


@dataclass(frozen=True, slots=True)
class Listed:
    """What a digest shows of one game: its row, its players' names in seat order and
    each seat's bot level (None: a person's)."""

    game: Game
    names: list[str]
    bots: list[str | None]


def listed_games(session: Session, game_ids: Sequence[str]) -> dict[str, Listed]:
    """The games a digest lists, with their players' names: two queries for all of them."""
    wanted = sorted(set(game_ids))
    found = {game.id: game for game in session.exec(select(Game).where(col(Game.id).in_(wanted)))}
    listed = {game_id: Listed(game, [], []) for game_id, game in found.items()}
    rows = session.connection().execute(
        sa.select(_SEAT.c.game_id, _SEAT.c.name, _SEAT.c.bot)
        .where(_SEAT.c.game_id.in_(wanted))
        .order_by(_SEAT.c.game_id, _SEAT.c.seat)
    )
    for game_id, name, bot in rows:
        listed[game_id].names.append(name)
        listed[game_id].bots.append(bot)
    return listed


def last_hours(connection: sa.Connection, addresses: Sequence[str]) -> dict[str, str | None]:
    """The hour (a stamp) of each address's last digest, read before `claim` moves it:
    what happened after it is news for the next one."""
    if not addresses:
        return {}
    query = sa.select(_ADDRESS.c.address, _ADDRESS.c.digest_hour).where(
        _ADDRESS.c.address.in_(list(addresses))
    )
    return {address: hour for address, hour in connection.execute(query)}


def carriers(connection: sa.Connection, addresses: Sequence[str]) -> dict[str, tuple[str, int]]:
    """A seat through which each of `addresses` may be mailed in full (its newest, as
    `player_seats.mailing_seat` chooses), for a digest that lists no game: one statement."""
    if not addresses:
        return {}
    query = (
        sa.select(_SEAT_ADDRESS, _SEAT.c.game_id, _SEAT.c.seat)
        .select_from(
            _SEAT.join(_GAME, _GAME.c.id == _SEAT.c.game_id).join(
                _ADDRESS, _ADDRESS.c.address == _SEAT_ADDRESS
            )
        )
        .where(
            _SEAT_ADDRESS.in_(list(addresses)),
            (_ADDRESS.c.state == AddressState.ACCEPTED) | _GAME.c.trusted,
        )
        .order_by(_GAME.c.created_at.desc(), _SEAT.c.seat)
    )
    found: dict[str, tuple[str, int]] = {}
    for address, game_id, seat in connection.execute(query):
        found.setdefault(address, (game_id, seat))
    return found
