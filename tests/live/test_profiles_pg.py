"""Profiles, leaderboards and ratings on open games on PostgreSQL: the use cases of
tests/service/test_profile_view.py, each on a fresh PostgreSQL database of its own
(their statements, filtered counts and groupings, must read alike on both stores)."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from referee.service import Referee
from tests.fixtures import referee_on_own_pg
from tests.service.test_profile_view import (  # noqa: F401  (run here on PostgreSQL)
    referee,
    test_a_cursor_no_page_gave_is_refused,
    test_a_leaderboard_lists_by_rating_with_shared_places_and_pages,
    test_a_profile_is_found_by_name_in_any_case_and_says_no_address,
    test_an_unknown_name_or_a_player_without_one_has_no_profile,
    test_games_taken_in_before_the_totals_existed_are_tallied_later_to_the_same,
    test_joining_respects_the_rating_range_and_a_refusal_changes_nothing,
    test_recent_games_are_the_last_finished_with_how_each_went,
    test_seeks_show_each_players_rating_at_their_game,
    test_stats_count_games_timeouts_resignations_and_the_median_answer,
    test_the_median_is_over_the_last_hundred_moves,
)
from tests.tiers import starts_servers


@pytest.fixture
@starts_servers
def fresh_referee(tmp_path: Path) -> Iterator[Referee]:
    """The service on a PostgreSQL database of the test's own, migrated."""
    with referee_on_own_pg(tmp_path, "profiles") as made:
        yield made
