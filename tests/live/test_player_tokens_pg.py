"""A revoked player token is refused by the very next request, whichever process serves it.

Two `referee serve` processes (each with its threads) and a worker, on one
PostgreSQL database and Redis: a token is made and revoked through one
and used through the other, and moves as its player's seat there. Neither
process keeps a token between requests, so nothing needs to be told.
"""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from referee.service import Referee
from referee.service.players import open_session
from referee.settings import Settings
from tests.clock import on_server_clock
from tests.stacks import Client, Process, Service, start_server
from tests.tiers import starts_servers

ANN = "ann.tokens@example.org"


@pytest.fixture(scope="module")
@starts_servers
def second(
    pg_service: Service, tmp_path_factory: pytest.TempPathFactory
) -> Iterator[tuple[str, Process]]:
    """Another API process on the same database and queue: its base URL and process."""
    url, server = start_server(pg_service.env, tmp_path_factory.mktemp("second"))
    yield url, server
    server.stop()


@pytest.fixture(scope="module")
def cookie(pg_service: Service) -> Iterator[str]:
    """Ann's session, as signing in by mail would open it."""
    referee = Referee(Settings(database_url=pg_service.database_url, redis_url=None))
    with on_server_clock():
        opened = open_session(referee, ANN)
    yield opened
    referee.close()


def test_a_token_revoked_through_one_process_is_refused_by_the_next_request_to_another(
    pg_service: Service, second: tuple[str, Process], cookie: str
) -> None:
    one, other = Client(pg_service.url), Client(second[0])
    one.http.cookies.set("player", cookie)
    created = one.post(
        "/v1/games",
        {"game": "subdivision", "players": [{"name": "Ann", "email": ANN}, {"name": "Bob"}]},
    )
    assert created.status_code == 201, created.text
    game_id = created.json()["id"]
    made = one.post("/v1/me/tokens", {"name": "bot", "scopes": ["read", "play"]})
    assert made.status_code == 201, made.text
    token, token_id = made.json()["token"], made.json()["id"]

    listed = other.get("/v1/me/games", token)
    assert listed.status_code == 200 and [g["id"] for g in listed.json()["games"]] == [game_id]
    legal = other.get(f"/v1/games/{game_id}/legal-moves", token).json()["moves"][0]
    played = other.move(game_id, token, {"notation": legal["notation"]})
    assert played.status_code == 201, played.text
    assert played.json()["submission"]["seat"] == 0

    revoked = one.http.delete(f"{one.url}/v1/me/tokens/{token_id}", timeout=60)
    assert revoked.status_code == 204, revoked.text
    for client in (other, one, other):
        refused = client.get(f"/v1/games/{game_id}/state", token)
        assert refused.status_code == 401 and refused.json()["code"] == "unauthorized"
        assert client.get("/v1/me/games", token).status_code == 401
    # The secret was never written to a log.
    for process in (pg_service.server, second[1], *pg_service.workers):
        assert token not in process.output()
