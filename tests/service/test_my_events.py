"""What a player's stream says of each change of its games, without HTTP: the kinds, the
data (public fields only), the games a resume sends, and the player's tokens."""

from __future__ import annotations

import pytest

from referee.service import Referee
from referee.service.creating import NewGame, Player, create_game
from referee.service.my_events import (
    CHANGED,
    ENDED,
    INVITED,
    STARTED,
    YOUR_TURN,
    event_data,
    kind_of,
    mark_now,
    resumed,
    standings,
)
from referee.service.submitting import KnownSeat, SubmitMove, submit_move

ANN = "ann@example.org"


@pytest.fixture
def referee(fresh_referee: Referee) -> Referee:
    return fresh_referee


def _new(referee: Referee, names: list[Player], trusted: bool = True) -> str:
    return create_game(referee, NewGame("maniki", names, {}, trusted=trusted)).game.id


def test_each_change_says_what_it_is_and_only_what_a_spectator_may_see(
    referee: Referee,
) -> None:
    trusted = _new(referee, [Player("Ann", "Ann@Example.org"), Player("Bob", None)])
    invited = _new(referee, [Player("Bob", None), Player("Ann", ANN)], trusted=False)
    _others = _new(referee, [Player("Cy", "cy@example.org"), Player("Bob", None)])
    mine = standings(referee, [ANN])[ANN]
    assert mine.keys() == {trusted, invited}
    assert kind_of(mine[trusted], new=True) == STARTED
    assert kind_of(mine[invited], new=True) == INVITED
    # MaNiKi's rounds are played by every seat at once: Ann acts in both.
    assert kind_of(mine[trusted], new=False) == YOUR_TURN
    data = event_data(mine[trusted], YOUR_TURN)
    assert data.keys() == {
        *("game_id", "game", "kind", "version", "status", "to_act", "my_turn", "result"),
    }
    assert data["my_turn"] is True and data["game"] == "maniki"

    # Bob passes: still Ann's turn (a change all the same); Ann resigns, which ends a
    # two-seat game.
    submit_move(referee, SubmitMove(trusted, KnownSeat(1), "pass"), wait=5)
    passed = standings(referee, [ANN])[ANN][trusted]
    assert passed.newer_than(mine[trusted]) and not mine[trusted].newer_than(passed)
    assert kind_of(passed, new=False) == YOUR_TURN
    submit_move(referee, SubmitMove(trusted, KnownSeat(0), {"type": "resign"}), wait=5)
    over = standings(referee, [ANN])[ANN][trusted]
    assert kind_of(over, new=False) == ENDED and over.result is not None
    assert not over.my_turn
    # Bob's waiting game of Ann's, once Ann has answered: not her turn, a mere change.
    submit_move(referee, SubmitMove(invited, KnownSeat(1), "pass"), wait=5)
    assert kind_of(standings(referee, [ANN])[ANN][invited], new=False) == CHANGED


def test_a_resume_sends_the_games_changed_since_its_mark_less_the_slack(
    referee: Referee,
) -> None:
    first = _new(referee, [Player("Ann", ANN), Player("Bob", None)])
    mark = mark_now()
    assert mark_now(mark + 10**9) == mark + 10**9 and mark_now(mark) >= mark
    second = _new(referee, [Player("Ann", ANN), Player("Bob", None)])
    mine = standings(referee, [ANN])[ANN]
    # Both changed within the slack: a resume repeats them, oldest change first; the one
    # made before the mark as it stands (Ann to act), the one made after as new.
    assert [game.game_id for game, _ in resumed(mine, mark)] == [first, second]
    assert [kind for _, kind in resumed(mine, mark)] == [YOUR_TURN, STARTED]
    # A client whose mark is well past every change gets nothing again.
    assert resumed(mine, mark_now() + 3600 * 10**6) == []
    assert standings(referee, [ANN], game_ids=[second])[ANN].keys() == {second}
