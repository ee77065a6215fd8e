"""Mail addresses: each one's consent to the referee's mail, its tokens, its invitation claims.

An address the referee has never heard from is `invited`; it becomes
`accepted` by the link in its invitation or a reply saying `accept`, and
`stopped` by the unsubscribe link of any mail. What may be mailed to it
follows from that state, asked at send time (`referee.delivery.mail_consent`).
"""

from __future__ import annotations

from datetime import datetime, timedelta
from typing import Any

import sqlalchemy as sa
from sqlalchemy import func, or_, update
from sqlalchemy.dialects import postgresql, sqlite
from sqlmodel import Session, col, select

from referee.store.clock import now, stamp
from referee.store.db import Database
from referee.store.keys import address_token
from referee.store.tables import (
    Address,
    AddressState,
    Game,
    GameStatus,
    Seat,
    core_table,
)

_ADDRESS = core_table(Address)
# Two games naming one new address at once: one row goes in, the other finds it.
_INSERT = {
    "postgresql": postgresql.insert(_ADDRESS).on_conflict_do_nothing(),
    "sqlite": sqlite.insert(_ADDRESS).on_conflict_do_nothing(),
}


def normal(address: str) -> str:
    """Addresses are compared without case (as the inbound sender check does)."""
    return address.strip().lower()


def ensure(session: Session, secret: bytes, address: str) -> None:
    """Know `address` (invited, never mailed yet) unless it is known already."""
    known = normal(address)
    dialect = session.get_bind().dialect.name
    session.connection().execute(
        _INSERT[dialect].values(
            address=known,
            state=AddressState.INVITED,
            accept_token=address_token(secret, "accept", known),
            stop_token=address_token(secret, "stop", known),
            bounce_token=address_token(secret, "bounce", known),
            created_at=now(),
        )
    )


def bounced_out(email: sa.ColumnElement[str | None]) -> sa.ColumnElement[bool]:
    """Whether the address in `email` (a column) bounced too often to be mailed
    (`referee.store.bounce_reports`)."""
    return (
        sa.select(_ADDRESS.c.address)
        .where(_ADDRESS.c.address == func.lower(email), _ADDRESS.c.bounced_at.is_not(None))
        .exists()
    )


def find(session: Session, address: str) -> Address | None:
    return session.get(Address, normal(address))


def by_token(session: Session, purpose: str, token: str) -> Address | None:
    """The address whose `accept` or `stop` link carries `token`."""
    if not token.isalnum() or len(token) > 64:
        return None
    column = Address.accept_token if purpose == "accept" else Address.stop_token
    return session.exec(select(Address).where(column == token.lower())).first()


def claim_invitation(
    db: Database, address: str, row_id: int, moment: datetime, every: float
) -> bool:
    """May outbox row `row_id` send `address` its invitation? One per `every` seconds.

    The row that claimed it may claim it again (a retry after a refused send).
    """
    cut = stamp(moment - timedelta(seconds=every))
    with db.transaction() as session:
        claimed = session.connection().execute(
            update(Address)
            .where(
                col(Address.address) == normal(address),
                col(Address.state) == AddressState.INVITED,
                or_(
                    col(Address.invited_row) == row_id,
                    col(Address.invited_at).is_(None),
                    col(Address.invited_at) < cut,
                ),
            )
            .values(invited_at=stamp(moment), invited_row=row_id)
        )
        return claimed.rowcount == 1


def accept(session: Session, known: Address) -> bool:
    """The address accepts mail; False if it had accepted already."""
    if known.state == AddressState.ACCEPTED:
        return False
    known.state = AddressState.ACCEPTED
    known.accepted_at = now()
    session.add(known)
    return True


def unlinked_seats(session: Session, address: str) -> list[Seat]:
    """The address's seats in running games that never got their personal link."""
    return list(
        session.exec(
            select(Seat)
            .join(Game, col(Game.id) == col(Seat.game_id))
            .where(
                col(Game.status) == GameStatus.ACTIVE,
                col(Seat.linked_at).is_(None),
                func.lower(col(Seat.email)) == normal(address),
            )
        )
    )


def stop(session: Session, known: Address) -> None:
    """No more mail to this address, from any game, until it accepts again."""
    known.state = AddressState.STOPPED
    known.stopped_at = now()
    session.add(known)


def linked(db: Database, game_id: str, seat: int) -> None:
    """A mail carrying the seat's personal link went out."""
    _set_once(db, game_id, seat, Seat.linked_at, now())


def fix_language(db: Database, game_id: str, seat: int, language: str) -> None:
    """Store the seat's mail language, unless another mail fixed it first."""
    _set_once(db, game_id, seat, Seat.language, language)


def _set_once(db: Database, game_id: str, seat: int, column: Any, value: str) -> None:
    """Set the seat's `column` to `value` where it is still None."""
    with db.transaction() as session:
        session.execute(
            update(Seat)
            .where(col(Seat.game_id) == game_id, col(Seat.seat) == seat, col(column).is_(None))
            .values({column.key: value})
        )
