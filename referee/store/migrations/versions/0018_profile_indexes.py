"""Profiles: a covering index of games' status and times, and partial indexes of
timeouts and resignations

Revision ID: 0018
Revises: 0017
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

revision = "0018"
down_revision = "0017"
branch_labels = None
depends_on = None

_TIMEOUTS = sa.text("source = 'timeout'")
_RESIGNATIONS = sa.text("notation = 'resign'")


def upgrade() -> None:
    op.create_index("ix_game_id_status_times", "game", ["id", "status", "updated_at", "created_at"])
    op.create_index(
        "ix_submission_timeout",
        "submission",
        ["game_id", "seat"],
        sqlite_where=_TIMEOUTS,
        postgresql_where=_TIMEOUTS,
    )
    op.create_index(
        "ix_move_resign",
        "move",
        ["game_id", "seat"],
        sqlite_where=_RESIGNATIONS,
        postgresql_where=_RESIGNATIONS,
    )


def downgrade() -> None:
    op.drop_index("ix_move_resign", table_name="move")
    op.drop_index("ix_submission_timeout", table_name="submission")
    op.drop_index("ix_game_id_status_times", table_name="game")
