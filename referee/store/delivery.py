"""The delivery state machine, one `delivery` row per (notice, channel): claiming due
rows, leases, marking, retrying, giving up.

A row goes `pending` (due at `next_attempt_at`) → `sending` (claimed by one
worker until `lease_until`) → `sent`, or `skipped` when the channel found
nowhere to send it; or back to `pending` with a later `next_attempt_at`
after a failure, and `failed` after too many attempts. A worker that dies
while sending leaves its rows `sending`; once the lease has run out another
worker claims them again, so nothing is lost. Every channel's rows are
claimed on their own, so a slow or failing channel never holds another
back, and a row marked done is never tried again, so a retry never repeats
what already went out.

Everything here is keyed by the channel's name; what is particular to a
channel (whom it reaches, when its rows may be claimed) comes in as SQL.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from typing import Any

import sqlalchemy as sa
from sqlmodel import Session

from referee.store.clock import now, stamp
from referee.store.db import Database
from referee.store.tables import (
    TOLD_TO_PLAYER,
    Delivery,
    DeliveryStatus,
    Outbox,
    OutboxKind,
    Seat,
    core_table,
)

_DELIVERY = core_table(Delivery)
_NOTICE = core_table(Outbox)
_SEAT = core_table(Seat)
_OF_SEAT = (_SEAT.c.game_id == _NOTICE.c.game_id) & (_SEAT.c.seat == _NOTICE.c.seat)

# When a due delivery of a seat may be claimed (`Channel.ready`).
Ready = Callable[[sa.Table, str], sa.ColumnElement[bool]]


@dataclass(frozen=True, slots=True)
class Claimed:
    """One claimed delivery: its row, its notice and seat, and its attempts (this one counted)."""

    id: int
    notice_id: int
    game_id: str
    seat: int
    kind: str
    attempts: int
    # When its notice was written.
    created_at: str = ""


@dataclass(frozen=True, slots=True)
class Claim:
    """Rows one worker claimed, the lease end that marks them as its own, and when."""

    rows: list[Claimed]
    lease_until: str
    moment: datetime | None = None


def _due(at: str) -> sa.ColumnElement[bool]:
    return sa.or_(
        (_DELIVERY.c.status == DeliveryStatus.PENDING) & (_DELIVERY.c.next_attempt_at <= at),
        (_DELIVERY.c.status == DeliveryStatus.SENDING) & (_DELIVERY.c.lease_until < at),
    )


def _sending_to_same_seat(channel: str, at: str) -> sa.Exists:
    """A delivery of the same channel to the same seat is being sent now (its lease runs)."""
    other, notice = _DELIVERY.alias("other"), _NOTICE.alias("other_notice")
    return (
        sa.select(other.c.id)
        .join(notice, notice.c.id == other.c.notice_id)
        .where(
            other.c.channel == channel,
            other.c.status == DeliveryStatus.SENDING,
            other.c.lease_until >= at,
            notice.c.game_id == _NOTICE.c.game_id,
            notice.c.seat == _NOTICE.c.seat,
        )
        .exists()
    )


def claim(
    db: Database,
    channel: str,
    ready: Ready,
    moment: datetime,
    lease: float,
    *,
    in_order: bool = False,
    whole_seats: bool = False,
    limit: int = 20,
) -> Claim:
    """Claim `channel`'s due rows whose seats are `ready`, oldest notice first.

    `in_order`: a seat with a row being sent now is left out, so that its
    rows go one at a time, in order (and a slow receiver holds one thread,
    not one per row). `whole_seats`: with a seat's due row of a game come
    its other rows of that game still waiting, due or held back (never
    tried), so that the channel may send them together (`Channel.merges`).
    """
    at = stamp(moment)
    until = stamp(moment + timedelta(seconds=lease))
    conditions = [_DELIVERY.c.channel == channel, _due(at), ready(_SEAT, at)]
    if in_order:
        conditions.append(~_sending_to_same_seat(channel, at))
    query = _claimable(conditions).limit(limit)
    with db.transaction() as session:
        connection = session.connection()
        found = list(connection.execute(query).all())
        if found and whole_seats:
            found += connection.execute(_rest_of_seats(channel, found, at)).all()
            found.sort(key=lambda row: row.notice_id)
        if found:
            connection.execute(
                sa.update(_DELIVERY)
                .where(_DELIVERY.c.id.in_([row.id for row in found]))
                .values(
                    status=DeliveryStatus.SENDING,
                    lease_until=until,
                    attempts=_DELIVERY.c.attempts + 1,
                )
            )
    rows = [
        Claimed(
            row.id, row.notice_id, row.game_id, row.seat, row.kind, row.attempts + 1, row.created_at
        )
        for row in found
    ]
    return Claim(rows, until, moment)


def _claimable(conditions: list[sa.ColumnElement[bool]]) -> sa.Select[Any]:
    """The delivery rows meeting `conditions`, with their notices, locked as they are read."""
    return (
        sa.select(
            _DELIVERY.c.id,
            _DELIVERY.c.notice_id,
            _NOTICE.c.game_id,
            _NOTICE.c.seat,
            _NOTICE.c.kind,
            _DELIVERY.c.attempts,
            _NOTICE.c.created_at,
        )
        .select_from(
            _DELIVERY.join(_NOTICE, _NOTICE.c.id == _DELIVERY.c.notice_id).join(_SEAT, _OF_SEAT)
        )
        .where(*conditions)
        # Notices in the order they were written (a round's end before the next turn).
        .order_by(_DELIVERY.c.notice_id)
        .with_for_update(of=_DELIVERY, skip_locked=True)
    )


def _rest_of_seats(channel: str, found: list[sa.Row[Any]], at: str) -> sa.Select[Any]:
    """The other waiting rows of the seats and games of `found`: due, or held back
    before their first try (`later`); not those waiting out a failure's backoff."""
    seats = sorted({(row.game_id, row.seat) for row in found})
    waiting = (_DELIVERY.c.next_attempt_at <= at) | (_DELIVERY.c.attempts == 0)
    return _claimable(
        [
            _DELIVERY.c.channel == channel,
            _DELIVERY.c.status == DeliveryStatus.PENDING,
            waiting,
            sa.tuple_(_NOTICE.c.game_id, _NOTICE.c.seat).in_(seats),
            _DELIVERY.c.id.not_in([row.id for row in found]),
        ]
    )


