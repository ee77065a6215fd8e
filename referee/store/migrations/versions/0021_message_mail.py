"""Table talk by mail: when each seat was last sent the mail of its unseen messages, and
messages found by their time

Revision ID: 0021
Revises: 0020
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

revision = "0021"
down_revision = "0020"
branch_labels = None
depends_on = None


def upgrade() -> None:
    op.create_table(
        "message_mail",
        sa.Column("game_id", sa.String(32), sa.ForeignKey("game.id"), primary_key=True),
        sa.Column("seat", sa.Integer(), primary_key=True),
        sa.Column("sent_at", sa.String(40), nullable=False),
    )
    op.create_index("ix_message_created", "message", ["created_at"])


def downgrade() -> None:
    op.drop_index("ix_message_created", table_name="message")
    op.drop_table("message_mail")
