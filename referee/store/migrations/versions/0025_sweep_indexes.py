"""The periodic sweeps read their due rows by index: running games with a deadline by
their turn's time and start (and those not reminded yet), running games by their last
change and bots' seats, finished games the ratings have not taken in (a new column,
`taken_in`, set for those that have), players who get digests or news of open games,
pending submissions (in place of every submission by status: a decided one leaves it);
and no index of submissions by game beside the unique key that begins with it

Revision ID: 0025
Revises: 0024
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

revision = "0025"
down_revision = "0024"
branch_labels = None
depends_on = None

_CLOCKED = sa.text("status = 'active' AND deadline_seconds IS NOT NULL")
_UNREMINDED = sa.text(
    "status = 'active' AND deadline_seconds IS NOT NULL "
    "AND (reminded_version IS NULL OR reminded_version <> version)"
)
_RUNNING = sa.text("status = 'active'")
_BOT = sa.text("bot IS NOT NULL")
_UNTAKEN = sa.text("status = 'over' AND NOT taken_in")
_PENDING = sa.text("status = 'pending'")
_DIGEST = sa.text("turn_mail = 'digest'")
_NEWS = sa.text("seek_news IS NOT NULL")

# Each index: its name, table, columns and rows.
_INDEXES = (
    ("ix_game_clock", "game", ["deadline_seconds", "updated_at"], _CLOCKED),
    ("ix_game_unreminded", "game", ["deadline_seconds", "updated_at"], _UNREMINDED),
    ("ix_game_running", "game", ["updated_at"], _RUNNING),
    ("ix_seat_bot", "seat", ["game_id"], _BOT),
    ("ix_game_untaken", "game", ["updated_at", "id"], _UNTAKEN),
    ("ix_submission_pending", "submission", ["created_at"], _PENDING),
    ("ix_address_digest", "address", ["address"], _DIGEST),
    ("ix_address_news", "address", ["address"], _NEWS),
)


def upgrade() -> None:
    op.add_column(
        "game",
        sa.Column("taken_in", sa.Boolean(), nullable=False, server_default=sa.text("false")),
    )
    op.execute("UPDATE game SET taken_in = true WHERE id IN (SELECT game_id FROM rated_game)")
    for name, table, columns, where in _INDEXES:
        op.create_index(name, table, columns, sqlite_where=where, postgresql_where=where)
    op.drop_index("ix_submission_status_created", table_name="submission")
    op.drop_index("ix_submission_game_id", table_name="submission")


def downgrade() -> None:
    op.create_index("ix_submission_game_id", "submission", ["game_id"])
    op.create_index("ix_submission_status_created", "submission", ["status", "created_at"])
    for name, table, _columns, _where in reversed(_INDEXES):
        op.drop_index(name, table_name=table)
    op.drop_column("game", "taken_in")
