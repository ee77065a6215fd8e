"""Digest hours in the player's time zone on PostgreSQL: the use cases of
tests/service/test_digest_zones.py, each on a fresh PostgreSQL database of its own (the
sweep's condition on zones and hours is written apart for each store)."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from referee.service import Referee
from tests.fixtures import referee_on_own_pg
from tests.service.test_digest_zones import (  # noqa: F401  (run here on PostgreSQL)
    test_a_zone_that_names_none_is_utc_and_half_hours_stamp_their_own_start,
    test_one_digest_per_chosen_hour_and_local_day_across_a_change_of_clocks,
)
from tests.tiers import starts_servers


@pytest.fixture
@starts_servers
def fresh_referee(tmp_path: Path) -> Iterator[Referee]:
    """The service on a PostgreSQL database of the test's own, migrated."""
    with referee_on_own_pg(tmp_path, "zones") as made:
        yield made
