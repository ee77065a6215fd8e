"""Muting a game on PostgreSQL, many requests at once (a double click, two tabs)."""

from __future__ import annotations

from collections.abc import Iterator
from concurrent.futures import ThreadPoolExecutor

import pytest
from sqlmodel import select

from referee.service import Referee
from referee.service.creating import NewGame, Player, create_game
from referee.service.players import MANAGE, PLAY, READ
from referee.service.players import Player as Signed
from referee.service.turn_mail import mute_game
from referee.settings import Settings
from referee.store.tables import Mute

ANN = "ann@mute.test"


@pytest.fixture
def referee(pg_database: str) -> Iterator[Referee]:
    made = Referee(Settings(database_url=pg_database, redis_url=None, secret="mute-test"))
    made.db.upgrade()
    yield made
    made.close()


def test_muting_at_once_from_many_requests_makes_one_mute(referee: Referee) -> None:
    players = [Player("Ann", ANN), Player("Bob", None)]
    game_id = create_game(referee, NewGame("subdivision", players, {}, trusted=True)).game.id
    ann = Signed(ANN, frozenset({READ, PLAY, MANAGE}))
    with ThreadPoolExecutor(8) as pool:
        told = list(pool.map(lambda _: mute_game(referee, ann, game_id, True), range(16)))
    assert all(game_id in answer.muted for answer in told)
    with referee.db.reading() as session:
        assert len(session.exec(select(Mute)).all()) == 1
