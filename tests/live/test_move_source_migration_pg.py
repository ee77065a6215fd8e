"""Migration 0027 on PostgreSQL: tests/service/test_move_source_migration.py's games taken
down to 0026 and up again on a fresh database of their own."""

from __future__ import annotations

from referee.service import Referee
from tests.live.test_profiles_pg import fresh_referee  # noqa: F401  (the database)
from tests.service.test_move_source_migration import moved_down_and_up


def test_sources_and_chains_survive_down_and_up_on_postgresql(fresh_referee: Referee) -> None:  # noqa: F811
    moved_down_and_up(fresh_referee)
