"""Races, retries and a killed worker, on PostgreSQL + Redis + real worker processes.

After each, the game's log must still be one unbroken hash chain holding
each decided move exactly once.
"""

from __future__ import annotations

import json
import threading
import time
from collections.abc import Iterator
from concurrent.futures import ThreadPoolExecutor
from typing import Any

import psycopg
import pytest
import redis
import requests

from referee.queue import DECIDE, WANTED_FOR
from referee.record import chain_problems, loads
from referee.service import Referee
from referee.service.deciding import decide
from referee.settings import Settings
from referee.store.tables import SubmissionStatus
from tests.stacks import Client, Service, pg_stack
from tests.tiers import starts_servers


@pytest.fixture(scope="module")
@starts_servers
def service(pg_database: str, tmp_path_factory: pytest.TempPathFactory) -> Iterator[Service]:
    """A stack of this module's own: a test kills its worker and starts another."""
    with pg_stack(pg_database, tmp_path_factory.mktemp("pg")) as found:
        yield found


def chain_holds(client: Client, game_id: str) -> list[dict[str, Any]]:
    """The log's chain verifies (served and recomputed here); returns the log."""
    record = loads(client.get(f"/v1/games/{game_id}/log.jsonl").text)
    assert chain_problems(record) == []
    assert client.get(f"/v1/games/{game_id}/verify").json()["chain_valid"] is True
    moves: list[dict[str, Any]] = client.get(f"/v1/games/{game_id}/moves").json()["moves"]
    assert [m["seq"] for m in moves] == list(range(1, len(moves) + 1))
    return moves


def test_fifty_submissions_for_one_turn_accept_exactly_one(service: Service) -> None:
    client = Client(service.url)
    created = client.create("subdivision", 2)
    game_id, token = created["id"], created["seats"][0]["token"]
    legal = client.get(f"/v1/games/{game_id}/legal-moves", token).json()["moves"]
    barrier = threading.Barrier(50)

    def submit(n: int) -> requests.Response:
        body: dict[str, Any] = {"move": legal[n % len(legal)]["move"]}
        if n % 2:
            body["expected_version"] = 0
        session = requests.Session()
        barrier.wait()
        return session.post(
            f"{service.url}/v1/games/{game_id}/moves",
            json=body,
            headers={"Authorization": f"Bearer {token}"},
            timeout=60,
        )

    with ThreadPoolExecutor(50) as pool:
        answers = list(pool.map(submit, range(50)))
    recorded = [a.json()["submission"]["id"] for a in answers if a.status_code == 202]
    for answer in answers:
        if answer.status_code != 202:
            assert answer.status_code == 409, answer.text
            assert answer.json()["code"] in ("not_your_turn", "stale_version")
    decided = [client.wait_decided(sid, token) for sid in recorded]
    accepted = [d for d in decided if d["status"] == "accepted"]
    assert len(accepted) == 1, decided
    assert accepted[0]["seq"] == 1
    for refused in (d for d in decided if d["status"] == "rejected"):
        assert refused["code"] in ("not_your_turn", "stale_version")
    moves = chain_holds(client, game_id)
    assert len(moves) == 1 and moves[0]["seat"] == 0


def test_the_same_idempotency_key_twice_gives_one_move(service: Service) -> None:
    client = Client(service.url)
    created = client.create("subdivision", 2)
    game_id, token = created["id"], created["seats"][0]["token"]
    move = client.get(f"/v1/games/{game_id}/legal-moves", token).json()["moves"][0]["move"]
    first = client.move(game_id, token, {"move": move}, wait=20, **{"Idempotency-Key": "k-1"})
    assert first.status_code == 201, first.text
    again = client.move(game_id, token, {"move": move}, wait=20, **{"Idempotency-Key": "k-1"})
    assert again.status_code == 201, again.text
    assert again.json() == first.json()
    other = client.move(
        game_id, token, {"notation": "resign"}, wait=20, **{"Idempotency-Key": "k-1"}
    )
    assert other.status_code == 409 and other.json()["code"] == "idempotency_conflict"
    # Two copies of one request racing: still one submission, one move.
    key = {"Idempotency-Key": "k-2"}
    seat1 = created["seats"][1]["token"]
    move1 = client.get(f"/v1/games/{game_id}/legal-moves", seat1).json()["moves"][0]["move"]
    with ThreadPoolExecutor(8) as pool:
        answers = list(
            pool.map(lambda _: client.move(game_id, seat1, {"move": move1}, **key), range(8))
        )
    assert {a.status_code for a in answers} == {201}
    assert len({a.json()["submission"]["id"] for a in answers}) == 1
    moves = chain_holds(client, game_id)
    assert [m["seat"] for m in moves] == [0, 1]


def test_deciding_twice_or_in_parallel_decides_once(service: Service) -> None:
    client = Client(service.url)
    created = client.create("subdivision", 2)
    game_id, token = created["id"], created["seats"][0]["token"]
    move = client.get(f"/v1/games/{game_id}/legal-moves", token).json()["moves"][0]["move"]
    answer = client.move(game_id, token, {"move": move}, wait=20)
    submission = answer.json()["submission"]
    # The task run again (a redelivered late ack, a sweep): nothing changes.
    referee = Referee(Settings(database_url=service.database_url))
    with ThreadPoolExecutor(4) as pool:
        results = list(pool.map(lambda _: decide(referee, submission["id"]), range(4)))
    referee.close()
    assert {r.status for r in results if r is not None} == {SubmissionStatus.ACCEPTED}
    assert len(chain_holds(client, game_id)) == 1


