"""Channels as data: one delivery row per (notice, channel), out of the outbox's columns

Each outbox row had a column group per channel (mail: status, attempts,
next_attempt_at, lease_until, mail_at, error; webhook: hook_at,
hook_attempts, hook_lease_until, hook_error). Each becomes a `delivery`
row where its channel applied: mail for seats with an address, a webhook
where one was tried or is still to be. The old columns go.

Revision ID: 0009
Revises: 0008
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

revision = "0009"
down_revision = "0008"
branch_labels = None
depends_on = None

_SEAT_OF_ROW = "s.game_id = o.game_id AND s.seat = o.seat"

# A mail delivery for each row to a seat with an address.
_MAIL = f"""
INSERT INTO delivery
    (notice_id, channel, status, attempts, next_attempt_at, lease_until, done_at, error)
SELECT
    o.id,
    'mail',
    CASE
        WHEN o.mail_at IS NOT NULL THEN 'sent'
        WHEN o.status = 'failed' THEN 'failed'
        WHEN o.status = 'sending' THEN 'sending'
        ELSE 'pending'
    END,
    o.attempts,
    o.next_attempt_at,
    CASE WHEN o.mail_at IS NULL AND o.status = 'sending' THEN o.lease_until END,
    CASE
        WHEN o.mail_at IS NOT NULL THEN o.mail_at
        WHEN o.status = 'failed' THEN COALESCE(o.sent_at, o.created_at)
    END,
    o.error
FROM outbox o JOIN seat s ON {_SEAT_OF_ROW}
WHERE s.email IS NOT NULL AND s.email <> ''
"""

# A webhook delivery for each row whose webhook was tried, or is still to
# go to an active webhook. Done rows: given up (failed), settled because
# the webhook was removed or switched off (skipped), or else sent.
_WEBHOOK = f"""
INSERT INTO delivery
    (notice_id, channel, status, attempts, next_attempt_at, lease_until, done_at, error)
SELECT
    o.id,
    'webhook',
    CASE
        WHEN o.hook_at IS NULL AND o.hook_lease_until IS NOT NULL THEN 'sending'
        WHEN o.hook_at IS NULL THEN 'pending'
        WHEN o.hook_error LIKE 'given up after%' THEN 'failed'
        WHEN o.hook_error = 'the webhook was removed'
            OR o.hook_error LIKE 'the webhook was switched off%' THEN 'skipped'
        ELSE 'sent'
    END,
    o.hook_attempts,
    '',
    CASE WHEN o.hook_at IS NULL THEN o.hook_lease_until END,
    o.hook_at,
    o.hook_error
FROM outbox o JOIN seat s ON {_SEAT_OF_ROW}
WHERE o.hook_attempts > 0
    OR o.hook_error IS NOT NULL
    OR (o.hook_at IS NULL AND s.webhook_url IS NOT NULL AND s.webhook_off_at IS NULL)
