"""Open games: public names, seeks, blocks, standing seeks, bots' seats taken over

Revision ID: 0016
Revises: 0015
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

revision = "0016"
down_revision = "0015"
branch_labels = None
depends_on = None

_ADDRESS_COLUMNS = ("public_name", "name_key", "seen_at", "seek_news", "seek_news_at")


def upgrade() -> None:
    # Nullable without defaults: SQLite adds them without copying `address`.
    op.add_column("address", sa.Column("public_name", sa.String(24), nullable=True))
    op.add_column("address", sa.Column("name_key", sa.String(100), nullable=True))
    op.add_column("address", sa.Column("seen_at", sa.String(40), nullable=True))
    op.add_column("address", sa.Column("seek_news", sa.JSON(), nullable=True))
    op.add_column("address", sa.Column("seek_news_at", sa.String(40), nullable=True))
    op.create_index("ix_address_name_key", "address", ["name_key"], unique=True)
    op.create_table(
        "seat_handover",
        sa.Column("game_id", sa.String(32), sa.ForeignKey("game.id"), primary_key=True),
        sa.Column("seat", sa.Integer(), primary_key=True),
        sa.Column("bot", sa.String(20), nullable=False),
        sa.Column("bot_name", sa.String(100), nullable=False),
        sa.Column("address", sa.String(254), nullable=False),
        sa.Column("joined_version", sa.Integer(), nullable=False),
        sa.Column("from_seq", sa.Integer(), nullable=True),
        sa.Column("joined_at", sa.String(40), nullable=False),
    )
    op.create_table(
        "seek",
        sa.Column("id", sa.String(32), primary_key=True),
        sa.Column("game", sa.String(40), nullable=False),
        sa.Column("min_players", sa.Integer(), nullable=False),
        sa.Column("max_players", sa.Integer(), nullable=False),
        sa.Column("options", sa.JSON(), nullable=False),
        sa.Column("deadline_seconds", sa.Integer(), nullable=True),
        sa.Column("on_timeout", sa.String(10), nullable=True),
        sa.Column("rated", sa.Boolean(), nullable=False),
        sa.Column("bots", sa.String(20), nullable=True),
        sa.Column("by_address", sa.String(254), nullable=False, index=True),
        sa.Column("private", sa.Boolean(), nullable=False),
        sa.Column("status", sa.String(10), nullable=False),
        sa.Column("created_at", sa.String(40), nullable=False),
        sa.Column("expires_at", sa.String(40), nullable=False),
        sa.Column("ended_at", sa.String(40), nullable=True),
        sa.Column("game_id", sa.String(32), nullable=True, index=True),
        sa.Column("bot_seats_open", sa.Integer(), nullable=False),
        sa.Column("standing_id", sa.Integer(), nullable=True, index=True),
    )
    op.create_index("ix_seek_status_created", "seek", ["status", "created_at"])
    op.create_table(
        "seek_player",
        sa.Column("seek_id", sa.String(32), sa.ForeignKey("seek.id"), primary_key=True),
        sa.Column("address", sa.String(254), primary_key=True, index=True),
        sa.Column("joined_at", sa.String(40), nullable=False),
    )
    op.create_table(
        "seek_invite",
        sa.Column("seek_id", sa.String(32), sa.ForeignKey("seek.id"), primary_key=True),
        sa.Column("address", sa.String(254), primary_key=True, index=True),
    )
    op.create_table(
        "block",
        sa.Column("address", sa.String(254), primary_key=True),
        sa.Column("blocked", sa.String(254), primary_key=True, index=True),
        sa.Column("created_at", sa.String(40), nullable=False),
    )
    op.create_table(
        "standing_seek",
        sa.Column("id", sa.Integer(), primary_key=True),
        sa.Column("address", sa.String(254), nullable=False, index=True),
        sa.Column("game", sa.String(40), nullable=False),
        sa.Column("min_players", sa.Integer(), nullable=False),
        sa.Column("max_players", sa.Integer(), nullable=False),
        sa.Column("options", sa.JSON(), nullable=False),
        sa.Column("deadline_seconds", sa.Integer(), nullable=True),
        sa.Column("count", sa.Integer(), nullable=False),
        sa.Column("created_at", sa.String(40), nullable=False),
    )


def downgrade() -> None:
    for table in ("standing_seek", "block", "seek_invite", "seek_player", "seek", "seat_handover"):
        op.drop_table(table)
    op.drop_index("ix_address_name_key", table_name="address")
    with op.batch_alter_table("address", schema=None) as batch_op:
        for column in _ADDRESS_COLUMNS:
            batch_op.drop_column(column)
