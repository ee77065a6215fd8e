"""A seat's webhook remembers the player token that set it, so that revoking the
token drops the webhook

Revision ID: 0022
Revises: 0021
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

revision = "0022"
down_revision = "0021"
branch_labels = None
depends_on = None


def upgrade() -> None:
    # Plain ADD COLUMN (nullable, no default): SQLite adds it without copying `seat`,
    # whose expression index a copy would lose.
    op.add_column("seat", sa.Column("webhook_token_id", sa.Integer(), nullable=True))
    op.create_index("ix_seat_webhook_token_id", "seat", ["webhook_token_id"])


def downgrade() -> None:
    op.drop_index("ix_seat_webhook_token_id", table_name="seat")
    with op.batch_alter_table("seat", schema=None, recreate="never") as batch:
        batch.drop_column("webhook_token_id")
