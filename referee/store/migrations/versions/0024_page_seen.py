"""A seat remembers when its game page was last open, so that a turn answered there
is not also mailed

Revision ID: 0024
Revises: 0023
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

revision = "0024"
down_revision = "0023"
branch_labels = None
depends_on = None


def upgrade() -> None:
    # Plain ADD COLUMN (nullable, no default): SQLite adds it without copying `seat`,
    # whose expression index a copy would lose.
    op.add_column("seat", sa.Column("page_seen_at", sa.String(length=40), nullable=True))


def downgrade() -> None:
    with op.batch_alter_table("seat", schema=None, recreate="never") as batch:
        batch.drop_column("page_seen_at")
