"""Each move keeps where it came from, and no longer names its submission or stores its
previous hash

A record's lines read their source from the move row itself, so that a
finished game's submissions can be trimmed like its notices (a submission
still names its move by `seq`); and the chain's previous hash is not stored
twice (it is the previous move's hash, or the seed's commitment for the first).

Revision ID: 0027
Revises: 0026
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

revision = "0027"
down_revision = "0026"
branch_labels = None
depends_on = None


def upgrade() -> None:
    # Plain ADD COLUMN (nullable): SQLite adds it without copying the table, whose
    # partial index a copy would lose. Every move written from now on names its source.
    op.add_column("move", sa.Column("source", sa.String(length=10), nullable=True))
    op.execute(
        "UPDATE move SET source = COALESCE("
        "(SELECT submission.source FROM submission WHERE submission.id = move.submission_id),"
        " 'forced')"
    )
    with op.batch_alter_table("move", schema=None, recreate="never") as batch:
        batch.drop_column("prev_hash")
        batch.drop_column("submission_id")
    # Games the trim sweep took in before (their cached state gone) lose their decided
    # submissions now, as the sweep drops them from here on.
    op.execute(
        "DELETE FROM submission WHERE status <> 'pending' AND game_id IN"
        " (SELECT id FROM game WHERE status = 'over' AND state IS NULL)"
    )


def downgrade() -> None:
    # A trimmed game's submissions are not brought back: its moves then name none.
    op.add_column("move", sa.Column("submission_id", sa.String(length=32), nullable=True))
    op.execute(
        "UPDATE move SET submission_id = (SELECT submission.id FROM submission"
        " WHERE submission.game_id = move.game_id AND submission.seq = move.seq)"
    )
    op.add_column("move", sa.Column("prev_hash", sa.String(length=64), nullable=True))
    op.execute(
        "UPDATE move SET prev_hash = COALESCE("
        "(SELECT before.hash FROM move AS before"
        " WHERE before.game_id = move.game_id AND before.seq = move.seq - 1),"
        " (SELECT game.seed_commitment FROM game WHERE game.id = move.game_id))"
    )
    with op.batch_alter_table("move", schema=None, recreate="never") as batch:
        batch.drop_column("source")
