"""Migrations 0010 (the cap on answers) and 0011 (bounces), up, down and up again.

Run on PostgreSQL and on SQLite (where Alembic copies tables to change
them), from a database at 0009 holding rows of the tables they change.
"""

from __future__ import annotations

from pathlib import Path

import sqlalchemy as sa

from referee.store.db import Database
from tests.service.test_migrations import AT, migrate


def write_rows(connection: sa.Connection) -> None:
    connection.execute(
        sa.text(
            "INSERT INTO inbound (message_key, game_id, seat, received_at, outcome)"
            " VALUES ('k1', NULL, NULL, :at, 'refused')"
        ),
        {"at": AT},
    )


def columns(connection: sa.Connection, table: str) -> set[str]:
    return {c["name"] for c in sa.inspect(connection).get_columns(table)}


def up_down_up(database: Database) -> None:
    migrate(database, "0009")
    with database.engine.begin() as connection:
        write_rows(connection)
    migrate(database, "head")
    with database.engine.connect() as connection:
        inbound = connection.execute(sa.text("SELECT answered, quiet_until FROM inbound")).one()
        indexes = {i["name"] for i in sa.inspect(connection).get_indexes("inbound")}
    # A reply taken before the cap existed counts as unanswered: the cap starts afresh.
    assert (bool(inbound.answered), inbound.quiet_until) == (False, None)
    assert "ix_inbound_seat_received" in indexes
    migrate(database, "0009", down=True)
    with database.engine.connect() as connection:
        assert "answered" not in columns(connection, "inbound")
        assert connection.execute(sa.text("SELECT outcome FROM inbound")).scalar() == "refused"
    migrate(database, "head")


def up_down_up_on(url: str) -> None:
    database = Database(url)
    try:
        up_down_up(database)
    finally:
        database.dispose()


def test_mail_safety_migrations_on_sqlite(tmp_path: Path) -> None:
    up_down_up_on(f"sqlite:///{tmp_path / 'old.sqlite3'}")


def test_mail_safety_migrations_on_postgresql(pg_database: str) -> None:
    up_down_up_on(pg_database)