def _update(
    db: Database, row_id: int, *conditions: sa.ColumnElement[bool], **values: object
) -> bool:
    with db.transaction() as session:
        result = session.connection().execute(
            sa.update(_DELIVERY).where(_DELIVERY.c.id == row_id, *conditions).values(**values)
        )
        return result.rowcount == 1


def hold(db: Database, row_id: int, claim: Claim, lease: float) -> bool:
    """Renew the lease of a claimed row right before sending it, if it is still ours.

    A claim's rows are sent one after the other; a row whose lease ran out
    meanwhile may have been claimed by another worker (its lease end then
    differs from ours), and sending it here as well would send it twice.
    """
    renewed = stamp(datetime.now(UTC) + timedelta(seconds=lease))
    return _update(
        db,
        row_id,
        _DELIVERY.c.status == DeliveryStatus.SENDING,
        _DELIVERY.c.lease_until == claim.lease_until,
        lease_until=renewed,
    )


def sent(db: Database, row_ids: Sequence[int]) -> None:
    """The rows went out, in one message: none is ever tried again (even if it was
    settled meanwhile). All at once, so that a worker killed while marking them never
    leaves a part of the message to be told again in another."""
    with db.transaction() as session:
        session.connection().execute(
            sa.update(_DELIVERY)
            .where(_DELIVERY.c.id.in_(row_ids))
            .values(status=DeliveryStatus.SENT, done_at=now(), lease_until=None, error=None)
        )


def skipped(db: Database, row_id: int, reason: str) -> None:
    """The row had nowhere to go on its channel, and why."""
    _settle(db, row_id, DeliveryStatus.SKIPPED, reason)


def failed(db: Database, row_id: int, error: str) -> None:
    """Give up on a row at once (it cannot be built: trying again would not help)."""
    _settle(db, row_id, DeliveryStatus.FAILED, error)


