"""The outbox's delivery state machine: claiming due rows, leases, marking, retrying.

Rows go `pending` (due at `next_attempt_at`) → `sending` (claimed by one
worker until `lease_until`) → `sent`, or back to `pending` with a later
`next_attempt_at` when the mail server or the webhook refused, or `failed`
after too many attempts. A worker that dies while sending leaves its rows
`sending`; once the lease has run out another worker claims them again, so
nothing is lost. Each channel (mail, webhook) is marked done on its own as
soon as it went out, so a retry never repeats what already succeeded.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import UTC, datetime, timedelta

from sqlalchemy import or_, update
from sqlmodel import Session, col, select

from referee.store.clock import now, stamp
from referee.store.db import transaction
from referee.store.tables import Delivery, Outbox, OutboxKind


@dataclass(frozen=True, slots=True)
class Claim:
    """Rows one worker claimed, and the lease end that marks them as its own."""

    ids: list[int]
    lease_until: str


def claim_due(moment: datetime, lease: float, limit: int = 20) -> Claim:
    """Claim due rows for one worker: pending and due, or `sending` with a lapsed lease."""
    at = stamp(moment)
    until = stamp(moment + timedelta(seconds=lease))
    with transaction() as session:
        query = (
            select(Outbox.id)
            .where(
                or_(
                    (col(Outbox.status) == Delivery.PENDING) & (col(Outbox.next_attempt_at) <= at),
                    (col(Outbox.status) == Delivery.SENDING) & (col(Outbox.lease_until) < at),
                )
            )
            .order_by(col(Outbox.id))
            .limit(limit)
            .with_for_update(skip_locked=True)
        )
        ids = [found for found in session.exec(query) if found is not None]
        if ids:
            session.execute(
                update(Outbox)
                .where(col(Outbox.id).in_(ids))
                .values(
                    status=Delivery.SENDING,
                    lease_until=until,
                    attempts=col(Outbox.attempts) + 1,
                )
            )
    return Claim(ids, until)


def hold(row_id: int, claim: Claim, lease: float) -> bool:
    """Renew the lease of a claimed row right before sending it, if it is still ours.

    A claim's rows are sent one after the other; a row whose lease ran out
    meanwhile may have been claimed by another worker (its lease end then
    differs from ours), and sending it here as well would send it twice.
    """
    renewed = stamp(datetime.now(UTC) + timedelta(seconds=lease))
    with transaction() as session:
        result = session.connection().execute(
            update(Outbox)
            .where(
                (col(Outbox.id) == row_id)
                & (col(Outbox.status) == Delivery.SENDING)
                & (col(Outbox.lease_until) == claim.lease_until)
            )
            .values(lease_until=renewed)
        )
        return result.rowcount == 1


def channel_done(row_id: int, *channels: str) -> None:
    """Mark channels ("mail", "hook") of a row as done, the row sent once both are."""
    with transaction() as session:
        row = session.get(Outbox, row_id)
        if row is None:
            return
        done = now()
        if "mail" in channels:
            row.mail_at = row.mail_at or done
        if "hook" in channels:
            row.hook_at = row.hook_at or done
        if row.mail_at and row.hook_at:
            row.status = Delivery.SENT
            row.sent_at = done
            row.lease_until = None
            row.error = None
        session.add(row)


def retry_later(
    row_id: int, error: str, moment: datetime, backoff: float, give_up_after: int
) -> None:
    """Put a row back for later (exponential backoff), or give up on it."""
    with transaction() as session:
        row = session.get(Outbox, row_id)
        if row is None or row.status != Delivery.SENDING:
            return
        row.error = error[:1000]
        row.lease_until = None
        if row.attempts >= give_up_after:
            row.status = Delivery.FAILED
        else:
            row.status = Delivery.PENDING
            row.next_attempt_at = stamp(moment + timedelta(seconds=backoff))
        session.add(row)


def bench_row(session: Session, game_id: str) -> int:
    """One outbox row marked as sent, for the benchmark's floor; returns its id.

    Marked sent so that the delivery sweep leaves it alone: a pending row
    would cost the worker a claim and a build during the measured runs.
    """
    at = now()
    row = Outbox(
        game_id=game_id,
        kind=OutboxKind.BENCH,
        payload={},
        created_at=at,
        sent_at=at,
        status=Delivery.SENT,
    )
    session.add(row)
    session.flush()
    assert row.id is not None
    return row.id
