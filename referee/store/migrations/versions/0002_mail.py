"""Play by email: outbox delivery state, deadlines, webhooks, inbound replies

Revision ID: 0002
Revises: 0001
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

revision = "0002"
down_revision = "0001"
branch_labels = None
depends_on = None


def upgrade() -> None:
    with op.batch_alter_table("game", schema=None) as batch_op:
        batch_op.add_column(sa.Column("deadline_seconds", sa.Integer(), nullable=True))
        batch_op.add_column(sa.Column("on_timeout", sa.String(length=10), nullable=True))
        batch_op.add_column(sa.Column("reminded_version", sa.Integer(), nullable=True))
        batch_op.add_column(sa.Column("timed_out_version", sa.Integer(), nullable=True))

    with op.batch_alter_table("seat", schema=None) as batch_op:
        batch_op.add_column(sa.Column("webhook_url", sa.String(length=2000), nullable=True))

    with op.batch_alter_table("submission", schema=None) as batch_op:
        batch_op.add_column(
            sa.Column("source", sa.String(length=10), nullable=False, server_default="rest")
        )

    with op.batch_alter_table("outbox", schema=None) as batch_op:
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
        batch_op.create_index("ix_outbox_status_due", ["status", "next_attempt_at"], unique=False)
    # Rows written before mail existed were marked sent by hand (the benchmark's).
    op.execute("UPDATE outbox SET status = 'sent' WHERE sent_at IS NOT NULL")

    op.create_table(
        "inbound",
        sa.Column("message_key", sa.String(length=64), nullable=False),
        sa.Column("game_id", sa.String(length=32), nullable=True),
        sa.Column("seat", sa.Integer(), nullable=True),
        sa.Column("received_at", sa.String(length=40), nullable=False),
        sa.Column("outcome", sa.String(length=40), nullable=False),
        sa.PrimaryKeyConstraint("message_key"),
    )
    op.create_table(
        "setting",
        sa.Column("key", sa.String(length=40), nullable=False),
        sa.Column("value", sa.String(length=200), nullable=False),
        sa.PrimaryKeyConstraint("key"),
    )


def downgrade() -> None:
    op.drop_table("setting")
    op.drop_table("inbound")
    with op.batch_alter_table("outbox", schema=None) as batch_op:
        batch_op.drop_index("ix_outbox_status_due")
        for name in ("error", "hook_at", "mail_at", "lease_until", "next_attempt_at"):
            batch_op.drop_column(name)
        batch_op.drop_column("attempts")
        batch_op.drop_column("status")
    with op.batch_alter_table("submission", schema=None) as batch_op:
        batch_op.drop_column("source")
    with op.batch_alter_table("seat", schema=None) as batch_op:
        batch_op.drop_column("webhook_url")
    with op.batch_alter_table("game", schema=None) as batch_op:
        for name in ("timed_out_version", "reminded_version", "on_timeout", "deadline_seconds"):
            batch_op.drop_column(name)