def _settle(db: Database, row_id: int, status: DeliveryStatus, why: str) -> None:
    """End a row this worker is sending, with `status` and why, never to be tried again."""
    _update(
        db,
        row_id,
        _DELIVERY.c.status == DeliveryStatus.SENDING,
        status=status,
        done_at=now(),
        lease_until=None,
        error=why[:1000],
    )


def release(db: Database, row_id: int) -> None:
    """Give a claimed row back untried (not its fault: the database went away, the
    task's time ran out, its seat went into backoff meanwhile)."""
    _update(
        db,
        row_id,
        _DELIVERY.c.status == DeliveryStatus.SENDING,
        status=DeliveryStatus.PENDING,
        lease_until=None,
        attempts=_DELIVERY.c.attempts - 1,
    )


def later(db: Database, row_id: int, until: datetime, why: str) -> None:
    """Hold a claimed row back until `until`, untried (not a failure: no attempt counts)."""
    _update(
        db,
        row_id,
        _DELIVERY.c.status == DeliveryStatus.SENDING,
        status=DeliveryStatus.PENDING,
        next_attempt_at=stamp(until),
        lease_until=None,
        attempts=_DELIVERY.c.attempts - 1,
        error=why[:1000],
    )


def retry_later(
    db: Database, row_id: int, error: str, moment: datetime, wait: float, give_up_after: int
) -> None:
    """Put a row back for `wait` seconds, or give up on it after `give_up_after` attempts."""
    with db.transaction() as session:
        row = session.get(Delivery, row_id)
        if row is None or row.status != DeliveryStatus.SENDING:
            return
        row.lease_until = None
        if row.attempts >= give_up_after:
            row.status = DeliveryStatus.FAILED
            row.done_at = now()
            row.error = f"given up after {row.attempts} attempts: {error}"[:1000]
        else:
            row.status = DeliveryStatus.PENDING
            row.next_attempt_at = stamp(moment + timedelta(seconds=wait))
            row.error = error[:1000]
        session.add(row)


def settle_waiting(
    connection: sa.Connection, channel: str, game_id: str, seat: int, why: str
) -> None:
    """Skip every row of `channel` to one seat that is still to go (a webhook removed)."""
    notices = sa.select(_NOTICE.c.id).where(_NOTICE.c.game_id == game_id, _NOTICE.c.seat == seat)
    connection.execute(
        sa.update(_DELIVERY)
        .where(
            _DELIVERY.c.channel == channel,
            _DELIVERY.c.status.in_([DeliveryStatus.PENDING, DeliveryStatus.SENDING]),
            _DELIVERY.c.notice_id.in_(notices),
        )
        .values(status=DeliveryStatus.SKIPPED, done_at=now(), lease_until=None, error=why[:1000])
    )


def first_sent(db: Database, channel: str, game_id: str, seat: int, before: int) -> int | None:
    """The first notice about its game to a seat, before notice `before`, that went out
    on `channel` (a sign-in link or a digest, which the seat only carries, is none)."""
    with db.reading() as session:
        found = session.connection().execute(
            sa.select(sa.func.min(_NOTICE.c.id))
            .select_from(_NOTICE.join(_DELIVERY, _DELIVERY.c.notice_id == _NOTICE.c.id))
            .where(
                _NOTICE.c.game_id == game_id,
                _NOTICE.c.seat == seat,
                _NOTICE.c.id < before,
                # What is told to the player (a digest) never roots a game's thread.
                _NOTICE.c.kind.not_in([told.value for told in TOLD_TO_PLAYER]),
                _DELIVERY.c.channel == channel,
                _DELIVERY.c.status == DeliveryStatus.SENT,
            )
        )
        first: int | None = found.scalar()
        return first


def bench_row(session: Session, game_id: str) -> int:
    """One notice with no delivery at all, for the benchmark's floor; returns its id.

    Without deliveries no channel ever claims it: a pending one would cost
    the worker a claim and a build during the measured runs.
    """
    row = Outbox(game_id=game_id, kind=OutboxKind.BENCH, payload={}, created_at=now())
    session.add(row)
    session.flush()
    assert row.id is not None
    return row.id
