"""Lean rows: a move is keyed by its place in the log and keeps no JSON; on PostgreSQL,
ids, hashes and stamps are held in its own types

- `move` loses its serial key (its key is `(game_id, seq)`, which was unique
  already) and its JSON (the notation parses back to the move, as records are
  read). The table is written anew, its columns in the order that packs a row
  tightest.
- On PostgreSQL: games' and submissions' ids become `uuid` (16 bytes, not 33),
  moves' and requests' hashes `bytea` (33, not 65), and the stamps of moves,
  submissions, notices and deliveries `timestamptz` (8, not 33). The code reads
  them as the same text (`referee.store.columns`), so no hash changes. SQLite
  keeps its text.
- A delivery written due at once is due at the epoch instead of at an empty
  text (no stamp), and the index of due deliveries holds the ones still to send
  alone.

The upgrade refuses a database with a game id that is not 32 hex digits or a
move whose stamp is not in the form the referee writes, which the new types
could not give back as they are.

Revision ID: 0028
Revises: 0027
"""

from __future__ import annotations

from typing import Any

import sqlalchemy as sa
from alembic import op

revision = "0028"
down_revision = "0027"
branch_labels = None
depends_on = None

# Every column holding a game's or a submission's id (`game.id` first).
IDS = (
    ("game", "id"),
    ("rematch_acceptance", "game_id"),
    ("rematch_claim", "game_id"),
    ("rematch_claim", "rematch_id"),
    ("seat", "game_id"),
    ("seat_handover", "game_id"),
    ("seek", "game_id"),
    ("rated_game", "game_id"),
    ("mute", "game_id"),
    ("submission", "id"),
    ("submission", "game_id"),
    ("message", "game_id"),
    ("message_seen", "game_id"),
    ("message_mute", "game_id"),
    ("seat_note", "game_id"),
    ("message_mail", "game_id"),
    ("snapshot", "game_id"),
    ("verification", "game_id"),
    ("outbox", "game_id"),
    ("inbound", "game_id"),
    ("inbound", "submission_id"),
)
HASHES = (("submission", "request_hash"),)
STAMPS = (
    ("submission", "created_at"),
    ("submission", "decided_at"),
    ("outbox", "created_at"),
    ("delivery", "next_attempt_at"),
    ("delivery", "lease_until"),
    ("delivery", "done_at"),
)
# The form `referee.store.clock.stamp` writes, which a `timestamptz` gives back.
STAMP_FORM = r"^[0-9]{4}-[0-9]{2}-[0-9]{2}T[0-9]{2}:[0-9]{2}:[0-9]{2}\.[0-9]{6}\+00:00$"
TEXT_STAMP = """to_char({} AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.US"+00:00"')"""
DUE_AT_ONCE = "1970-01-01T00:00:00.000000+00:00"
_RESIGN = sa.text("notation = 'resign'")
_DUE = sa.text("status IN ('pending', 'sending')")


def _postgresql() -> bool:
    return op.get_bind().dialect.name == "postgresql"


def upgrade() -> None:
    # Before any moment, as the empty text was: due at once.
    op.execute(f"UPDATE delivery SET next_attempt_at = '{DUE_AT_ONCE}' WHERE next_attempt_at = ''")
    op.drop_index("ix_delivery_due", table_name="delivery")
    if _postgresql():
        _refuse_what_types_would_change()
        dropped = _drop_foreign_keys()
        for table, column in IDS:
            op.execute(
                f'ALTER TABLE "{table}" ALTER COLUMN {column} TYPE uuid USING {column}::uuid'
            )
        for table, column in HASHES:
            op.execute(
                f'ALTER TABLE "{table}" ALTER COLUMN {column} TYPE bytea'
                f" USING decode({column}, 'hex')"
            )
        for table, column in STAMPS:
            op.execute(
                f'ALTER TABLE "{table}" ALTER COLUMN {column} TYPE timestamptz'
                f" USING {column}::timestamptz"
            )
        _move_anew(
            sa.Uuid(),
            sa.TIMESTAMP(timezone=True),
            sa.LargeBinary(),
            "game_id::uuid, seq, seat, created_at::timestamptz, decode(hash, 'hex')",
        )
        for name, table, definition in dropped:
            if table != "move":
                op.execute(f'ALTER TABLE "{table}" ADD CONSTRAINT "{name}" {definition}')
    else:
        _move_anew(
            sa.String(32), sa.String(40), sa.String(64), "game_id, seq, seat, created_at, hash"
        )
    op.create_index(
        "ix_delivery_due",
        "delivery",
        ["channel", "status", "next_attempt_at"],
        sqlite_where=_DUE,
        postgresql_where=_DUE,
    )


def _refuse_what_types_would_change() -> None:
    connection = op.get_bind()
    odd_ids = connection.execute(
        sa.text("SELECT count(*) FROM game WHERE id !~ '^[0-9a-f]{32}$'")
    ).scalar_one()
    odd_stamps = connection.execute(
        sa.text("SELECT count(*) FROM move WHERE created_at !~ :form"), {"form": STAMP_FORM}
    ).scalar_one()
    if odd_ids or odd_stamps:
        raise RuntimeError(
            f"{odd_ids} game ids are not 32 hex digits and {odd_stamps} moves' stamps are"
            " not in the referee's form: the upgrade would change them, and with them the"
            " games' hashes; nothing was changed"
        )


