"""Bots: a seat's bot level (and since when a bot plays it), a game's think budget

Revision ID: 0014
Revises: 0013
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

revision = "0014"
down_revision = "0013"
branch_labels = None
depends_on = None


def upgrade() -> None:
    # Plain ADD COLUMN (nullable, no default): SQLite adds them without copying
    # `game` or `seat`, which the tables referring to them would forbid.
    op.add_column("seat", sa.Column("bot", sa.String(length=20), nullable=True))
    op.add_column("seat", sa.Column("bot_since", sa.Integer(), nullable=True))
    op.add_column("game", sa.Column("bot_seconds", sa.Float(), nullable=True))


def downgrade() -> None:
    with op.batch_alter_table("game", schema=None, recreate="never") as batch_op:
        batch_op.drop_column("bot_seconds")
    with op.batch_alter_table("seat", schema=None, recreate="never") as batch_op:
        batch_op.drop_column("bot_since")
        batch_op.drop_column("bot")
