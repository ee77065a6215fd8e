"""Profiles: each player's finished games summed up once, and which games and seats
they hold

Revision ID: 0019
Revises: 0018
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

revision = "0019"
down_revision = "0018"
branch_labels = None
depends_on = None

_UNTALLIED = sa.text("NOT tallied")


def upgrade() -> None:
    # Games taken in before this are not tallied: the ratings' job tallies them next.
    op.add_column(
        "rated_game",
        sa.Column("tallied", sa.Boolean(), nullable=False, server_default=sa.text("false")),
    )
    op.add_column(
        "seat",
        sa.Column("tallied", sa.Boolean(), nullable=False, server_default=sa.text("false")),
    )
    op.create_index(
        "ix_seat_untallied",
        "seat",
        [sa.text("lower(email)")],
        sqlite_where=_UNTALLIED,
        postgresql_where=_UNTALLIED,
    )
    op.create_index(
        "ix_rated_game_untallied",
        "rated_game",
        ["seq"],
        sqlite_where=_UNTALLIED,
        postgresql_where=_UNTALLIED,
    )
    op.create_table(
        "player_totals",
        sa.Column("address", sa.String(length=254), primary_key=True),
        sa.Column("games_finished", sa.Integer(), nullable=False),
        sa.Column("timeouts", sa.Integer(), nullable=False),
        sa.Column("resigned", sa.Integer(), nullable=False),
        sa.Column("answers", sa.JSON(), nullable=False),
        sa.Column("recent", sa.JSON(), nullable=False),
    )


def downgrade() -> None:
    op.drop_table("player_totals")
    op.drop_index("ix_rated_game_untallied", table_name="rated_game")
    op.drop_index("ix_seat_untallied", table_name="seat")
    op.drop_column("seat", "tallied")
    op.drop_column("rated_game", "tallied")
