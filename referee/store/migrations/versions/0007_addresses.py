"""Mail addresses and their consent; trusted games; when a seat's link was mailed

Revision ID: 0007
Revises: 0006
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

revision = "0007"
down_revision = "0006"
branch_labels = None
depends_on = None


def upgrade() -> None:
    op.create_table(
        "address",
        sa.Column("address", sa.String(length=254), primary_key=True),
        sa.Column("state", sa.String(length=10), nullable=False),
        sa.Column("accept_token", sa.String(length=64), nullable=False, unique=True),
        sa.Column("stop_token", sa.String(length=64), nullable=False, unique=True),
        sa.Column("created_at", sa.String(length=40), nullable=False),
        sa.Column("invited_at", sa.String(length=40), nullable=True),
        sa.Column("invited_row", sa.Integer(), nullable=True),
        sa.Column("accepted_at", sa.String(length=40), nullable=True),
        sa.Column("stopped_at", sa.String(length=40), nullable=True),
    )
    # Games made before consent existed keep mailing their seats as they did.
    with op.batch_alter_table("game", schema=None) as batch_op:
        batch_op.add_column(
            sa.Column("trusted", sa.Boolean(), nullable=False, server_default=sa.true())
        )
    with op.batch_alter_table("seat", schema=None) as batch_op:
        batch_op.add_column(sa.Column("linked_at", sa.String(length=40), nullable=True))


def downgrade() -> None:
    with op.batch_alter_table("seat", schema=None) as batch_op:
        batch_op.drop_column("linked_at")
    with op.batch_alter_table("game", schema=None) as batch_op:
        batch_op.drop_column("trusted")
    op.drop_table("address")
