"""The pace: how fast a machine thinks against the one the bots' rates were measured on."""

from __future__ import annotations

from pathlib import Path

import pytest

from referee.pace import FASTEST, SLOWEST, paced
from referee.service import Referee
from referee.service.bot_pace import current_pace, measured_pace
from referee.service.creating import NewGame, Player, create_game
from referee.settings import BadSetting, Settings
from referee.store.tables import Game


def test_the_measured_pace_is_kept_for_the_process_within_bounds_to_two_figures() -> None:
    pace = measured_pace()
    assert SLOWEST <= pace <= FASTEST
    assert float(f"{pace:.2g}") == pace
    assert measured_pace() == pace


def test_a_set_pace_wins_over_the_measured_one() -> None:
    assert current_pace(Settings(bot_pace=2.5)) == 2.5
    assert current_pace(Settings()) == measured_pace()


def test_a_budget_counts_the_pace_games_from_before_paces_count_as_one() -> None:
    assert paced(2.0, 1.5) == 3.0
    assert paced(2.0, None) == 2.0


@pytest.mark.parametrize("pace", [SLOWEST, FASTEST])
def test_the_bounds_themselves_are_paces(pace: float) -> None:
    assert Settings.from_environ({"REFEREE_BOT_PACE": str(pace)}).bot_pace == pace


@pytest.mark.parametrize("text", ["0", "0.05", "11", "fast"])
def test_a_pace_out_of_bounds_is_refused_by_name(text: str) -> None:
    with pytest.raises(BadSetting, match="REFEREE_BOT_PACE"):
        Settings.from_environ({"REFEREE_BOT_PACE": text})


def test_a_game_with_a_bot_keeps_the_pace_and_one_of_people_none(tmp_path: Path) -> None:
    referee = Referee(
        Settings(
            database_url=f"sqlite:///{tmp_path / 'referee.sqlite3'}",
            mail_dir=str(tmp_path / "mail-out"),
            bot_pace=0.4,
        )
    )
    referee.db.upgrade()
    try:
        with_bot = create_game(
            referee, NewGame("subdivision", [Player("Ann"), Player("Bot", bot="random")], {})
        )
        people = create_game(referee, NewGame("subdivision", [Player("Ann"), Player("Bo")], {}))
        with referee.db.reading() as session:
            assert session.get(Game, with_bot.game.id).bot_pace == 0.4
            assert session.get(Game, people.game.id).bot_pace is None
    finally:
        referee.close()
