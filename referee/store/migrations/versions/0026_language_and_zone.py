"""A player's language and time zone, a game's language, and the language a seat's
mail is written in

Revision ID: 0026
Revises: 0025
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

revision = "0026"
down_revision = "0025"
branch_labels = None
depends_on = None

_ADDED = (
    ("address", "language", 8),
    ("address", "time_zone", 64),
    ("game", "language", 8),
    ("seat", "language", 8),
)


def upgrade() -> None:
    # Plain ADD COLUMN (nullable, no default): SQLite adds it without copying the
    # tables, whose expression and partial indexes a copy would lose. None reads as
    # the defaults: English, UTC.
    for table, column, length in _ADDED:
        op.add_column(table, sa.Column(column, sa.String(length=length), nullable=True))


def downgrade() -> None:
    for table, column, _length in reversed(_ADDED):
        with op.batch_alter_table(table, schema=None, recreate="never") as batch:
            batch.drop_column(column)
