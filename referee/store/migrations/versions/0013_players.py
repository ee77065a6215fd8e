"""Players: how each address is told of turns, sign-in links, sessions, tokens, mutes, vacations

Revision ID: 0013
Revises: 0012
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

revision = "0013"
down_revision = "0012"
branch_labels = None
depends_on = None


def upgrade() -> None:
    # Columns added and tables made, nothing altered: on SQLite, altering
    # `game` or `outbox` would copy them, which the tables referring to them forbid.
    with op.batch_alter_table("address", schema=None) as batch_op:
        batch_op.add_column(
            sa.Column("turn_mail", sa.String(length=10), nullable=False, server_default="each")
        )
        batch_op.add_column(sa.Column("digest_hours", sa.JSON(), nullable=True))
        batch_op.add_column(
            sa.Column("reminders", sa.Boolean(), nullable=False, server_default=sa.true())
        )
        batch_op.add_column(sa.Column("digest_hour", sa.String(length=40), nullable=True))
        batch_op.add_column(sa.Column("sign_in_at", sa.String(length=40), nullable=True))
    op.create_index("ix_seat_address", "seat", [sa.text("lower(email)")])
    op.create_table(
        "sign_in",
        sa.Column("token_hash", sa.String(length=64), nullable=False),
        sa.Column("address", sa.String(length=254), nullable=False),
        sa.Column("created_at", sa.String(length=40), nullable=False),
        sa.Column("expires_at", sa.String(length=40), nullable=False),
        sa.Column("used_at", sa.String(length=40), nullable=True),
        sa.PrimaryKeyConstraint("token_hash"),
    )
    op.create_index("ix_sign_in_address", "sign_in", ["address"])
    op.create_table(
        "player_session",
        sa.Column("token_hash", sa.String(length=64), nullable=False),
        sa.Column("address", sa.String(length=254), nullable=False),
        sa.Column("created_at", sa.String(length=40), nullable=False),
        sa.Column("expires_at", sa.String(length=40), nullable=False),
        sa.PrimaryKeyConstraint("token_hash"),
    )
    op.create_index("ix_player_session_address", "player_session", ["address"])
    op.create_table(
        "player_token",
        sa.Column("id", sa.Integer(), nullable=False),
        sa.Column("address", sa.String(length=254), nullable=False),
        sa.Column("name", sa.String(length=100), nullable=False),
        sa.Column("scopes", sa.JSON(), nullable=False),
        sa.Column("token_hash", sa.String(length=64), nullable=False),
        sa.Column("created_at", sa.String(length=40), nullable=False),
        sa.Column("revoked_at", sa.String(length=40), nullable=True),
        sa.Column("last_used_at", sa.String(length=40), nullable=True),
        sa.PrimaryKeyConstraint("id"),
        sa.UniqueConstraint("token_hash"),
    )
    op.create_index("ix_player_token_address", "player_token", ["address"])
    op.create_table(
        "mute",
        sa.Column("address", sa.String(length=254), nullable=False),
        sa.Column("game_id", sa.String(length=32), sa.ForeignKey("game.id"), nullable=False),
        sa.Column("created_at", sa.String(length=40), nullable=False),
        sa.PrimaryKeyConstraint("address", "game_id"),
    )
    op.create_table(
        "vacation",
        sa.Column("id", sa.Integer(), nullable=False),
        sa.Column("address", sa.String(length=254), nullable=False),
        sa.Column("starts_at", sa.String(length=40), nullable=False),
        sa.Column("ends_at", sa.String(length=40), nullable=False),
        sa.Column("created_at", sa.String(length=40), nullable=False),
        sa.PrimaryKeyConstraint("id"),
    )
    op.create_index("ix_vacation_address_ends", "vacation", ["address", "ends_at"])


def downgrade() -> None:
    op.drop_table("vacation")
    op.drop_table("mute")
    op.drop_table("player_token")
    op.drop_table("player_session")
    op.drop_table("sign_in")
    op.drop_index("ix_seat_address", table_name="seat")
    with op.batch_alter_table("address", schema=None) as batch_op:
        batch_op.drop_column("sign_in_at")
        batch_op.drop_column("digest_hour")
        batch_op.drop_column("reminders")
        batch_op.drop_column("digest_hours")
        batch_op.drop_column("turn_mail")
