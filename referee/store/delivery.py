"""The outbox's delivery state machine: claiming due rows, leases, marking, retrying.

Each row has two channels, mail and webhook, claimed and sent apart, so a
slow or failing webhook never holds a mail back (nor the reverse).

The mail channel: rows go `pending` (due at `next_attempt_at`) →
`sending` (claimed by one worker until `lease_until`) → mail done, or
back to `pending` with a later `next_attempt_at` when the mail server
refused, or `failed` after too many attempts. A worker that dies while
sending leaves its rows `sending`; once the lease has run out another
worker claims them again, so nothing is lost.

The webhook channel: a row whose `hook_at` is empty is claimed with
`hook_lease_until` while its seat's webhook is not in backoff (see
`referee.store.webhooks`). A row is `sent` once both channels are done.
Each channel is marked done on its own as soon as it went out, so a retry
never repeats what already succeeded.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from datetime import UTC, datetime, timedelta

from sqlalchemy import and_, or_, update
from sqlalchemy.orm import aliased
from sqlmodel import Session, col, select

from referee.store import webhooks
from referee.store.clock import now, stamp
from referee.store.db import Database
from referee.store.tables import Delivery, Outbox, OutboxKind, Seat


@dataclass(frozen=True, slots=True)
class Claim:
    """Rows one worker claimed, and the lease end that marks them as its own."""

    ids: list[int]
    lease_until: str
    # The (game, seat) of each row, for webhook claims: one seat's rows go in order.
    owners: dict[int, tuple[str, int]] = field(default_factory=dict)


def claim_due(db: Database, moment: datetime, lease: float, limit: int = 20) -> Claim:
    """Claim rows whose mail is due: pending and due, or `sending` with a lapsed lease."""
    at = stamp(moment)
    until = stamp(moment + timedelta(seconds=lease))
    with db.transaction() as session:
        query = (
            select(Outbox.id)
            .where(
                or_(
                    (col(Outbox.status) == Delivery.PENDING) & (col(Outbox.next_attempt_at) <= at),
                    (col(Outbox.status) == Delivery.SENDING) & (col(Outbox.lease_until) < at),
                ),
                col(Outbox.mail_at).is_(None),
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


def hold(db: Database, row_id: int, claim: Claim, lease: float) -> bool:
    """Renew the lease of a claimed row right before sending it, if it is still ours.

    A claim's rows are sent one after the other; a row whose lease ran out
    meanwhile may have been claimed by another worker (its lease end then
    differs from ours), and sending it here as well would send it twice.
    """
    renewed = stamp(datetime.now(UTC) + timedelta(seconds=lease))
    with db.transaction() as session:
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


def channel_done(db: Database, row_id: int, *channels: str) -> None:
    """Mark channels ("mail", "hook") of a row as done, the row sent once both are."""
    with db.transaction() as session:
        row = session.get(Outbox, row_id)
        if row is None:
            return
        done = now()
        if "mail" in channels:
            row.mail_at = row.mail_at or done
        if "hook" in channels:
            row.hook_at = row.hook_at or done
        if row.mail_at and row.hook_at:
            if row.status != Delivery.FAILED:
                row.status = Delivery.SENT
                row.sent_at = done
                row.error = None
            row.lease_until = None
        elif row.mail_at and row.status == Delivery.SENDING:
            # The mail went; the row waits for its webhook only.
            row.status = Delivery.PENDING
            row.lease_until = None
        session.add(row)


def retry_later(
    db: Database, row_id: int, error: str, moment: datetime, backoff: float, give_up_after: int
) -> None:
    """Put a row back for later (exponential backoff), or give up on it."""
    with db.transaction() as session:
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


def claim_hooks(db: Database, moment: datetime, lease: float, limit: int = 20) -> Claim:
    """Claim rows whose webhook is to go: open, unleased, and the seat not in backoff.

    Rows of seats without an active webhook are left to the mail channel,
    which settles them, unless their mail went already (the webhook was
    dropped or switched off since). A seat with a row being posted now is
    left out: its rows go one at a time, in order, and a slow receiver
    holds one thread, not one per row.
    """
    at = stamp(moment)
    until = stamp(moment + timedelta(seconds=lease))
    seat_of_row = and_(col(Seat.game_id) == col(Outbox.game_id), col(Seat.seat) == col(Outbox.seat))
    posting = aliased(Outbox)
    busy = (
        select(posting.id)
        .where(
            col(posting.game_id) == col(Outbox.game_id),
            col(posting.seat) == col(Outbox.seat),
            col(posting.hook_at).is_(None),
            col(posting.hook_lease_until) >= at,
        )
        .exists()
    )
    with db.transaction() as session:
        query = (
            select(Outbox.id, Outbox.game_id, Seat.seat)
            .join(Seat, seat_of_row)
            .where(
                col(Outbox.hook_at).is_(None),
                or_(col(Outbox.hook_lease_until).is_(None), col(Outbox.hook_lease_until) < at),
                or_(col(Seat.webhook_retry_at).is_(None), col(Seat.webhook_retry_at) <= at),
                or_(
                    col(Seat.webhook_url).is_not(None) & col(Seat.webhook_off_at).is_(None),
                    col(Outbox.mail_at).is_not(None),
                ),
                ~busy,
            )
            .order_by(col(Outbox.id))
            .limit(limit)
            .with_for_update(of=Outbox, skip_locked=True)
        )
        owners = {
            row_id: (game_id, seat)
            for row_id, game_id, seat in session.exec(query)
            if row_id is not None
        }
        if owners:
            session.execute(
                update(Outbox)
                .where(col(Outbox.id).in_(list(owners)))
                .values(hook_lease_until=until, hook_attempts=col(Outbox.hook_attempts) + 1)
            )
    return Claim(list(owners), until, owners)


def hold_hook(db: Database, row_id: int, claim: Claim, lease: float) -> bool:
    """Renew a claimed row's webhook lease right before posting, if it is still ours."""
    renewed = stamp(datetime.now(UTC) + timedelta(seconds=lease))
    with db.transaction() as session:
        result = session.connection().execute(
            update(Outbox)
            .where(
                (col(Outbox.id) == row_id)
                & col(Outbox.hook_at).is_(None)
                & (col(Outbox.hook_lease_until) == claim.lease_until)
            )
            .values(hook_lease_until=renewed)
        )
        return result.rowcount == 1


