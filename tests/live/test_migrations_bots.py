"""Migrations 0014 (bots) and 0015 (bot pace), up, down and up again, on
PostgreSQL and on SQLite.

From a database at 0013 holding a game with a seat: after the upgrade the
seat is a person's (no bot level) and the game has no think budget and no
pace; a bot seat can then be written; the downgrade drops the columns and
keeps the rows.
"""

from __future__ import annotations

from pathlib import Path

import sqlalchemy as sa

from referee.store.db import Database
from tests.live.test_migrations import AT, migrate

GAME = "d" * 32


def up_down_up(url: str) -> None:
    database = Database(url)
    try:
        migrate(database, "0013")
        with database.engine.begin() as connection:
            connection.execute(
                sa.text(
                    "INSERT INTO game (id, name, rules_version, options, seed, seed_commitment,"
                    " status, version, head_hash, to_act, created_at, updated_at, trusted)"
                    " VALUES (:id, 'mandala', '2', '{}', 's', 'c', 'active', 0, 'h', '[0]',"
                    " :at, :at, true)"
                ),
                {"id": GAME, "at": AT},
            )
            connection.execute(
                sa.text(
                    "INSERT INTO seat (game_id, seat, name, token_hash, webhook_failures,"
                    " webhook_generation) VALUES (:id, 0, 'Ann', 't', 0, 0)"
                ),
                {"id": GAME},
            )
        migrate(database, "head")
        with database.engine.begin() as connection:
            assert connection.execute(sa.text("SELECT bot, bot_since FROM seat")).one() == (
                None,
                None,
            )
            assert connection.execute(sa.text("SELECT bot_seconds, bot_pace FROM game")).one() == (
                None,
                None,
            )
            connection.execute(sa.text("UPDATE seat SET bot = 'greedy', bot_since = 3"))
            connection.execute(sa.text("UPDATE game SET bot_seconds = 0.5, bot_pace = 1.3"))
        migrate(database, "0013", down=True)
        with database.engine.connect() as connection:
            columns = {column["name"] for column in sa.inspect(connection).get_columns("seat")}
            assert "bot" not in columns and "bot_since" not in columns
            columns = {column["name"] for column in sa.inspect(connection).get_columns("game")}
            assert "bot_seconds" not in columns and "bot_pace" not in columns
            assert connection.execute(sa.text("SELECT name FROM seat")).scalar() == "Ann"
        migrate(database, "head")
    finally:
        database.dispose()


def test_the_bots_migration_on_sqlite(tmp_path: Path) -> None:
    up_down_up(f"sqlite:///{tmp_path / 'old.sqlite3'}")


def test_the_bots_migration_on_postgresql(pg_database: str) -> None:
    up_down_up(pg_database)
