"""Ratings: each player's skill per game, the rated games in order, each game's changes;
an open game's rating range

Revision ID: 0017
Revises: 0016
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

revision = "0017"
down_revision = "0016"
branch_labels = None
depends_on = None


def upgrade() -> None:
    op.create_table(
        "rating",
        sa.Column("address", sa.String(254), primary_key=True),
        sa.Column("game", sa.String(40), primary_key=True),
        sa.Column("mu", sa.Float(), nullable=False),
        sa.Column("sigma", sa.Float(), nullable=False),
        sa.Column("games", sa.Integer(), nullable=False),
        sa.Column("wins", sa.Integer(), nullable=False),
        sa.Column("last_seq", sa.Integer(), nullable=False),
    )
    op.create_index("ix_rating_game_mu", "rating", ["game", "mu"])
    op.create_table(
        "rated_game",
        sa.Column("seq", sa.Integer(), primary_key=True),
        sa.Column("game_id", sa.String(32), sa.ForeignKey("game.id"), nullable=False, unique=True),
        sa.Column("game", sa.String(40), nullable=False),
        sa.Column("counted", sa.Boolean(), nullable=False),
        sa.Column("finished_at", sa.String(40), nullable=False),
        sa.Column("applied_at", sa.String(40), nullable=False),
    )
    op.create_table(
        "rating_change",
        sa.Column("seq", sa.Integer(), sa.ForeignKey("rated_game.seq"), primary_key=True),
        sa.Column("address", sa.String(254), primary_key=True),
        sa.Column("game", sa.String(40), nullable=False),
        sa.Column("seat", sa.Integer(), nullable=False),
        sa.Column("rank", sa.Integer(), nullable=False),
        sa.Column("mu_before", sa.Float(), nullable=False),
        sa.Column("sigma_before", sa.Float(), nullable=False),
        sa.Column("mu_after", sa.Float(), nullable=False),
        sa.Column("sigma_after", sa.Float(), nullable=False),
        sa.Column("at", sa.String(40), nullable=False),
    )
    op.create_index("ix_rating_change_player", "rating_change", ["address", "game", "seq"])
    # Nullable without defaults: SQLite adds them without copying `seek`.
    op.add_column("seek", sa.Column("rating_min", sa.Integer(), nullable=True))
    op.add_column("seek", sa.Column("rating_max", sa.Integer(), nullable=True))


def downgrade() -> None:
    with op.batch_alter_table("seek", schema=None, recreate="never") as batch_op:
        batch_op.drop_column("rating_max")
        batch_op.drop_column("rating_min")
    for table in ("rating_change", "rated_game", "rating"):
        op.drop_table(table)
