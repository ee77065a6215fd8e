"""Per-client rate limits on creating games and submitting moves, with small limits.

Two real stacks: `referee serve` alone on SQLite (counts kept in the
process) and `referee serve` on PostgreSQL and the machine's Redis (counts
kept in Redis), the latter behind a "proxy" at 127.0.0.1 whose
X-Forwarded-For it believes.
"""

from __future__ import annotations

import uuid
from collections.abc import Iterator
from typing import Any

import pytest
import redis
import requests

from tests.servers import redis_url
from tests.stacks import Service, base_env, start_server
from tests.tiers import starts_servers

LIMITS = {"REFEREE_RATE_CREATE": "3/minute", "REFEREE_RATE_MOVES": "3/minute"}
BODY = {"game": "subdivision", "players": [{"name": "Ann"}, {"name": "Bob"}]}


@pytest.fixture(scope="module")
@starts_servers
def in_process(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Service]:
    tmp = tmp_path_factory.mktemp("limits-embedded")
    database = f"sqlite:///{tmp / 'referee.sqlite3'}"
    env = base_env(DATABASE_URL=database, **LIMITS)
    url, server = start_server(env, tmp)
    yield Service(url, database, env, tmp, server)
    server.stop()


@pytest.fixture(scope="module")
@starts_servers
def in_redis(pg_database: str, tmp_path_factory: pytest.TempPathFactory) -> Iterator[Service]:
    tmp = tmp_path_factory.mktemp("limits-redis")
    env = base_env(
        DATABASE_URL=pg_database,
        REDIS_URL=redis_url(),
        REFEREE_QUEUE=f"referee-limits-{uuid.uuid4().hex[:8]}",
        REFEREE_TRUSTED_PROXY="127.0.0.1",
        **LIMITS,
    )
    url, server = start_server(env, tmp)
    yield Service(url, pg_database, env, tmp, server)
    server.stop()


def create(url: str, client: str | None = None) -> requests.Response:
    headers = {"X-Forwarded-For": f"198.51.100.7, {client}"} if client else {}
    return requests.post(url + "/v1/games", json=BODY, headers=headers, timeout=30)


def refused(answer: requests.Response) -> None:
    """A 429 problem+json with a Retry-After of whole seconds within the window."""
    assert answer.status_code == 429, answer.text
    assert answer.headers["Content-Type"] == "application/problem+json"
    assert answer.json()["code"] == "too_many_requests"
    assert 1 <= int(answer.headers["Retry-After"]) <= 60


def moves(url: str, created: dict[str, Any], count: int) -> list[int]:
    token = created["seats"][0]["token"]
    return [
        requests.post(
            f"{url}/v1/games/{created['id']}/moves",
            json={"notation": "pass"},
            headers={"Authorization": f"Bearer {token}"},
            timeout=30,
        ).status_code
        for _ in range(count)
    ]


def test_in_process_limits_creating_and_moving(in_process: Service) -> None:
    made = [create(in_process.url) for _ in range(3)]
    assert [m.status_code for m in made] == [201, 201, 201]
    refused(create(in_process.url))
    # Without a trusted proxy, X-Forwarded-For is the client's own word: ignored.
    refused(create(in_process.url, "203.0.113.9"))
    # Moves have their own count (any answer but 429 counts as let through).
    codes = moves(in_process.url, made[0].json(), 3)
    assert 429 not in codes
    over = moves(in_process.url, made[0].json(), 1)
    assert over == [429]


def test_redis_limits_creating_and_moving_per_forwarded_client(in_redis: Service) -> None:
    url = in_redis.url
    made = [create(url, "203.0.113.1") for _ in range(3)]
    assert [m.status_code for m in made] == [201, 201, 201]
    refused(create(url, "203.0.113.1"))
    # Another client behind the same proxy has its own count.
    assert create(url, "203.0.113.2").status_code == 201
    # The proxy itself (no X-Forwarded-For) is one more client.
    created = create(url).json()
    assert 429 not in moves(url, created, 3)
    over = requests.post(
        f"{url}/v1/games/{created['id']}/moves",
        json={"notation": "pass"},
        headers={"Authorization": f"Bearer {created['seats'][0]['token']}"},
        timeout=30,
    )
    refused(over)
    # The counts are in Redis, under this deployment's queue name.
    queue = in_redis.env["REFEREE_QUEUE"]
    assert redis.Redis.from_url(redis_url()).keys(f"referee-limits-{queue}*")
