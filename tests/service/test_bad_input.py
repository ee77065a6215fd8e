"""Bad requests get a problem+json 4xx with a stable code, never a 500, and write nothing.

These run the app in-process on the embedded default (a SQLite file, tasks
run eagerly), counting every table's rows around each bad request; then
schemathesis throws generated requests at every operation of
`/openapi.json` and checks answers against the document.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from typing import Any

import pytest
import schemathesis
from flask import Flask
from flask.testing import FlaskClient
from hypothesis import HealthCheck, settings
from schemathesis.checks import not_a_server_error
from schemathesis.specs.openapi.checks import (
    content_type_conformance,
    response_schema_conformance,
    status_code_conformance,
)
from sqlalchemy import text

from api import create_app
from referee import queue
from referee.settings import Settings
from referee.store import db
from referee.store.tables import SQLModel
from tests.configured import settings_with

TABLES = sorted(SQLModel.metadata.tables)
# The app's store reads the process's settings per request, so one app serves
# the schema and the tests.
APP = create_app(Settings())


@pytest.fixture(scope="module")
def app(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Flask]:
    url = f"sqlite:///{tmp_path_factory.mktemp('bad') / 'referee.sqlite3'}"
    # Many requests from one test client: limits far above what it sends.
    generous = {"rate_create": "1000000/second", "rate_moves": "1000000/second"}
    with (
        settings_with(database_url=url, redis_url=None, **generous),
        pytest.MonkeyPatch.context() as patch,
    ):
        patch.setitem(queue.app.conf, "task_always_eager", True)
        db.upgrade()
        yield APP


@pytest.fixture(scope="module")
def client(app: Flask) -> FlaskClient:
    return app.test_client()


@pytest.fixture(scope="module")
def game(client: FlaskClient) -> dict[str, Any]:
    answer = client.post(
        "/v1/games", json={"game": "subdivision", "players": [{"name": "A"}, {"name": "B"}]}
    )
    assert answer.status_code == 201
    created: dict[str, Any] = answer.get_json()
    return created


def counts() -> dict[str, int]:
    with db.engine().connect() as connection:
        return {
            t: connection.execute(text(f"SELECT count(*) FROM {t}")).scalar_one() for t in TABLES
        }


def secrets_of(game_id: str) -> list[str]:
    with db.engine().connect() as connection:
        seed = connection.execute(text("SELECT seed FROM game WHERE id = :id"), {"id": game_id})
        return [seed.scalar_one()]


def refused(answer: Any, status: int, code: str) -> dict[str, Any]:
    assert answer.status_code == status, answer.get_data(as_text=True)
    assert answer.mimetype == "application/problem+json"
    body: dict[str, Any] = answer.get_json()
    assert body["code"] == code and body["status"] == status
    assert {"type", "title", "detail"} <= body.keys()
    return body


NEW_GAME_CASES = [
    ("malformed JSON", b'{"game": "subdivision", "players": [', 400, "bad_json"),
    ("not an object", b"[1, 2, 3]", 422, "bad_request"),
    ("players not a list", b'{"game": "subdivision", "players": "ann, bob"}', 422, "bad_request"),
    (
        "game not a string",
        b'{"game": 7, "players": [{"name": "a"}, {"name": "b"}]}',
        422,
        "bad_request",
    ),
    (
        "unknown field",
        b'{"game": "maniki", "players": [{"name": "a"}], "x": 1}',
        422,
        "bad_request",
    ),
    ("no players", b'{"game": "maniki", "players": []}', 422, "bad_request"),
    (
        "unknown game",
        b'{"game": "chess", "players": [{"name": "a"}, {"name": "b"}]}',
        422,
        "unknown_game",
    ),
    (
        "too many players",
        json.dumps(
            {"game": "subdivision", "players": [{"name": str(i)} for i in range(7)]}
        ).encode(),
        422,
        "bad_players",
    ),
    (
        "unknown option",
        b'{"game": "maniki", "players": [{"name": "a"}, {"name": "b"}], "options": {"speed": 3}}',
        422,
        "bad_options",
    ),
    (
        "option of the wrong type",
        b'{"game": "maniki", "players": [{"name": "a"}, {"name": "b"}], "options": {"mode": 1}}',
        422,
        "bad_options",
    ),
    ("a 1 MB body", b'{"game": "' + b"x" * 1_000_000 + b'"}', 413, "too_large"),
]


@pytest.mark.parametrize(
    ("body", "status", "code"), [c[1:] for c in NEW_GAME_CASES], ids=[c[0] for c in NEW_GAME_CASES]
)
def test_bad_new_games_are_refused_and_write_nothing(
    client: FlaskClient, body: bytes, status: int, code: str
) -> None:
    before = counts()
    answer = client.post("/v1/games", data=body, content_type="application/json")
    refused(answer, status, code)
    assert counts() == before


def test_bad_moves_are_refused_and_write_nothing(client: FlaskClient, game: dict[str, Any]) -> None:
    game_id = game["id"]
    seat0, seat1 = (f"Bearer {s['token']}" for s in game["seats"])
    path = f"/v1/games/{game_id}/moves"
    legal = client.get(f"/v1/games/{game_id}/legal-moves", headers={"Authorization": seat0})
    move = legal.get_json()["moves"][0]["move"]
    forged = "Bearer " + game["seats"][0]["token"][:-2] + "xx"
    cases: list[tuple[dict[str, Any], int, str]] = [
        ({"data": b'{"move": ', "headers": {"Authorization": seat0}}, 400, "bad_json"),
        ({"json": {"move": move}}, 401, "unauthorized"),
        ({"json": {"move": move}, "headers": {"Authorization": forged}}, 401, "unauthorized"),
        ({"json": {"move": move}, "headers": {"Authorization": "Basic abc"}}, 401, "unauthorized"),
        ({"json": {"move": move}, "headers": {"Authorization": seat1}}, 409, "not_your_turn"),
        ({"json": {"move": "3c4"}, "headers": {"Authorization": seat0}}, 422, "bad_request"),
        ({"json": {"move": {"type": 5}}, "headers": {"Authorization": seat0}}, 422, "bad_move"),
        ({"json": {"notation": "%%"}, "headers": {"Authorization": seat0}}, 422, "bad_notation"),
        (
            {"json": {"move": move, "notation": "c3"}, "headers": {"Authorization": seat0}},
            422,
            "bad_request",
        ),
        ({"json": {}, "headers": {"Authorization": seat0}}, 422, "bad_request"),
        (
            {"json": {"move": move, "expected_version": 5}, "headers": {"Authorization": seat0}},
            409,
            "stale_version",
        ),
        (
            {
                "json": {"move": move},
                "headers": {"Authorization": seat0, "Idempotency-Key": "k" * 201},
            },
            400,
            "bad_request",
        ),
        ({"data": b"x" * 1_000_000, "headers": {"Authorization": seat0}}, 413, "too_large"),
    ]
    secrets = [*secrets_of(game_id), game["seats"][0]["token"]]
    before = counts()
    for request, status, code in cases:
        answer = client.post(path, content_type="application/json", **request)
        body = refused(answer, status, code)
        if "seat1" in str(request) or status != 401:
            for secret in secrets:
                assert secret not in json.dumps(body)
    refused(client.post("/v1/games/nope/moves", json={"move": move}), 404, "not_found")
    refused(
        client.post(path + "?wait=99", json={"move": move}, headers={"Authorization": seat0}),
        422,
        "bad_request",
    )
    refused(client.get(f"/v1/games/{game_id}/state?at=99"), 404, "not_found")
    refused(client.get(f"/v1/games/{game_id}/state?at=-1"), 422, "bad_request")
    refused(client.get(f"/v1/games/{game_id}/legal-moves"), 401, "unauthorized")
    refused(client.get("/v1/submissions/nope"), 404, "not_found")
    refused(client.delete(f"/v1/games/{game_id}"), 405, "method_not_allowed")
    assert counts() == before


def test_another_seat_and_spectators_never_see_seeds_or_tokens(
    client: FlaskClient, game: dict[str, Any]
) -> None:
    game_id = game["id"]
    tokens = [s["token"] for s in game["seats"]]
    secret = [*secrets_of(game_id), tokens[0]]
    for auth in ({}, {"Authorization": f"Bearer {tokens[1]}"}):
        for path in ("", "/state", "/moves", "/log.jsonl", "/verify", "/state?at=0"):
            answer = client.get(f"/v1/games/{game_id}{path}", headers=auth)
            assert answer.status_code == 200
            for value in secret:
                assert value not in answer.get_data(as_text=True)


schema = schemathesis.openapi.from_wsgi("/openapi.json", APP)


@schema.parametrize()
@settings(
    max_examples=15,
    deadline=None,
    suppress_health_check=list(HealthCheck),
)
def test_the_openapi_document_holds_for_generated_requests(app: Flask, case: Any) -> None:
    case.call_and_validate(
        checks=[
            not_a_server_error,
            content_type_conformance,
            response_schema_conformance,
            status_code_conformance,
        ]
    )


def test_a_database_out_of_reach_is_a_503_not_a_500(client: FlaskClient) -> None:
    with settings_with(database_url="postgresql://postgres@127.0.0.1:9/nowhere"):
        answer = refused(client.get("/v1/games"), 503, "unavailable")
    assert "nowhere" not in json.dumps(answer)
