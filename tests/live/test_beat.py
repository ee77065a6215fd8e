"""Celery beat as the one scheduler of the sweeps (`REFEREE_SWEEPS=beat`).

A submission whose task the broker lost stays pending while workers only
run tasks, and is decided once `referee beat` runs: the sweep it sends
finds the submission in the database and enqueues it again.
"""

from __future__ import annotations

import time
import uuid
from collections.abc import Iterator

import pytest
import redis

from tests.servers import redis_url
from tests.stacks import REFEREE, Client, Process, Service, base_env, start_server
from tests.tiers import starts_servers


@pytest.fixture(scope="module")
@starts_servers
def service(pg_database: str, tmp_path_factory: pytest.TempPathFactory) -> Iterator[Service]:
    tmp = tmp_path_factory.mktemp("beat")
    env = base_env(
        DATABASE_URL=pg_database,
        REDIS_URL=redis_url(),
        REFEREE_QUEUE=f"referee-beat-{uuid.uuid4().hex[:8]}",
        REFEREE_SWEEPS="beat",
        REFEREE_SWEEP_EVERY="1",
        REFEREE_SWEEP_AFTER="1",
    )
    url, server = start_server(env, tmp)
    running = Service(url, pg_database, env, tmp, server)
    yield running
    running.stop()


def test_the_sweeps_come_from_beat_alone(service: Service) -> None:
    client = Client(service.url)
    created = client.create("subdivision", 2)
    game_id, token = created["id"], created["seats"][0]["token"]
    move = client.get(f"/v1/games/{game_id}/legal-moves", token).json()["moves"][0]["move"]
    # No worker yet: the task waits in the broker, which then loses it.
    answer = client.move(game_id, token, {"move": move}, wait=0)
    assert answer.status_code == 202
    submission_id = answer.json()["submission"]["id"]
    broker = redis.Redis.from_url(redis_url())
    assert broker.delete(service.env["REFEREE_QUEUE"]) == 1
    service.start_worker()
    time.sleep(4)  # several sweep periods: a worker that swept by itself would decide it
    pending = client.get(f"/v1/submissions/{submission_id}", token).json()["submission"]
    assert pending["status"] == "pending"

    schedule = service.tmp / "beat-schedule"
    beat = Process(
        [REFEREE, "beat", "--loglevel", "INFO", "--schedule", str(schedule)],
        service.env,
        service.tmp / "beat.log",
    ).start()
    try:
        decided = client.wait_decided(submission_id, token, seconds=60)
    finally:
        beat.stop()
    assert decided["status"] == "accepted" and decided["seq"] == 1, beat.output()
    assert "referee.sweep" in beat.output()
    # Open games are swept from beat too: expiry, and the standing seeks' top-up.
    assert "referee.seeks" in beat.output()


def test_beat_refuses_to_run_beside_sweeping_workers(service: Service) -> None:
    env = {**service.env, "REFEREE_SWEEPS": "worker"}
    beat = Process([REFEREE, "beat"], env, service.tmp / "refused.log").start()
    assert beat.proc is not None
    assert beat.proc.wait(60) == 1
    assert "REFEREE_SWEEPS=beat" in beat.output()