def release_hook(db: Database, row_id: int) -> None:
    """Give a claimed row's webhook back untried (its seat went into backoff meanwhile)."""
    with db.transaction() as session:
        session.execute(
            update(Outbox)
            .where(col(Outbox.id) == row_id)
            .values(hook_lease_until=None, hook_attempts=col(Outbox.hook_attempts) - 1)
        )


def hook_done(db: Database, row_id: int) -> None:
    """The webhook took the row's notification: mark it, and the seat's webhook healthy."""
    with db.transaction() as session:
        row = session.get(Outbox, row_id)
        if row is None:
            return
        if row.seat is not None:
            webhooks.succeeded(session.connection(), row.game_id, row.seat)
    channel_done(row_id, "hook")


def hook_failed(
    db: Database,
    row_id: int,
    error: str,
    moment: datetime,
    backoff: float,
    max_failures: int,
    give_up_after: int,
) -> bool:
    """Count a failed post against the seat and put the row back; True if the webhook
    was switched off. A row tried `give_up_after` times has its webhook settled."""
    with db.transaction() as session:
        row = session.get(Outbox, row_id)
        if row is None or row.seat is None or row.hook_at is not None:
            return False
        row.hook_lease_until = None
        row.hook_error = error[:300]
        session.add(row)
        session.flush()
        off = webhooks.failed(session, row.game_id, row.seat, error, moment, backoff, max_failures)
        gave_up = not off and row.hook_attempts >= give_up_after
    if gave_up:
        with db.transaction() as session:
            found = session.get(Outbox, row_id)
            if found is not None and found.hook_at is None:
                found.hook_error = f"given up after {found.hook_attempts} attempts: {error}"[:300]
                session.add(found)
        channel_done(row_id, "hook")
    return off


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
