"""A player's games: found by its address however it was seated, its turns first."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

import pytest

from referee import games
from referee.service import Referee, game_states, refusals
from referee.service.creating import NewGame, Player, create_game
from referee.service.my_games import first_pages, my_games
from referee.service.players import MANAGE, READ
from referee.service.players import Player as Signed
from referee.service.submitting import KnownSeat, SubmitMove, submit_move
from referee.service.vacations import due_times, set_vacation
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
        move = RULES.notate(
            RULES.legal_moves(game_states.state_at(session, game, game.version), seat)[0]
        )
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


def test_a_vacation_of_the_seat_to_act_moves_its_game_down_the_list(referee: Referee) -> None:
    def waiting_on(name: str, deadline: str) -> str:
        seats = [Player(name, f"{name.lower()}@example.org"), Player("Ann", "ann@example.org")]
        return create_game(referee, NewGame("subdivision", seats, {}, deadline=deadline)).game.id

    sooner, later = waiting_on("Bob", "72h"), waiting_on("Eve", "120h")
    assert [row.id for row in my_games(referee, ANN).games] == [sooner, later]
    # Bob's clock stands still for four days: his turn now runs out after Eve's.
    bob = Signed("bob@example.org", frozenset({MANAGE}))
    set_vacation(referee, bob, None, datetime.now(UTC) + timedelta(days=4))
    listed = my_games(referee, ANN).games
    assert [row.id for row in listed] == [later, sooner]
    with referee.db.reading() as session:
        rows = [session.get(Game, row.id) for row in listed]
        due = due_times(session, [row for row in rows if row is not None])
    assert [row.deadline for row in listed] == [due[later], due[sooner]]


def test_the_first_pages_read_together_are_those_of_each_list(referee: Referee) -> None:
    for n in range(7):
        game_id = _new(referee, n % 2, deadline="72h" if n % 3 else None)
        if n >= 4:
            resign = {"type": "resign"}
            submit_move(referee, SubmitMove(game_id, KnownSeat(0), resign), wait=5)
    assert len(my_games(referee, ANN, status="over").games) == 3
    for limits in ({"active": 2, "over": 2}, {"active": 4, "over": 3}, {"over": 1}):
        pages = first_pages(referee, ANN, limits)
        assert pages.keys() == limits.keys()
        for status, limit in limits.items():
            assert pages[status] == my_games(referee, ANN, status=status, limit=limit)
