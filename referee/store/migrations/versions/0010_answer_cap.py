"""Whether a mail reply is answered, and when answers resume after the last one

Revision ID: 0010
Revises: 0009
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

revision = "0010"
down_revision = "0009"
branch_labels = None
depends_on = None


def upgrade() -> None:
    # Replies taken before count as unanswered: the cap starts afresh.
    with op.batch_alter_table("inbound", schema=None) as batch_op:
        batch_op.add_column(
            sa.Column("answered", sa.Boolean(), nullable=False, server_default=sa.false())
        )
        batch_op.add_column(sa.Column("quiet_until", sa.String(length=40), nullable=True))
        batch_op.create_index("ix_inbound_seat_received", ["game_id", "seat", "received_at"])


def downgrade() -> None:
    with op.batch_alter_table("inbound", schema=None) as batch_op:
        batch_op.drop_index("ix_inbound_seat_received")
        batch_op.drop_column("quiet_until")
        batch_op.drop_column("answered")
