"""The nasty list (`bad_input_cases.py`) against the app in-process on SQLite: a 4xx, no write."""

from __future__ import annotations

import pytest
from flask import Flask
from flask.testing import FlaskClient
from sqlalchemy import text

from referee.service import Referee
from referee.store.tables import SQLModel
from tests.security.bad_input_cases import CASES, Case, Send, refused, throw


@pytest.fixture(scope="module")
def game(app: Flask) -> tuple[str, str]:
    created = app.test_client().post(
        "/v1/games", json={"game": "maniki", "players": [{"name": "a"}, {"name": "b"}]}
    )
    assert created.status_code == 201
    body = created.get_json()
    return body["id"], body["seats"][0]["token"]


def counts(referee: Referee) -> dict[str, int]:
    with referee.db.engine.connect() as connection:
        return {
            table: connection.execute(text(f"SELECT count(*) FROM {table}")).scalar_one()
            for table in sorted(SQLModel.metadata.tables)
        }


def sender(client: FlaskClient) -> Send:
    def send(
        method: str, path: str, data: bytes | dict[str, str] | None, headers: dict[str, str]
    ) -> tuple[int, str, str]:
        answer = client.open(path, method=method, data=data, headers=headers)
        return answer.status_code, answer.mimetype or "", answer.get_data(as_text=True)

    return send


@pytest.mark.parametrize("case", CASES, ids=[case.name for case in CASES])
def test_a_nasty_request_is_a_4xx_and_writes_nothing(
    app: Flask, referee: Referee, game: tuple[str, str], case: Case
) -> None:
    before = counts(referee)
    refused(case, throw(case, sender(app.test_client()), *game))
    assert counts(referee) == before