"""

_OLD_COLUMNS = (
    "hook_error",
    "hook_lease_until",
    "hook_attempts",
    "error",
    "hook_at",
    "mail_at",
    "lease_until",
    "next_attempt_at",
    "attempts",
    "status",
    "sent_at",
)


def upgrade() -> None:
    op.create_table(
        "delivery",
        sa.Column("id", sa.Integer(), nullable=False),
        sa.Column("notice_id", sa.Integer(), nullable=False),
        sa.Column("channel", sa.String(length=20), nullable=False),
        sa.Column("status", sa.String(length=10), nullable=False),
        sa.Column("attempts", sa.Integer(), nullable=False),
        sa.Column("next_attempt_at", sa.String(length=40), nullable=False),
        sa.Column("lease_until", sa.String(length=40), nullable=True),
        sa.Column("done_at", sa.String(length=40), nullable=True),
        sa.Column("error", sa.String(length=1000), nullable=True),
        sa.PrimaryKeyConstraint("id"),
        sa.UniqueConstraint("notice_id", "channel"),
    )
    op.create_index("ix_delivery_due", "delivery", ["channel", "status", "next_attempt_at"])
    op.execute(_MAIL)
    op.execute(_WEBHOOK)
    with op.batch_alter_table("outbox", schema=None) as batch_op:
        batch_op.drop_index("ix_outbox_status_due")
        batch_op.drop_index("ix_outbox_hook_at")
        batch_op.drop_index("ix_outbox_sent_at")
        for name in _OLD_COLUMNS:
            batch_op.drop_column(name)
    # Only now: on SQLite the outbox was just copied, dropped and renamed,
    # which rows referring to it would have stopped.
    with op.batch_alter_table("delivery", schema=None) as batch_op:
        batch_op.create_foreign_key("fk_delivery_notice_id", "outbox", ["notice_id"], ["id"])


def _of(channel: str, column: str) -> str:
    return (
        f"(SELECT d.{column} FROM delivery d"
        f" WHERE d.notice_id = outbox.id AND d.channel = '{channel}')"
    )


def downgrade() -> None:
    with op.batch_alter_table("outbox", schema=None) as batch_op:
        batch_op.add_column(sa.Column("sent_at", sa.String(length=40), nullable=True))
        batch_op.add_column(
            sa.Column("status", sa.String(length=10), nullable=False, server_default="pending")
        )
        batch_op.add_column(sa.Column("attempts", sa.Integer(), nullable=False, server_default="0"))
        batch_op.add_column(
            sa.Column("next_attempt_at", sa.String(length=40), nullable=False, server_default="")
        )
        batch_op.add_column(sa.Column("lease_until", sa.String(length=40), nullable=True))
        batch_op.add_column(sa.Column("mail_at", sa.String(length=40), nullable=True))
        batch_op.add_column(sa.Column("hook_at", sa.String(length=40), nullable=True))
        batch_op.add_column(sa.Column("error", sa.String(length=1000), nullable=True))
        batch_op.add_column(
            sa.Column("hook_attempts", sa.Integer(), nullable=False, server_default="0")
        )
        batch_op.add_column(sa.Column("hook_lease_until", sa.String(length=40), nullable=True))
        batch_op.add_column(sa.Column("hook_error", sa.String(length=300), nullable=True))
        batch_op.create_index("ix_outbox_status_due", ["status", "next_attempt_at"])
        batch_op.create_index("ix_outbox_hook_at", ["hook_at"])
        batch_op.create_index("ix_outbox_sent_at", ["sent_at"])
    # A channel without a delivery had nowhere to go: done when the row was written.
    done = "CASE WHEN {d} IN ('sent', 'skipped', 'failed') THEN {at} END"
    op.execute(
        "UPDATE outbox SET"
        f" status = COALESCE({_of('mail', 'status')}, 'sent'),"
        f" attempts = COALESCE({_of('mail', 'attempts')}, 0),"
        f" next_attempt_at = COALESCE({_of('mail', 'next_attempt_at')}, ''),"
        f" lease_until = {_of('mail', 'lease_until')},"
        f" error = {_of('mail', 'error')},"
        " mail_at = COALESCE("
        + done.format(d=_of("mail", "status"), at=_of("mail", "done_at"))
        + f", CASE WHEN {_of('mail', 'id')} IS NULL THEN created_at END),"
        " hook_at = COALESCE("
        + done.format(d=_of("webhook", "status"), at=_of("webhook", "done_at"))
        + f", CASE WHEN {_of('webhook', 'id')} IS NULL THEN created_at END),"
        f" hook_attempts = COALESCE({_of('webhook', 'attempts')}, 0),"
        f" hook_lease_until = {_of('webhook', 'lease_until')},"
        f" hook_error = SUBSTR({_of('webhook', 'error')}, 1, 300)"
    )
    # The old row was sent once both channels were done; a skipped mail counted as sent,
    # and a mail done while its webhook waited left the row pending.
    op.execute("UPDATE outbox SET status = 'sent' WHERE status = 'skipped'")
    op.execute(
        "UPDATE outbox SET status = 'pending', lease_until = NULL"
        " WHERE mail_at IS NOT NULL AND hook_at IS NULL"
    )
    op.execute(
        "UPDATE outbox SET status = 'sent', sent_at = mail_at"
        " WHERE mail_at IS NOT NULL AND hook_at IS NOT NULL AND status <> 'failed'"
    )
    op.drop_index("ix_delivery_due", table_name="delivery")
    op.drop_table("delivery")
