"""The outcome of checking a game's log, kept per game and version

Revision ID: 0006
Revises: 0005
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

revision = "0006"
down_revision = "0005"
branch_labels = None
depends_on = None


def upgrade() -> None:
    # A cache: dropping its rows changes no answer, only what the next check costs.
    op.create_table(
        "verification",
        sa.Column("game_id", sa.String(length=32), nullable=False),
        sa.Column("version", sa.Integer(), nullable=False),
        sa.Column("chain_valid", sa.Boolean(), nullable=False),
        sa.Column("replay_matches", sa.Boolean(), nullable=False),
        sa.Column("problems", sa.JSON(), nullable=False),
        sa.Column("checked_at", sa.String(length=40), nullable=False),
        sa.ForeignKeyConstraint(["game_id"], ["game.id"]),
        sa.PrimaryKeyConstraint("game_id", "version"),
    )


def downgrade() -> None:
    op.drop_table("verification")
