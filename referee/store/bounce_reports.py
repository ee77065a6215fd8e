"""Bounces: where delivery reports come back, and what they tell of an address.

Every mail to an address goes out with the envelope sender
`bounce+<token>@<domain>` (VERP), the token an HMAC of the address with the
server secret (`keys.address_token`), kept on its `address` row so that a
report finds it. Hard bounces are counted per address since its last sign
of life; at `REFEREE_MAIL_BOUNCES` the address is marked `bounced_at`, and
the mail channel no longer reaches it (`addresses.bounced_out`).
"""

from __future__ import annotations

import sqlalchemy as sa
from sqlmodel import Session, col, select

from referee.store.clock import now
from referee.store.db import Database
from referee.store.keys import address_token
from referee.store.tables import Address, Game, GameStatus, Seat, core_table

_ADDRESS = core_table(Address)


def token_of(db: Database, secret: bytes, known: Address) -> str:
    """The address's bounce token, kept on its row the first time (addresses known
    before bounces were read have none yet)."""
    if known.bounce_token is not None:
        return known.bounce_token
    token = address_token(secret, "bounce", known.address)
    with db.transaction() as session:
        session.connection().execute(
            sa.update(_ADDRESS)
            .where(_ADDRESS.c.address == known.address, _ADDRESS.c.bounce_token.is_(None))
            .values(bounce_token=token)
        )
    return token


def by_token(session: Session, token: str) -> Address | None:
    """The address a bounce token names, if any."""
    if not token.isalnum() or len(token) > 64:
        return None
    return session.exec(select(Address).where(Address.bounce_token == token.lower())).first()


def hard_bounce(session: Session, known: Address, threshold: int) -> bool:
    """Count one hard bounce of `known`; True when this one makes it bounce out."""
    known.bounces += 1
    out = known.bounced_at is None and known.bounces >= threshold
    if out:
        known.bounced_at = now()
    session.add(known)
    return out


def alive(connection: sa.Connection, address: str) -> None:
    """A sign of life from the address: its bounces are forgotten, and it is mailed again."""
    connection.execute(
        sa.update(_ADDRESS)
        .where(_ADDRESS.c.address == address.strip().lower(), _ADDRESS.c.bounces > 0)
        .values(bounces=0, bounced_at=None)
    )


_SEAT = core_table(Seat)
_GAME = core_table(Game)


def running_seats(session: Session, address: str) -> dict[str, list[int]]:
    """The seats a person plays at `address` in running games, by game: those the
    address bouncing out leaves without mail (a bot's seat reads none)."""
    rows = session.connection().execute(
        sa.select(_SEAT.c.game_id, _SEAT.c.seat)
        .select_from(_SEAT.join(_GAME, _GAME.c.id == _SEAT.c.game_id))
        .where(
            sa.func.lower(_SEAT.c.email) == address,
            _SEAT.c.bot.is_(None),
            _GAME.c.status == GameStatus.ACTIVE,
        )
        .order_by(_SEAT.c.game_id, _SEAT.c.seat)
    )
    found: dict[str, list[int]] = {}
    for game_id, seat in rows:
        found.setdefault(game_id, []).append(int(seat))
    return found


def bounced(session: Session) -> list[Address]:
    """Every address that bounced out and has not shown a sign of life since, the
    latest first."""
    query = select(Address).where(col(Address.bounced_at).is_not(None))
    return list(session.exec(query.order_by(col(Address.bounced_at).desc())))