def test_a_worker_killed_mid_task_still_decides_exactly_once(service: Service) -> None:
    client = Client(service.url)
    created = client.create("subdivision", 2)
    game_id, token = created["id"], created["seats"][0]["token"]
    move = client.get(f"/v1/games/{game_id}/legal-moves", token).json()["moves"][0]["move"]
    with psycopg.connect(service.database_url) as blocker:
        # Hold the game's lock so the worker stops inside its transaction.
        blocker.execute("SELECT id FROM game WHERE id = %s FOR NO KEY UPDATE", [game_id])
        answer = client.move(game_id, token, {"move": move}, wait=0)
        assert answer.status_code == 202
        submission_id = answer.json()["submission"]["id"]
        waiting = wait_for_lock_waiter(blocker)
        assert waiting, "the worker never reached the game's lock"
        for worker in service.workers:
            worker.kill()
        blocker.rollback()
    assert (
        client.get(f"/v1/submissions/{submission_id}", token).json()["submission"]["status"]
        == "pending"
    )
    service.start_worker()
    decided = client.wait_decided(submission_id, token, seconds=60)
    assert decided["status"] == "accepted" and decided["seq"] == 1
    moves = chain_holds(client, game_id)
    assert len(moves) == 1
    # Later moves still go through the new worker.
    seat1 = created["seats"][1]["token"]
    move1 = client.get(f"/v1/games/{game_id}/legal-moves", seat1).json()["moves"][0]["move"]
    assert client.move(game_id, seat1, {"move": move1}).status_code == 201
    assert len(chain_holds(client, game_id)) == 2


def test_a_task_held_up_by_a_games_lock_holds_up_no_move_and_one_task_decides_many(
    service: Service,
) -> None:
    client = Client(service.url)
    held, *games = (client.create("subdivision", 2) for _ in range(21))

    def first_move(game: dict[str, Any]) -> dict[str, Any]:
        token = game["seats"][0]["token"]
        legal = client.get(f"/v1/games/{game['id']}/legal-moves", token).json()["moves"]
        return {"move": legal[0]["move"]}

    moves = [first_move(game) for game in games]
    broker = redis.Redis.from_url(service.env["REDIS_URL"])
    tasks = service.env["REFEREE_QUEUE"]
    with psycopg.connect(service.database_url) as blocker:
        # The stack's worker runs one task at a time: it stops at this game's lock.
        blocker.execute("SELECT id FROM game WHERE id = %s FOR NO KEY UPDATE", [held["id"]])
        waiting = client.move(held["id"], held["seats"][0]["token"], first_move(held), wait=0)
        assert waiting.status_code == 202
        assert wait_for_lock_waiter(blocker), "the worker never reached the game's lock"
        # It said it started before it stopped: the next move sends a task of its own...
        assert broker.get(f"referee:decisions-wanted:{tasks}") is None
        submitted = []
        began = time.monotonic()
        for game, move in zip(games, moves, strict=True):
            answer = client.move(game["id"], game["seats"][0]["token"], move, wait=0)
            assert answer.status_code == 202
            submitted.append(answer.json()["submission"]["id"])
        # ... and the moves after it count on that task (one more for each lapse of the
        # mark, on a machine slow enough to take that long).
        lapses = int((time.monotonic() - began) / WANTED_FOR)
        deciding = [
            m for m in broker.lrange(tasks, 0, -1) if json.loads(m)["headers"]["task"] == DECIDE
        ]
        assert 1 <= len(deciding) <= 1 + lapses < len(games)
        blocker.rollback()
    token = held["seats"][0]["token"]
    assert client.wait_decided(waiting.json()["submission"]["id"], token)["status"] == "accepted"
    for game, submission_id in zip(games, submitted, strict=True):
        decided = client.wait_decided(submission_id, game["seats"][0]["token"], seconds=60)
        assert (decided["status"], decided["seq"]) == ("accepted", 1)
        assert len(chain_holds(client, game["id"])) == 1


def wait_for_lock_waiter(connection: psycopg.Connection[Any], seconds: float = 30) -> bool:
    deadline = time.monotonic() + seconds
    with psycopg.connect(connection.info.dsn, autocommit=True) as watcher:
        while time.monotonic() < deadline:
            row = watcher.execute(
                "SELECT count(*) FROM pg_stat_activity "
                "WHERE datname = current_database() AND wait_event_type = 'Lock'"
            ).fetchone()
            if row and row[0]:
                return True
            time.sleep(0.05)
    return False


def test_text_postgresql_cannot_store_gets_a_4xx_not_a_500(service: Service) -> None:
    client = Client(service.url)
    created = client.create("maniki", 2)
    game_id, token = created["id"], created["seats"][0]["token"]
    answers = [
        client.post("/v1/games", {"game": "maniki", "players": [{"name": "a\x00"}, {"name": "b"}]}),
        client.get("/v1/games/abc\x00def"),
        client.get(f"/v1/submissions/{'0' * 31}\x00"),
        client.get("/v1/games", game="ma\x00niki"),
        client.get("/v1/games", cursor="2026\x00"),
        client.move(game_id, token, {"notation": "KI\x00"}),
    ]
    for answer in answers:
        assert 400 <= answer.status_code < 500, answer.text
        assert answer.headers["Content-Type"] == "application/problem+json"
