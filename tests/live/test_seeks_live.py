"""Open games on real processes: two players taking the last seat at once, and the sweep
that expires seeks and tops standing seeks up.

The race runs on `referee serve` with a worker, PostgreSQL and Redis: in each
round several seeks, each with one seat left, and for each a pair of players
asking for that seat with their player tokens at the same moment. One of
each pair gets the seat and the game, the other a 409, and the game seats
its creator and the winner alone.

The sweep (`referee.seeks`) runs every second: in the embedded default on
`referee serve`'s own sweeper thread (SQLite), and on the worker of the
PostgreSQL stack. A standing seek put over HTTP is posted by it, a seek
whose time ran out expires, and the standing seek posts another in its place.
"""

from __future__ import annotations

import threading
import time
from collections.abc import Iterator
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from typing import Any

import pytest
import requests
from sqlmodel import col, select

from referee.service import Referee, profiles
from referee.service.creating import NewGame, create_game
from referee.service.creating import Player as Seated
from referee.service.players import MANAGE, PLAY, READ, Player
from referee.service.tokens import make_token
from referee.settings import Settings
from referee.store.clock import stamp
from referee.store.tables import Game, Seat, Seek, SeekPlayer
from tests.clock import on_server_clock
from tests.stacks import Client, Service, base_env, start_server, wait_for
from tests.tiers import starts_servers

PAIRS = 4
ROUNDS = 8


@dataclass(frozen=True)
class Racer:
    address: str
    name: str
    token: str


def make_players(database_url: str, prefix: str, count: int) -> list[Racer]:
    """`count` players the referee knows (seated by a trusted client), each with a public
    name and a player token with `play`, written straight to the stack's database."""
    referee = Referee(Settings(database_url=database_url, redis_url=None))
    made = []
    try:
        with on_server_clock():
            for number in range(count):
                address = f"{prefix}{number}@race.test"
                seated = [Seated("Me", email=address), Seated("Them")]
                create_game(referee, NewGame("subdivision", seated, {}, trusted=True))
                player = Player(address, frozenset({READ, PLAY, MANAGE}))
                name = f"{prefix.title()}{number}"
                profiles.set_profile(referee, player, name)
                secret = make_token(referee, player, "race", ["read", "play"]).secret
                made.append(Racer(address, name, secret))
    finally:
        referee.close()
    return made


def bearer(racer: Racer) -> dict[str, str]:
    return {"Authorization": f"Bearer {racer.token}"}


