"""Rematch: the seats of a finished game that accepted one, and the game it led to

Revision ID: 0012
Revises: 0011
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

revision = "0012"
down_revision = "0011"
branch_labels = None
depends_on = None


def upgrade() -> None:
    # New tables only: on SQLite, changing `game` would copy it, which the
    # tables referring to it forbid.
    op.create_table(
        "rematch_acceptance",
        sa.Column("game_id", sa.String(length=32), sa.ForeignKey("game.id"), nullable=False),
        sa.Column("seat", sa.Integer(), nullable=False),
        sa.Column("accepted_at", sa.String(length=40), nullable=False),
        sa.PrimaryKeyConstraint("game_id", "seat"),
    )
    op.create_table(
        "rematch_claim",
        sa.Column("game_id", sa.String(length=32), sa.ForeignKey("game.id"), nullable=False),
        sa.Column("rematch_id", sa.String(length=32), nullable=False),
        sa.Column("claimed_at", sa.String(length=40), nullable=False),
        sa.PrimaryKeyConstraint("game_id"),
        sa.UniqueConstraint("rematch_id"),
    )


def downgrade() -> None:
    op.drop_table("rematch_claim")
    op.drop_table("rematch_acceptance")
