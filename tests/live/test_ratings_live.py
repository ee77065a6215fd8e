"""Ratings on real processes: games ended over HTTP at the same moment are rated by the
workers' job once each, with two workers taking tasks; and four takers racing over the
same finished games on PostgreSQL (beside the workers' own sweeps) take each in once, in
the order the games ended, arriving at the very figures the workers wrote when the
workers took them in that order too.

The stack is `referee serve`, PostgreSQL, Redis and two workers. Players are named
and given player tokens straight in the database; each game comes from an open game
posted and joined over HTTP, and ends when one player resigns over HTTP: the workers
decide the move, and the ratings job, enqueued once the move is committed, takes the
game in.
"""

from __future__ import annotations

import threading
from collections.abc import Iterator
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from typing import Any

import pytest
import requests
from sqlmodel import col, delete, select, update

from referee.service import Referee, profiles
from referee.service.creating import NewGame, create_game
from referee.service.creating import Player as Seated
from referee.service.players import MANAGE, PLAY, READ, Player
from referee.service.rating import rate_finished, rebuild
from referee.service.tokens import make_token
from referee.settings import Settings
from referee.store.tables import Game, RatedGame, Rating, RatingChange
from tests.clock import on_server_clock
from tests.stacks import Service, pg_stack, wait_for
from tests.tiers import starts_servers

PLAYERS = 6
GAMES = 12


@pytest.fixture(scope="module")
@starts_servers
def pg_service(pg_database: str, tmp_path_factory: pytest.TempPathFactory) -> Iterator[Service]:
    """A stack of this module's own: its test starts a second worker on it."""
    with pg_stack(pg_database, tmp_path_factory.mktemp("pg")) as found:
        yield found


@dataclass(frozen=True)
class Named:
    address: str
    token: str

    def auth(self) -> dict[str, str]:
        return {"Authorization": f"Bearer {self.token}"}


def named_players(referee: Referee) -> list[Named]:
    made = []
    with on_server_clock():
        for number in range(PLAYERS):
            address = f"rated{number}@race.test"
            seated = [Seated("Me", email=address), Seated("Them")]
            create_game(referee, NewGame("mandala", seated, {}, trusted=True))
            player = Player(address, frozenset({READ, PLAY, MANAGE}))
            profiles.set_profile(referee, player, f"Rated{number}")
            secret = make_token(referee, player, "ratings", ["read", "play"]).secret
            made.append(Named(address, secret))
    return made


def figures(referee: Referee) -> tuple[list[Any], list[Any], list[Any]]:
    """The games taken in (in order), the ratings and the changes, each figure as stored,
    a game named by its id rather than by the `seq` it was taken in as."""
    with referee.db.reading() as session:
        # The games taken in last: a worker may take one more in between these reads,
        # and a game's row goes in with its changes, so every change read has its game.
        ratings = session.exec(select(Rating)).all()
        changes = session.exec(select(RatingChange)).all()
        taken = session.exec(select(RatedGame).order_by(col(RatedGame.seq))).all()
        games = {row.seq: row.game_id for row in taken}

    def stored(row: Rating | RatingChange) -> tuple[Any, ...]:
        fields = row.model_dump()
        for name in ("seq", "last_seq"):
            if name in fields:
                fields[name] = games[fields[name]]
        return tuple(sorted(fields.items()))

    return (
        [(row.game_id, row.counted) for row in taken],
        sorted(stored(row) for row in ratings),
        sorted(stored(row) for row in changes),
    )


def test_games_ended_through_the_workers_are_rated_once_each_in_order(
    pg_service: Service,
) -> None:
    url = pg_service.url
    pg_service.start_worker()  # a second worker: the ratings' tasks go to either
    referee = Referee(Settings(database_url=pg_service.database_url, redis_url=None))
    try:
        players = named_players(referee)
        games = []
        for number in range(GAMES):
            host, guest = players[number % PLAYERS], players[(number + 1) % PLAYERS]
            body: dict[str, Any] = {"game": "mandala", "players": {"min": 2, "max": 2}}
            posted = requests.post(f"{url}/v1/seeks", json=body, headers=host.auth(), timeout=60)
            assert posted.status_code == 201, posted.text
            joined = requests.post(
                f"{url}/v1/seeks/{posted.json()['id']}/join", headers=guest.auth(), timeout=60
            )
            assert joined.status_code == 200, joined.text
            games.append((joined.json()["game_id"], host))
        # Every game ends at once: its host resigns.
        barrier = threading.Barrier(GAMES)

        def end(game: tuple[str, Named]) -> requests.Response:
            game_id, host = game
            barrier.wait()
            return requests.post(
                f"{url}/v1/games/{game_id}/resign?wait=20", headers=host.auth(), timeout=60
            )

        with ThreadPoolExecutor(GAMES) as pool:
            answers = list(pool.map(end, games))
        assert [answer.status_code for answer in answers] == [201] * GAMES

        wait_for(lambda: len(figures(referee)[0]) == GAMES)
        taken, ratings, changes = figures(referee)
        with referee.db.reading() as session:
            ended = session.exec(
                select(Game.id)
                .where(col(Game.id).in_([game_id for game_id, _ in games]))
                .order_by(col(Game.updated_at), col(Game.id))
            ).all()
        # Once each, all counted. Not always in the order the games ended: two games
        # ending at the same moment on two workers may commit in the other order, and
        # the first committed is taken in first. The figures are those of the order taken.
        assert sorted(taken) == sorted((game_id, True) for game_id in ended)
        assert len(changes) == 2 * GAMES
        assert sorted(dict(row)["games"] for row in ratings) == [4] * PLAYERS
        assert sum(dict(row)["wins"] for row in ratings) == GAMES
        assert rebuild(referee, write=False).differences == []

        # Four takers at once over the same finished games, besides the workers' sweeps.
        with on_server_clock(), referee.db.transaction() as session:
            for table in (RatingChange, Rating, RatedGame):
                session.execute(delete(table))
            # And the games' marks that they were taken in, which go with their rows.
            session.execute(update(Game).values(taken_in=False))
        start = threading.Barrier(4)

        def take(_: int) -> int:
            start.wait()
            with on_server_clock():
                return rate_finished(referee)

        with ThreadPoolExecutor(4) as pool:
            took = list(pool.map(take, range(4)))
        wait_for(lambda: len(figures(referee)[0]) == GAMES)
        assert sum(took) <= GAMES
        again = figures(referee)
        # Every end committed now: taken in once each, in the order the games ended.
        assert again[0] == [(game_id, True) for game_id in ended]
        assert len(again[2]) == 2 * GAMES
        # Taken in the same order as by the workers, the very same figures, bit for bit.
        assert again[0] != taken or (again[1], again[2]) == (ratings, changes)
    finally:
        referee.close()
