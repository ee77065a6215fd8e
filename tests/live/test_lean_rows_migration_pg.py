"""Migration 0028 on PostgreSQL: tests/service/test_lean_rows_migration.py's games taken
down to 0027 and up again, the columns in PostgreSQL's own types after, and a database
whose stamps those types would change refused whole."""

from __future__ import annotations

import pytest
import sqlalchemy as sa

from referee.service import Referee
from tests.live.test_profiles_pg import fresh_referee  # noqa: F401  (the database)
from tests.migrating import migrate
from tests.service.test_lean_rows_migration import moved_down_and_up, played, seen

TYPES = {
    ("game", "id"): "uuid",
    ("seat", "game_id"): "uuid",
    ("submission", "id"): "uuid",
    ("submission", "request_hash"): "bytea",
    ("submission", "created_at"): "timestamp with time zone",
    ("move", "game_id"): "uuid",
    ("move", "hash"): "bytea",
    ("move", "created_at"): "timestamp with time zone",
    ("outbox", "created_at"): "timestamp with time zone",
    ("delivery", "next_attempt_at"): "timestamp with time zone",
}


def _types(referee: Referee) -> dict[tuple[str, str], str]:
    with referee.db.engine.connect() as connection:
        rows = connection.execute(
            sa.text(
                "SELECT table_name, column_name, data_type FROM information_schema.columns"
                " WHERE table_schema = current_schema()"
            )
        ).all()
    return {(row.table_name, row.column_name): row.data_type for row in rows}


def test_moves_and_ids_survive_down_and_up_on_postgresql(fresh_referee: Referee) -> None:  # noqa: F811
    moved_down_and_up(fresh_referee)
    found = _types(fresh_referee)
    assert {place: found[place] for place in TYPES} == TYPES
    assert ("move", "id") not in found and ("move", "move") not in found


def test_a_stamp_the_types_would_change_stops_the_upgrade_and_changes_nothing(
    fresh_referee: Referee,  # noqa: F811
) -> None:
    played(fresh_referee)
    migrate(fresh_referee.db, "0027", down=True)
    with fresh_referee.db.engine.begin() as connection:
        # A stamp as another program might write it: the same moment, other text.
        connection.execute(
            sa.text(
                "UPDATE move SET created_at = replace(created_at, '+00:00', 'Z')"
                " WHERE id = (SELECT min(id) FROM move)"
            )
        )
    with fresh_referee.db.engine.connect() as connection:
        kept = connection.execute(sa.text("SELECT * FROM move ORDER BY id")).all()
    with pytest.raises(RuntimeError, match="1 moves' stamps"):
        migrate(fresh_referee.db, "head")
    with fresh_referee.db.engine.connect() as connection:
        assert connection.execute(sa.text("SELECT * FROM move ORDER BY id")).all() == kept
        revision = connection.execute(sa.text("SELECT version_num FROM alembic_version"))
        assert revision.scalar_one() == "0027"
        assert connection.execute(sa.text("SELECT id FROM game LIMIT 1")).scalar_one()
    # Put back as the referee wrote it, the database goes up and every game checks out.
    with fresh_referee.db.engine.begin() as connection:
        connection.execute(
            sa.text("UPDATE move SET created_at = replace(created_at, 'Z', '+00:00')")
        )
    migrate(fresh_referee.db, "head")
    assert all(chain and replay for _, _, (chain, replay, _) in seen(fresh_referee).values())
