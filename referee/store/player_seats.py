"""Players: the addresses the referee may mail, and the seats each holds, in every game.

A player is an address, compared without case (`addresses.normal`). It is
one the referee may mail in full: an address that accepted its mail, or one
a trusted client (the API key) seated, and that neither stopped the mail nor
bounced out. Its seats are every seat given that address, however it was invited.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import sqlalchemy as sa
from sqlmodel import Session, col, select

from referee.store.addresses import normal
from referee.store.tables import Address, AddressState, Game, Seat, core_table


def _held_by(address: str) -> sa.ColumnElement[bool]:
    """A seat given `address` (already normal), matched on the index of lower(email)."""
    return sa.func.lower(col(Seat.email)) == address


def seats_of(session: Session, address: str) -> Sequence[tuple[Game, Seat]]:
    """Every seat the address holds, with its game, newest game first."""
    query = (
        select(Game, Seat)
        .join(Seat, col(Seat.game_id) == col(Game.id))
        .where(_held_by(normal(address)))
        .order_by(col(Game.created_at).desc(), col(Seat.seat))
    )
    return session.exec(query).all()


def seat_numbers(session: Session, address: str, game_id: str) -> list[int]:
    """The seats the address holds in one game, in seat order."""
    query = (
        select(Seat.seat)
        .where(col(Seat.game_id) == game_id, _held_by(normal(address)))
        .order_by(col(Seat.seat))
    )
    return list(session.exec(query))


def mailing_seat(session: Session, address: str) -> tuple[str, int] | None:
    """A seat through which the player at `address` may be mailed in full, or None when
    the address is no player: never heard of, stopped, bounced out, or only invited
    by games of untrusted clients. The newest such seat is chosen."""
    known = session.get(Address, normal(address))
    if known is None or known.state == AddressState.STOPPED or known.bounced_at is not None:
        return None
    query = (
        select(Seat.game_id, Seat.seat)
        .join(Game, col(Game.id) == col(Seat.game_id))
        .where(_held_by(known.address))
        .order_by(col(Game.created_at).desc(), col(Seat.seat))
        .limit(1)
    )
    if known.state != AddressState.ACCEPTED:
        query = query.where(col(Game.trusted))
    found = session.exec(query).first()
    return None if found is None else (found[0], found[1])


@dataclass(frozen=True, slots=True)
class HeldGame:
    """A game as a player's list orders it: the row's public fields and the seats it holds."""

    id: str
    name: str
    status: str
    version: int
    to_act: list[int]
    created_at: str
    updated_at: str
    deadline_seconds: int | None
    mine: tuple[int, ...]


@dataclass(frozen=True, slots=True)
class GameShown:
    """What a player's list shows of a game beyond what orders it."""

    # Every seat's name, in seat order.
    names: tuple[str, ...]
    result: dict[str, Any] | None
    # Each seat's player's public name, where a person holds it and chose one.
    profiles: tuple[str | None, ...] = ()


_GAME = core_table(Game)
_SEAT = core_table(Seat)
_ADDRESS = core_table(Address)


def games_held(session: Session, address: str, status: str | None = None) -> list[HeldGame]:
    """Every game the address holds a seat in (of `status`), in no particular order.

    One statement whatever the number of games, reading no state, no names
    and no result: what a list needs to order them all. `shown` reads the
    rest for the page shown.
    """
    # A seat handed to a bot is the bot's now: its turns are not the person's.
    holds = sa.and_(sa.func.lower(_SEAT.c.email) == normal(address), _SEAT.c.bot.is_(None))
    query = (
        sa.select(
            _GAME.c.id,
            _GAME.c.name,
            _GAME.c.status,
            _GAME.c.version,
            # As text, decoded here: the driver's JSON loader costs several times
            # `json.loads`, and this is read for every game a player holds.
            sa.cast(_GAME.c.to_act, sa.Text).label("to_act"),
            _GAME.c.created_at,
            _GAME.c.updated_at,
            _GAME.c.deadline_seconds,
            _SEAT.c.seat,
        )
        .select_from(_SEAT.join(_GAME, _GAME.c.id == _SEAT.c.game_id))
        .where(holds)
    )
    if status is not None:
        query = query.where(_GAME.c.status == status)
    # Fetched whole and unpacked by position: a row at a time, or each column
    # by its name, costs more than the rows' own work.
    rows = session.connection().execute(query).all()
    mine: dict[str, list[int]] = {}
    for row in rows:
        mine.setdefault(row[0], []).append(row[-1])
    held: dict[str, HeldGame] = {}
    for game_id, name, state, version, to_act, created_at, updated_at, seconds, _seat in rows:
        if game_id not in held:
            held[game_id] = HeldGame(
                game_id,
                name,
                state,
                version,
                json.loads(to_act),
                created_at,
                updated_at,
                seconds,
                tuple(sorted(mine[game_id])),
            )
    return list(held.values())


def shown(session: Session, game_ids: list[str]) -> dict[str, GameShown]:
    """The seats' names and the result of each of these games, in one statement."""
    if not game_ids:
        return {}
    person = sa.and_(_ADDRESS.c.address == sa.func.lower(_SEAT.c.email), _SEAT.c.bot.is_(None))
    query = (
        sa.select(
            _SEAT.c.game_id, _SEAT.c.seat, _SEAT.c.name, _GAME.c.result, _ADDRESS.c.public_name
        )
        .select_from(_SEAT.join(_GAME, _GAME.c.id == _SEAT.c.game_id).outerjoin(_ADDRESS, person))
        .where(_SEAT.c.game_id.in_(game_ids))
    )
    seats: dict[str, list[tuple[int, str, str | None]]] = {}
    results: dict[str, Any] = {}
    for game_id, seat, name, result, public in session.connection().execute(query).all():
        seats.setdefault(game_id, []).append((seat, name, public))
        results[game_id] = result
    return {
        game_id: GameShown(
            tuple(name for _seat, name, _public in sorted(held, key=_first)),
            results[game_id],
            tuple(public for _seat, _name, public in sorted(held, key=_first)),
        )
        for game_id, held in seats.items()
    }


def _first(seat: tuple[int, str, str | None]) -> int:
    return seat[0]