def _drop_foreign_keys() -> list[tuple[str, str, str]]:
    """Drop every foreign key to a game or a submission; each (name, table, definition)."""
    found = (
        op.get_bind()
        .execute(
            sa.text(
                "SELECT conname, conrelid::regclass::text, pg_get_constraintdef(oid)"
                " FROM pg_constraint WHERE contype = 'f'"
                " AND confrelid IN ('game'::regclass, 'submission'::regclass)"
            )
        )
        .all()
    )
    for name, table, _definition in found:
        op.execute(f'ALTER TABLE {table} DROP CONSTRAINT "{name}"')
    return [(name, table.strip('"'), definition) for name, table, definition in found]


def _move_anew(
    game_id: sa.types.TypeEngine[Any],
    stamp: sa.types.TypeEngine[Any],
    digest: sa.types.TypeEngine[Any],
    converted: str,
) -> None:
    """Write the move table anew in its new shape, its rows converted by `converted`."""
    op.create_table(
        "move_new",
        sa.Column("game_id", game_id, nullable=False),
        sa.Column("seq", sa.Integer(), nullable=False, autoincrement=False),
        sa.Column("seat", sa.Integer(), nullable=False),
        sa.Column("created_at", stamp, nullable=False),
        sa.Column("hash", digest, nullable=False),
        sa.Column("notation", sa.String(length=400), nullable=False),
        sa.Column("source", sa.String(length=10), nullable=False),
        sa.ForeignKeyConstraint(["game_id"], ["game.id"], name="move_game_id_fkey"),
        sa.PrimaryKeyConstraint("game_id", "seq", name="move_new_pkey"),
    )
    op.execute(
        "INSERT INTO move_new (game_id, seq, seat, created_at, hash, notation, source)"
        f" SELECT {converted}, notation, source FROM move"
    )
    _replace_move("move_new")
    _index_resignations()


def _index_resignations() -> None:
    op.create_index(
        "ix_move_resign",
        "move",
        ["game_id", "seat"],
        sqlite_where=_RESIGN,
        postgresql_where=_RESIGN,
    )


def _replace_move(table: str) -> None:
    """Put `table` in the place of `move`, its primary key named as PostgreSQL names a
    table's own."""
    op.drop_table("move")
    op.rename_table(table, "move")
    if _postgresql():
        op.execute(f"ALTER TABLE move RENAME CONSTRAINT {table}_pkey TO move_pkey")


def downgrade() -> None:
    op.drop_index("ix_delivery_due", table_name="delivery")
    if _postgresql():
        dropped = _drop_foreign_keys()
        for table, column in (*IDS, ("move", "game_id")):
            op.execute(
                f'ALTER TABLE "{table}" ALTER COLUMN {column} TYPE varchar(32)'
                f" USING replace({column}::text, '-', '')"
            )
        for table, column in (*HASHES, ("move", "hash")):
            op.execute(
                f'ALTER TABLE "{table}" ALTER COLUMN {column} TYPE varchar(64)'
                f" USING encode({column}, 'hex')"
            )
        for table, column in (*STAMPS, ("move", "created_at")):
            op.execute(
                f'ALTER TABLE "{table}" ALTER COLUMN {column} TYPE varchar(40)'
                f" USING {TEXT_STAMP.format(column)}"
            )
        for name, table, definition in dropped:
            op.execute(f'ALTER TABLE "{table}" ADD CONSTRAINT "{name}" {definition}')
    _move_with_json()
    op.create_index("ix_delivery_due", "delivery", ["channel", "status", "next_attempt_at"])


def _move_with_json() -> None:
    """Write the move table anew in its old shape: a serial key, and each move's JSON
    parsed from its notation by its game's rules."""
    from referee import games

    op.create_table(
        "move_old",
        sa.Column("id", sa.Integer(), primary_key=True),  # named move_old_pkey
        sa.Column("game_id", sa.String(length=32), sa.ForeignKey("game.id"), nullable=False),
        sa.Column("seq", sa.Integer(), nullable=False),
        sa.Column("seat", sa.Integer(), nullable=False),
        sa.Column("move", sa.JSON(), nullable=False),
        sa.Column("notation", sa.String(length=400), nullable=False),
        sa.Column("created_at", sa.String(length=40), nullable=False),
        sa.Column("hash", sa.String(length=64), nullable=False),
        sa.Column("source", sa.String(length=10), nullable=False),
        sa.UniqueConstraint("game_id", "seq", name="move_game_id_seq_key"),
    )
    old = sa.table(
        "move_old",
        *(sa.column(name) for name in ("game_id", "seq", "seat", "notation", "created_at")),
        *(sa.column(name) for name in ("hash", "source")),
        sa.column("move", sa.JSON()),
    )
    connection = op.get_bind()
    rows = connection.execute(
        sa.text(
            "SELECT move.game_id, move.seq, move.seat, move.notation, move.created_at,"
            " move.hash, move.source, game.name, game.rules_version"
            " FROM move JOIN game ON game.id = move.game_id ORDER BY move.created_at, move.seq"
        )
    ).all()
    written = []
    for game_id, seq, seat, notation, created_at, digest, source, name, version in rows:
        rules = games.get(name, version)
        move = rules.move_to_json(rules.parse(notation))
        written.append(
            {
                "game_id": game_id,
                "seq": seq,
                "seat": seat,
                "move": move,
                "notation": notation,
                "created_at": created_at,
                "hash": digest,
                "source": source,
            }
        )
    if written:
        connection.execute(sa.insert(old), written)
    _replace_move("move_old")
    _index_resignations()
