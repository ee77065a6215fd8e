"""The Message-ID of a mail reply taken in, and the submission it became

Revision ID: 0008
Revises: 0007
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

revision = "0008"
down_revision = "0007"
branch_labels = None
depends_on = None


def upgrade() -> None:
    # Empty on replies taken before: their answers start no thread of their own.
    with op.batch_alter_table("inbound", schema=None) as batch_op:
        batch_op.add_column(sa.Column("message_id", sa.String(length=250), nullable=True))
        batch_op.add_column(sa.Column("submission_id", sa.String(length=32), nullable=True))
        batch_op.create_index("ix_inbound_submission_id", ["submission_id"])


def downgrade() -> None:
    with op.batch_alter_table("inbound", schema=None) as batch_op:
        batch_op.drop_index("ix_inbound_submission_id")
        batch_op.drop_column("submission_id")
        batch_op.drop_column("message_id")
