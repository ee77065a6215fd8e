"""Webhooks: their own delivery claims on the outbox, health and secret generation on the seat

Revision ID: 0005
Revises: 0004
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

revision = "0005"
down_revision = "0004"
branch_labels = None
depends_on = None


def upgrade() -> None:
    with op.batch_alter_table("outbox", schema=None) as batch_op:
        batch_op.add_column(
            sa.Column("hook_attempts", sa.Integer(), nullable=False, server_default="0")
        )
        batch_op.add_column(sa.Column("hook_lease_until", sa.String(length=40), nullable=True))
        batch_op.add_column(sa.Column("hook_error", sa.String(length=300), nullable=True))
        batch_op.create_index("ix_outbox_hook_at", ["hook_at"], unique=False)
    with op.batch_alter_table("seat", schema=None) as batch_op:
        batch_op.add_column(
            sa.Column("webhook_failures", sa.Integer(), nullable=False, server_default="0")
        )
        batch_op.add_column(sa.Column("webhook_error", sa.String(length=300), nullable=True))
        batch_op.add_column(sa.Column("webhook_retry_at", sa.String(length=40), nullable=True))
        batch_op.add_column(sa.Column("webhook_off_at", sa.String(length=40), nullable=True))
        batch_op.add_column(
            sa.Column("webhook_generation", sa.Integer(), nullable=False, server_default="0")
        )


def downgrade() -> None:
    with op.batch_alter_table("seat", schema=None) as batch_op:
        for name in (
            "webhook_generation",
            "webhook_off_at",
            "webhook_retry_at",
            "webhook_error",
            "webhook_failures",
        ):
            batch_op.drop_column(name)
    with op.batch_alter_table("outbox", schema=None) as batch_op:
        batch_op.drop_index("ix_outbox_hook_at")
        for name in ("hook_error", "hook_lease_until", "hook_attempts"):
            batch_op.drop_column(name)
