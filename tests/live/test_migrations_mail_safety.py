"""Migrations 0010 (the cap on answers) and 0011 (bounces), up, down and up again.

Run on PostgreSQL and on SQLite (where Alembic copies tables to change
them), from a database at 0009 holding rows of the tables they change.
"""

from __future__ import annotations

from pathlib import Path

import pytest
import sqlalchemy as sa
from sqlalchemy.exc import IntegrityError

from referee.store.db import Database
from tests.live.test_migrations import AT, migrate


def write_rows(connection: sa.Connection) -> None:
    connection.execute(
        sa.text(
            "INSERT INTO inbound (message_key, game_id, seat, received_at, outcome)"
            " VALUES ('k1', NULL, NULL, :at, 'refused')"
        ),
        {"at": AT},
    )
    connection.execute(
        sa.text(
            "INSERT INTO address (address, state, accept_token, stop_token, created_at)"
            " VALUES ('bob@players.test', 'accepted', 'a1', 's1', :at),"
            " ('ann@players.test', 'invited', 'a2', 's2', :at)"
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
        known = connection.execute(
            sa.text("SELECT bounce_token, bounces, bounced_at FROM address ORDER BY address")
        ).all()
    # A reply taken before the cap existed counts as unanswered: the cap starts afresh.
    assert (bool(inbound.answered), inbound.quiet_until) == (False, None)
    assert "ix_inbound_seat_received" in indexes
    # Known addresses have no bounce yet, and get their token when next mailed.
    assert [tuple(row) for row in known] == [(None, 0, None), (None, 0, None)]
    # Two of them wait for a token (NULLs are no duplicates), but no two share one.
    with database.engine.begin() as connection:
        connection.execute(
            sa.text("UPDATE address SET bounce_token = 't' WHERE address = 'bob@players.test'")
        )
    with pytest.raises(IntegrityError), database.engine.begin() as connection:
        connection.execute(
            sa.text("UPDATE address SET bounce_token = 't' WHERE address = 'ann@players.test'")
        )
    migrate(database, "0009", down=True)
    with database.engine.connect() as connection:
        assert "answered" not in columns(connection, "inbound")
        assert {"bounce_token", "bounces", "bounced_at"}.isdisjoint(columns(connection, "address"))
        assert connection.execute(sa.text("SELECT count(*) FROM address")).scalar() == 2
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
