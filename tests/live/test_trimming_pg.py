"""The trim sweep on PostgreSQL: tests/service/test_trimming.py's use case on a fresh
database of its own (its partial indexes' conditions and SQL NULL read alike on both
stores)."""

from __future__ import annotations

from tests.live.test_profiles_pg import fresh_referee  # noqa: F401  (the database)
from tests.service.test_trimming import (  # noqa: F401  (run here on PostgreSQL)
    test_old_finished_games_and_deliveries_are_trimmed_and_nothing_read_changes,
)
