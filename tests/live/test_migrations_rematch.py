"""Migration 0012 (rematch), up, down and up again, on PostgreSQL and on SQLite.

From a database at 0011 holding a finished game: after the upgrade the game
has no rematch and no seat has accepted one; acceptances then hold one row
per seat and a game one rematch; the downgrade drops both tables and keeps
the game.
"""

from __future__ import annotations

from pathlib import Path

import pytest
import sqlalchemy as sa
from sqlalchemy.exc import IntegrityError

from referee.store.db import Database
from tests.live.test_migrations import AT, migrate

GAME = "a" * 32


def _finished_game(connection: sa.Connection) -> None:
    connection.execute(
        sa.text(
            "INSERT INTO game (id, name, rules_version, options, seed, seed_commitment, status,"
            " version, head_hash, to_act, created_at, updated_at, trusted)"
            " VALUES (:id, 'mandala', '2', '{}', 's', 'c', 'over', 3, 'h', '[]', :at, :at, true)"
        ),
        {"id": GAME, "at": AT},
    )


def up_down_up(url: str) -> None:
    database = Database(url)
    try:
        migrate(database, "0011")
        with database.engine.begin() as connection:
            _finished_game(connection)
        migrate(database, "head")
        with database.engine.connect() as connection:
            assert connection.execute(sa.text("SELECT count(*) FROM rematch_claim")).scalar() == 0
            assert (
                connection.execute(sa.text("SELECT count(*) FROM rematch_acceptance")).scalar() == 0
            )
        accept = sa.text(
            "INSERT INTO rematch_acceptance (game_id, seat, accepted_at) VALUES (:g, 0, :at)"
        )
        with database.engine.begin() as connection:
            connection.execute(accept, {"g": GAME, "at": AT})
        with pytest.raises(IntegrityError), database.engine.begin() as connection:
            connection.execute(accept, {"g": GAME, "at": AT})  # one row per seat
        claim = sa.text(
            "INSERT INTO rematch_claim (game_id, rematch_id, claimed_at) VALUES (:g, :r, :at)"
        )
        with database.engine.begin() as connection:
            connection.execute(claim, {"g": GAME, "r": "b" * 32, "at": AT})
        with pytest.raises(IntegrityError), database.engine.begin() as connection:
            connection.execute(claim, {"g": GAME, "r": "c" * 32, "at": AT})  # one rematch
        migrate(database, "0011", down=True)
        with database.engine.connect() as connection:
            assert not sa.inspect(connection).has_table("rematch_acceptance")
            assert not sa.inspect(connection).has_table("rematch_claim")
            assert connection.execute(sa.text("SELECT status FROM game")).scalar() == "over"
        migrate(database, "head")
    finally:
        database.dispose()


def test_the_rematch_migration_on_sqlite(tmp_path: Path) -> None:
    up_down_up(f"sqlite:///{tmp_path / 'old.sqlite3'}")


def test_the_rematch_migration_on_postgresql(pg_database: str) -> None:
    up_down_up(pg_database)
