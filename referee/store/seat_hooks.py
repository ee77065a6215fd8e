"""A seat's webhook: setting and dropping it, its health, rotating its signing secret.

Each failed delivery counts against the seat: its next delivery waits for
a backoff (`webhook_retry_at`), and after `REFEREE_WEBHOOK_MAX_FAILURES`
failures in a row the webhook is switched off (`webhook_off_at`), with the
last error kept so the seat can see why (`GET .../webhook`). Switching it
off, or dropping it, skips the seat's waiting webhook deliveries at once;
their mail goes on regardless. Setting the URL again switches it back on.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime, timedelta

from sqlalchemy import update
from sqlalchemy.engine import Connection
from sqlmodel import Session, col, select

from referee.store import delivery
from referee.store.clock import stamp
from referee.store.tables import Seat

# The name of the webhook channel's deliveries (`referee.delivery.webhook`).
CHANNEL = "webhook"


@dataclass(frozen=True, slots=True)
class Health:
    """What a seat may know of its webhook."""

    url: str | None
    active: bool
    failures: int
    last_error: str | None
    retry_at: str | None
    switched_off_at: str | None
    generation: int


def _seat(session: Session, game_id: str, seat: int) -> Seat:
    found = session.exec(
        select(Seat).where(col(Seat.game_id) == game_id, col(Seat.seat) == seat)
    ).one()
    return found


def health(session: Session, game_id: str, seat: int) -> Health:
    row = _seat(session, game_id, seat)
    return Health(
        url=row.webhook_url,
        active=row.webhook_url is not None and row.webhook_off_at is None,
        failures=row.webhook_failures,
        last_error=row.webhook_error,
        retry_at=row.webhook_retry_at,
        switched_off_at=row.webhook_off_at,
        generation=row.webhook_generation,
    )


def set_url(
    session: Session, game_id: str, seat: int, url: str | None, token_id: int | None = None
) -> None:
    """POST `seat`'s notifications to `url` from now on (None: no longer); a clean slate.
    `token_id`: the player token that set it, whose revocation drops it."""
    session.execute(
        update(Seat)
        .where(col(Seat.game_id) == game_id, col(Seat.seat) == seat)
        .values(
            webhook_url=url,
            webhook_failures=0,
            webhook_error=None,
            webhook_retry_at=None,
            webhook_off_at=None,
            webhook_token_id=token_id if url is not None else None,
        )
    )
    if url is None:
        settle_waiting(session.connection(), game_id, seat, "the webhook was removed")


def drop_set_by(session: Session, token_id: int) -> int:
    """Drop every webhook the player token `token_id` set (it was revoked); how many."""
    query = select(Seat.game_id, Seat.seat).where(col(Seat.webhook_token_id) == token_id)
    found = list(session.exec(query))
    for game_id, seat in found:
        set_url(session, game_id, seat, None)
    return len(found)


def rotate(session: Session, game_id: str, seat: int) -> int:
    """A new signing secret for `seat`: returns the generation the key is now made with."""
    row = _seat(session, game_id, seat)
    row.webhook_generation += 1
    session.add(row)
    session.flush()
    return row.webhook_generation


def settle_waiting(connection: Connection, game_id: str, seat: int, why: str) -> None:
    """Skip the seat's webhook deliveries still to go (their mail goes on)."""
    delivery.settle_waiting(connection, CHANNEL, game_id, seat, why)


def succeeded(connection: Connection, game_id: str, seat: int) -> None:
    connection.execute(
        update(Seat)
        .where(col(Seat.game_id) == game_id, col(Seat.seat) == seat)
        .values(webhook_failures=0, webhook_error=None, webhook_retry_at=None)
    )


def failed(
    session: Session,
    game_id: str,
    seat: int,
    error: str,
    moment: datetime,
    backoff: float,
    max_failures: int,
) -> bool:
    """Count one failure against the seat's webhook; True when it is now switched off."""
    row = _seat(session, game_id, seat)
    row.webhook_failures += 1
    row.webhook_error = error[:300]
    row.webhook_retry_at = stamp(moment + timedelta(seconds=backoff))
    off = row.webhook_failures >= max_failures and row.webhook_off_at is None
    if off:
        row.webhook_off_at = stamp(moment)
    session.add(row)
    session.flush()
    if off:
        settle_waiting(
            session.connection(),
            game_id,
            seat,
            f"the webhook was switched off after {row.webhook_failures} failures",
        )
    return off
