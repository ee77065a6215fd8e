"""A player's games: found by its address however it was seated, its turns first."""

from __future__ import annotations

import pytest

from referee import games
from referee.service import Referee, refusals
from referee.service.creating import NewGame, Player, create_game
from referee.service.my_games import my_games
from referee.service.players import READ
from referee.service.players import Player as Signed
from referee.service.submitting import KnownSeat, SubmitMove, submit_move
from referee.store import reads
from referee.store.tables import Game

RULES = games.get("subdivision")
ANN = Signed("ann@example.org", frozenset({READ}))


@pytest.fixture
def referee(fresh_referee: Referee) -> Referee:
    return fresh_referee


def _new(referee: Referee, ann_seat: int, deadline: str | None = None) -> str:
    names = [Player("Bob", "bob@example.org"), Player("Cid", None)]
    names.insert(ann_seat, Player("Ann", "Ann@Example.org"))
    command = NewGame("subdivision", names[:2], {}, deadline=deadline, trusted=True)
    return create_game(referee, command).game.id


def _play(referee: Referee, game_id: str) -> None:
    with referee.db.reading() as session:
        game = session.get(Game, game_id)
        assert game is not None
        seat = game.to_act[0]
        move = RULES.notate(RULES.legal_moves(reads.state_at(session, game, game.version), seat)[0])
    submit_move(referee, SubmitMove(game_id, KnownSeat(seat), move), wait=5)


def test_every_seat_of_the_address_is_listed_with_my_turn_first(referee: Referee) -> None:
    waiting = _new(referee, 1)  # Bob (seat 0) is to act
    mine_later = _new(referee, 0, deadline="72h")
    mine_sooner = _new(referee, 0, deadline="2h")
    _new_for_someone_else = create_game(
        referee, NewGame("subdivision", [Player("Dan", "dan@x.org"), Player("Eve", None)], {})
    )
    listed = my_games(referee, ANN)
    assert [row.id for row in listed.games] == [mine_sooner, mine_later, waiting]
    assert [row.my_turn for row in listed.games] == [True, True, False]
    first = listed.games[0]
    assert [(s.name, s.me) for s in first.seats] == [("Ann", True), ("Bob", False)]
    assert first.deadline is not None and listed.next_cursor is None
    # Once Ann has moved, Bob is to act there: it is no longer her turn.
    _play(referee, mine_sooner)
    assert [row.id for row in my_games(referee, ANN, my_turn=True).games] == [mine_later]


def test_pages_follow_one_another_and_a_foreign_cursor_is_refused(referee: Referee) -> None:
    made = {_new(referee, 0) for _ in range(5)}
    first = my_games(referee, ANN, limit=2)
    second = my_games(referee, ANN, limit=2, cursor=first.next_cursor)
    third = my_games(referee, ANN, limit=2, cursor=second.next_cursor)
    seen = [row.id for page in (first, second, third) for row in page.games]
    assert sorted(seen) == sorted(made) and third.next_cursor is None
    with pytest.raises(refusals.BadRequest):
        my_games(referee, ANN, cursor="-1")
    assert my_games(referee, ANN, status="over").games == []