def test_two_players_taking_the_last_seat_at_once_one_gets_it_and_one_game_starts(
    pg_service: Service,
) -> None:
    url = pg_service.url
    creators = make_players(pg_service.database_url, "host", PAIRS)
    racers = make_players(pg_service.database_url, "racer", 2 * PAIRS)
    sessions = {racer.address: requests.Session() for racer in (*creators, *racers)}
    outcomes: list[tuple[str, Racer, Racer, requests.Response, requests.Response]] = []
    for _ in range(ROUNDS):
        seeks = []
        for creator in creators:
            posted = sessions[creator.address].post(
                f"{url}/v1/seeks", json={"game": "subdivision"}, headers=bearer(creator), timeout=60
            )
            assert posted.status_code == 201, posted.text
            seeks.append(posted.json()["id"])
        barrier = threading.Barrier(2 * PAIRS)

        def join(n: int, seeks: list[str] = seeks, barrier: threading.Barrier = barrier) -> Any:
            racer = racers[n]
            barrier.wait()
            return sessions[racer.address].post(
                f"{url}/v1/seeks/{seeks[n // 2]}/join", headers=bearer(racer), timeout=60
            )

        with ThreadPoolExecutor(2 * PAIRS) as pool:
            answers = list(pool.map(join, range(2 * PAIRS)))
        for pair, seek_id in enumerate(seeks):
            one, other = answers[2 * pair], answers[2 * pair + 1]
            outcomes.append((seek_id, racers[2 * pair], racers[2 * pair + 1], one, other))

    referee = Referee(Settings(database_url=pg_service.database_url, redis_url=None))
    try:
        for seek_id, first, second, one, other in outcomes:
            statuses = sorted((one.status_code, other.status_code))
            assert statuses == [200, 409], (one.text, other.text)
            won, lost = (one, other) if one.status_code == 200 else (other, one)
            winner = first if won is one else second
            assert lost.json()["code"] in ("seek_started", "seek_full"), lost.text
            assert won.json()["status"] == "started", won.text
            game_id = won.json()["game_id"]
            with referee.db.reading() as session:
                seek = session.get(Seek, seek_id)
                assert seek is not None and seek.status == "started" and seek.game_id == game_id
                seated = set(
                    session.exec(select(SeekPlayer.address).where(SeekPlayer.seek_id == seek_id))
                )
                emails = set(session.exec(select(Seat.email).where(Seat.game_id == game_id)))
                games = session.exec(select(Game.id).where(Game.id == game_id)).all()
            assert len(games) == 1
            assert seated == emails == {seek.by_address, winner.address}
        # One game per race, and none besides: each racer's first game, and those it won.
        racing = [racer.address for racer in racers]
        with referee.db.reading() as session:
            seated_racers = select(Seat.game_id).where(col(Seat.email).in_(racing))
            every = set(session.exec(seated_racers))
        assert len(every) == len(racers) + len(outcomes)
    finally:
        referee.close()


@pytest.fixture(scope="module")
@starts_servers
def embedded_sweeping(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Service]:
    """The embedded default, sweeping every second: `referee serve` alone on SQLite."""
    tmp = tmp_path_factory.mktemp("embedded-seeks")
    database = f"sqlite:///{tmp / 'referee.sqlite3'}"
    env = base_env(DATABASE_URL=database, REFEREE_SWEEP_EVERY="1")
    url, server = start_server(env, tmp)
    service = Service(url, database, env, tmp, server)
    yield service
    service.stop()


def sweeps_seeks(service: Service, prefix: str) -> None:
    (ann,) = make_players(service.database_url, prefix, 1)
    client = Client(service.url)
    put = requests.put(
        f"{service.url}/v1/me/standing-seeks",
        json=[{"game": "subdivision", "count": 1}],
        headers=bearer(ann),
        timeout=60,
    )
    assert put.status_code == 200, put.text

    def ann_s() -> list[dict[str, Any]]:
        listed = client.get("/v1/seeks", ann.token, game="subdivision").json()["seeks"]
        return [seek for seek in listed if seek["by"]["name"] == ann.name]

    (first,) = wait_for(ann_s)
    # Its time runs out: the sweep expires it, and the standing seek posts another.
    referee = Referee(Settings(database_url=service.database_url, redis_url=None))
    try:
        with on_server_clock(), referee.db.transaction() as session:
            seek = session.get(Seek, first["id"])
            assert seek is not None and seek.standing_id is not None
            seek.expires_at = stamp(datetime.now(UTC) - timedelta(seconds=1))
            session.add(seek)
    finally:
        referee.close()
    wait_for(
        lambda: client.get(f"/v1/seeks/{first['id']}", ann.token).json()["status"] == "expired"
    )
    (second,) = wait_for(lambda: [s for s in ann_s() if s["id"] != first["id"]])
    assert second["status"] == "open"
    time.sleep(3)  # three sweeps more: the standing seek holds one seek, not more
    assert [seek["id"] for seek in ann_s()] == [second["id"]]


def test_the_sweep_runs_in_the_embedded_default(embedded_sweeping: Service) -> None:
    sweeps_seeks(embedded_sweeping, "embedded")


def test_the_sweep_runs_on_a_worker(pg_service: Service) -> None:
    sweeps_seeks(pg_service, "worker")
    assert any("referee.seeks" in worker.output() for worker in pg_service.workers)
