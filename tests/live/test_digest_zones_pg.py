"""Digest hours in the player's time zone on PostgreSQL: the use cases of
tests/service/test_digest_zones.py, each on a fresh PostgreSQL database of its own (the
sweep's condition on zones and hours is written apart for each store)."""

from __future__ import annotations

import uuid
from collections.abc import Iterator
from pathlib import Path

import psycopg
import pytest

from referee.service import Referee
from referee.settings import Settings
from tests.servers import pg_admin
from tests.service.test_digest_zones import (  # noqa: F401  (run here on PostgreSQL)
    test_a_zone_that_names_none_is_utc_and_half_hours_stamp_their_own_start,
    test_one_digest_per_chosen_hour_and_local_day_across_a_change_of_clocks,
)
from tests.tiers import starts_servers


@pytest.fixture
@starts_servers
def fresh_referee(tmp_path: Path) -> Iterator[Referee]:
    """The service on a PostgreSQL database of the test's own, migrated."""
    name = f"referee_zones_{uuid.uuid4().hex[:8]}"
    admin_url = pg_admin()
    with psycopg.connect(admin_url, autocommit=True) as admin:
        admin.execute(f'CREATE DATABASE "{name}"')
    made = Referee(
        Settings(
            database_url=admin_url.rsplit("/", 1)[0] + "/" + name,
            redis_url=None,
            mail_dir=str(tmp_path / "mail-out"),
            secret="a test secret",
        )
    )
    made.db.upgrade()
    yield made
    made.close()
    with psycopg.connect(admin_url, autocommit=True) as admin:
        admin.execute(f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)')
