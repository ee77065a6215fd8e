"""The nasty list (`bad_input_cases.py`) against a real `referee serve` on PostgreSQL and Redis.

PostgreSQL refuses some text SQLite takes (NUL) and psycopg cannot send
what is not UTF-8 (lone surrogates), so the list is thrown at the real
server too: every case a 4xx, no row written.
"""

from __future__ import annotations

from typing import Any

import psycopg
import pytest
import requests

from referee.store.tables import SQLModel
from tests.security.bad_input_cases import CASES, Case, Send, refused, throw
from tests.stacks import Service


@pytest.fixture(scope="module")
def game(pg_service: Service) -> tuple[str, str]:
    created = requests.post(
        pg_service.url + "/v1/games",
        json={"game": "maniki", "players": [{"name": "a"}, {"name": "b"}]},
        timeout=30,
    )
    assert created.status_code == 201, created.text
    body: dict[str, Any] = created.json()
    return body["id"], body["seats"][0]["token"]


def counts(database_url: str) -> dict[str, int]:
    with psycopg.connect(database_url) as connection:
        return {
            table: connection.execute(f"SELECT count(*) FROM {table}").fetchone()[0]  # type: ignore[index]
            for table in sorted(SQLModel.metadata.tables)
        }


def sender(url: str) -> Send:
    http = requests.Session()

    def send(
        method: str, path: str, data: bytes | dict[str, str] | None, headers: dict[str, str]
    ) -> tuple[int, str, str]:
        answer = http.request(method, url + path, data=data, headers=headers, timeout=30)
        mimetype = answer.headers.get("Content-Type", "").split(";")[0]
        return answer.status_code, mimetype, answer.text

    return send


@pytest.mark.parametrize("case", CASES, ids=[case.name for case in CASES])
def test_a_nasty_request_is_a_4xx_and_writes_nothing_on_postgresql(
    pg_service: Service, game: tuple[str, str], case: Case
) -> None:
    before = counts(pg_service.database_url)
    refused(case, throw(case, sender(pg_service.url), *game))
    assert counts(pg_service.database_url) == before
