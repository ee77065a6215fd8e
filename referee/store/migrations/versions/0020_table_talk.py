"""Table talk: seats' messages, what each seat has seen, mutes, and private notes

Revision ID: 0020
Revises: 0019
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

revision = "0020"
down_revision = "0019"
branch_labels = None
depends_on = None


def _game_id() -> sa.Column[str]:
    return sa.Column("game_id", sa.String(32), sa.ForeignKey("game.id"), primary_key=True)


def upgrade() -> None:
    op.create_table(
        "message",
        _game_id(),
        sa.Column("seq", sa.Integer(), primary_key=True),
        sa.Column("seat", sa.Integer(), nullable=False),
        sa.Column("text", sa.String(1000), nullable=False),
        sa.Column("via", sa.String(10), nullable=False),
        sa.Column("created_at", sa.String(40), nullable=False),
    )
    op.create_index("ix_message_seat_created", "message", ["game_id", "seat", "created_at"])
    op.create_table(
        "message_seen",
        _game_id(),
        sa.Column("seat", sa.Integer(), primary_key=True),
        sa.Column("seen_seq", sa.Integer(), nullable=False),
    )
    op.create_table(
        "message_mute",
        _game_id(),
        sa.Column("seat", sa.Integer(), primary_key=True),
        sa.Column("muted_seat", sa.Integer(), primary_key=True),
        sa.Column("created_at", sa.String(40), nullable=False),
    )
    op.create_table(
        "seat_note",
        _game_id(),
        sa.Column("seat", sa.Integer(), primary_key=True),
        sa.Column("text", sa.String(4000), nullable=False),
        sa.Column("updated_at", sa.String(40), nullable=False),
    )


def downgrade() -> None:
    for table in ("seat_note", "message_mute", "message_seen"):
        op.drop_table(table)
    op.drop_index("ix_message_seat_created", table_name="message")
    op.drop_table("message")
