"""The version of the game a submission's seat saw

Revision ID: 0004
Revises: 0003
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

revision = "0004"
down_revision = "0003"
branch_labels = None
depends_on = None


def upgrade() -> None:
    # Empty on submissions made before: they were judged without it.
    with op.batch_alter_table("submission", schema=None) as batch_op:
        batch_op.add_column(sa.Column("seen_version", sa.Integer(), nullable=True))


def downgrade() -> None:
    with op.batch_alter_table("submission", schema=None) as batch_op:
        batch_op.drop_column("seen_version")
