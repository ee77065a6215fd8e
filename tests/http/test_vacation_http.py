"""`/v1/me/vacation` over HTTP (the app in-process, on SQLite): who may read and change it,
what it answers, bad input as problem+json, and what the other seats see of it."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta
from typing import Any

import pytest
from flask.testing import FlaskClient

from referee.service import Referee
from referee.service.players import open_session
from referee.store import keys, player_tokens
from referee.store.clock import now

PATH = "/v1/me/vacation"
# Years before and after this one (the suite's clock, tests/clock.py).
PAST, NEXT = datetime.now(UTC).year - 6, datetime.now(UTC).year + 1


def signed_in(client: FlaskClient, referee: Referee, address: str) -> FlaskClient:
    client.set_cookie("player", open_session(referee, address))
    return client


def read_token(referee: Referee, address: str) -> str:
    token = "rp_" + keys.new_token()
    with referee.db.transaction() as session:
        player_tokens.add(
            session, address, "phone", ["read", "play"], keys.hash_token(token), now()
        )
    return token


def at(delta: timedelta) -> str:
    return (datetime.now(UTC) + delta).isoformat()


@pytest.fixture
def browser(app: Any) -> FlaskClient:
    client: FlaskClient = app.test_client()
    return client


def test_a_player_sets_reads_and_ends_a_vacation(browser: FlaskClient, referee: Referee) -> None:
    signed_in(browser, referee, "Ann@Http.test")
    empty = browser.get(PATH)
    assert empty.status_code == 200, empty.text
    assert empty.json == {"vacation": None, "allowance": 30, "days_left": 30}
    until = datetime.now(UTC) + timedelta(days=3, hours=1)
    answer = browser.put(PATH, json={"from": at(timedelta(days=2)), "until": until.isoformat()})
    assert answer.status_code == 200, answer.text
    planned = answer.json["vacation"]
    assert planned["ongoing"] is False and planned["days"] in (2, 3)
    assert datetime.fromisoformat(planned["until"]) == until
    # A player token with `read` sees it, and may not change it.
    token = {"Authorization": f"Bearer {read_token(referee, 'ann@http.test')}"}
    assert browser.get(PATH, headers=token).json == answer.json
    refused = browser.delete(PATH, headers=token)
    assert refused.status_code == 403 and refused.json["code"] == "forbidden"
    ended = browser.delete(PATH)
    assert ended.status_code == 200 and ended.json["vacation"] is None
    assert ended.json["days_left"] == 30


@pytest.mark.parametrize(
    ("body", "field"),
    [
        ({}, "until"),
        ({"until": "tomorrow"}, "until"),
        ({"until": f"{NEXT}-01-01T00:00:00"}, "until"),  # no offset
        ({"from": f"{PAST}-01-01T00:00:00Z", "until": f"{NEXT}-01-01T00:00:00Z"}, "from"),
        ({"until": f"{PAST}-01-01T00:00:00Z"}, "until"),
        ({"until": "9999-12-31T23:00:00-05:00"}, "until"),
        ({"until": at(timedelta(days=1)), "days": 3}, "days"),
    ],
)
def test_bad_input_is_a_problem_that_changes_nothing(
    browser: FlaskClient, referee: Referee, body: dict[str, Any], field: str
) -> None:
    signed_in(browser, referee, "bad@http.test")
    answer = browser.put(PATH, json=body)
    assert answer.status_code == 422, answer.text
    assert answer.mimetype == "application/problem+json"
    assert answer.json["code"] == "bad_request" and field in str(answer.json["errors"])
    assert browser.get(PATH).json["vacation"] is None


def test_a_refused_vacation_is_a_409_saying_why(browser: FlaskClient, referee: Referee) -> None:
    signed_in(browser, referee, "long@http.test")
    answer = browser.put(PATH, json={"until": at(timedelta(days=45))})
    assert answer.status_code == 409 and answer.json["code"] == "vacation_refused"
    assert "at most 30 fit in any 365 days in a row" in answer.json["detail"]
    assert "vacation days are left to take on any dates from today on" in answer.json["detail"]


def test_strangers_are_unauthorized(browser: FlaskClient) -> None:
    for method in ("get", "put", "delete"):
        answer = getattr(browser, method)(PATH, json={"until": at(timedelta(days=1))})
        assert answer.status_code in (401, 422), answer.text
    assert browser.get(PATH).status_code == 401
    assert browser.delete(PATH, headers={"Authorization": "Bearer rp_forged"}).status_code == 401


def test_the_endpoints_are_in_the_openapi_document(browser: FlaskClient) -> None:
    paths = browser.get("/openapi.json").json["paths"]
    assert set(paths[PATH]) == {"get", "put", "delete"}
