"""Bounces: each address's envelope-sender token, its hard bounces, when it bounced out

Revision ID: 0011
Revises: 0010
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

revision = "0011"
down_revision = "0010"
branch_labels = None
depends_on = None


def upgrade() -> None:
    # Tokens are HMACs with the server secret, which a migration does not hold:
    # an address known before gets its token when it is next mailed.
    with op.batch_alter_table("address", schema=None) as batch_op:
        batch_op.add_column(sa.Column("bounce_token", sa.String(length=64), nullable=True))
        batch_op.add_column(
            sa.Column("bounces", sa.Integer(), nullable=False, server_default=sa.text("0"))
        )
        batch_op.add_column(sa.Column("bounced_at", sa.String(length=40), nullable=True))
        batch_op.create_unique_constraint("uq_address_bounce_token", ["bounce_token"])


def downgrade() -> None:
    with op.batch_alter_table("address", schema=None) as batch_op:
        batch_op.drop_constraint("uq_address_bounce_token", type_="unique")
        batch_op.drop_column("bounced_at")
        batch_op.drop_column("bounces")
        batch_op.drop_column("bounce_token")
