"""Bots: the pace of the machine a game with bots was created on

Revision ID: 0015
Revises: 0014
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

revision = "0015"
down_revision = "0014"
branch_labels = None
depends_on = None


def upgrade() -> None:
    # Nullable without a default: games from before count as pace 1, and SQLite
    # adds the column without copying `game`.
    op.add_column("game", sa.Column("bot_pace", sa.Float(), nullable=True))


def downgrade() -> None:
    with op.batch_alter_table("game", schema=None, recreate="never") as batch_op:
        batch_op.drop_column("bot_pace")
