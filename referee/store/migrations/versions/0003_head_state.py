"""The state at the head of each game's log, kept on its row

Revision ID: 0003
Revises: 0002
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

revision = "0003"
down_revision = "0002"
branch_labels = None
depends_on = None


def upgrade() -> None:
    # Empty on games made before: the head is then rebuilt from the snapshots
    # and the log, and kept from the next decided move on.
    with op.batch_alter_table("game", schema=None) as batch_op:
        batch_op.add_column(sa.Column("state", sa.JSON(), nullable=True))


def downgrade() -> None:
    with op.batch_alter_table("game", schema=None) as batch_op:
        batch_op.drop_column("state")
