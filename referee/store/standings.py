"""Where the games of many players stand, in one statement: what players' event streams read.

A stream of a player's games (`GET /v1/me/events`) compares these rows
with the ones it read before; it never reads a state, so a row holds only
the game's public fields, the seats the address holds, and whether the
referee mails that address in full.
"""

from __future__ import annotations

from collections.abc import Collection
from dataclasses import dataclass
from typing import Any

import sqlalchemy as sa
from sqlmodel import Session

from referee.store.tables import Address, AddressState, Game, Seat, core_table

_GAME = core_table(Game)
_SEAT = core_table(Seat)
_ADDRESS = core_table(Address)


@dataclass(frozen=True, slots=True)
class Held:
    """One game of one address (already normal), as a player's stream sees it."""

    address: str
    game_id: str
    name: str
    version: int
    status: str
    to_act: tuple[int, ...]
    result: dict[str, Any] | None
    created_at: str
    updated_at: str
    trusted: bool
    # Whether the address accepted the referee's mail (else at most invited).
    accepted: bool
    mine: tuple[int, ...]


def held(
    session: Session,
    addresses: Collection[str],
    *,
    game_ids: Collection[str] | None = None,
    since: str | None = None,
) -> list[Held]:
    """The games the addresses hold seats in: of `game_ids` only when given, and changed
    after `since` (a stamp) only when given. One statement, on the index of lower(email)."""
    if not addresses:
        return []
    owner = sa.func.lower(_SEAT.c.email)
    query = (
        sa.select(
            owner.label("address"),
            _GAME.c.id,
            _GAME.c.name,
            _GAME.c.version,
            _GAME.c.status,
            _GAME.c.to_act,
            _GAME.c.result,
            _GAME.c.created_at,
            _GAME.c.updated_at,
            _GAME.c.trusted,
            _ADDRESS.c.state,
            _SEAT.c.seat,
        )
        .select_from(
            _SEAT.join(_GAME, _GAME.c.id == _SEAT.c.game_id).outerjoin(
                _ADDRESS, _ADDRESS.c.address == owner
            )
        )
        # A seat handed to a bot is the bot's now: its turns are not the person's.
        .where(owner.in_(sorted(addresses)), _SEAT.c.bot.is_(None))
    )
    if game_ids is not None:
        query = query.where(_GAME.c.id.in_(sorted(game_ids)))
    if since is not None:
        query = query.where(_GAME.c.updated_at > since)
    mine: dict[tuple[str, str], list[int]] = {}
    first: dict[tuple[str, str], Any] = {}
    for row in session.connection().execute(query):
        key = (row.address, row.id)
        mine.setdefault(key, []).append(row.seat)
        first.setdefault(key, row)
    return [
        Held(
            address=row.address,
            game_id=row.id,
            name=row.name,
            version=row.version,
            status=row.status,
            to_act=tuple(row.to_act),
            result=row.result,
            created_at=row.created_at,
            updated_at=row.updated_at,
            trusted=bool(row.trusted),
            accepted=row.state == AddressState.ACCEPTED,
            mine=tuple(sorted(mine[key])),
        )
        for key, row in first.items()
    ]
