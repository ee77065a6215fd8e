"""The trim sweep's indexes: finished games still holding a cached state, deliveries done
with, notices by age

Revision ID: 0023
Revises: 0022
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

revision = "0023"
down_revision = "0022"
branch_labels = None
depends_on = None

_CACHED_OVER = sa.text("status = 'over' AND state IS NOT NULL")
_DONE = sa.text("done_at IS NOT NULL")


def upgrade() -> None:
    op.create_index(
        "ix_game_cached_over",
        "game",
        ["updated_at"],
        sqlite_where=_CACHED_OVER,
        postgresql_where=_CACHED_OVER,
    )
    op.create_index(
        "ix_delivery_done", "delivery", ["done_at"], sqlite_where=_DONE, postgresql_where=_DONE
    )
    op.create_index("ix_outbox_created_at", "outbox", ["created_at"])


def downgrade() -> None:
    op.drop_index("ix_outbox_created_at", table_name="outbox")
    op.drop_index("ix_delivery_done", table_name="delivery")
    op.drop_index("ix_game_cached_over", table_name="game")
