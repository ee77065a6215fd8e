"""The page `/me/vacation` (the app in-process, on SQLite): a signed-in player sets and ends
a vacation through forms guarded like the game pages'; bad input is a clear page."""

from __future__ import annotations

import re
from datetime import UTC, datetime, timedelta

import pytest
from flask import Flask
from flask.testing import FlaskClient

from referee.service import Referee
from referee.service.players import open_session

PAGE = "/me/vacation"
# Years before and after this one (the suite's clock, tests/clock.py).
PAST, NEXT = datetime.now(UTC).year - 6, datetime.now(UTC).year + 1


def csrf_of(page: str) -> str:
    found = re.search(r'name="csrf" value="([^"]+)"', page)
    assert found, page
    return found.group(1)


def typed(delta: timedelta) -> str:
    """A time as a browser's `datetime-local` field sends it (UTC here)."""
    return (datetime.now(UTC) + delta).strftime("%Y-%m-%dT%H:%M")


@pytest.fixture
def browser(app: Flask, referee: Referee, request: pytest.FixtureRequest) -> FlaskClient:
    client = app.test_client()
    client.set_cookie("player", open_session(referee, f"{request.node.name[:40]}@page.test"))
    return client


def test_a_player_plans_and_ends_a_vacation_on_the_page(browser: FlaskClient) -> None:
    page = browser.get(PAGE)
    assert page.status_code == 200
    assert "Vacation days left: <strong>30</strong> of 30." in page.text
    assert "at most 30 days in any 365 days in a row" in page.text
    form = {"csrf": csrf_of(page.text), "from": typed(timedelta(days=2)), "until": ""}
    form["until"] = typed(timedelta(days=4, hours=1))
    answer = browser.post(PAGE, data=form)
    assert answer.status_code == 303 and answer.headers["Location"].endswith(PAGE)
    shown = browser.get(PAGE).text
    assert "Your vacation is planned" in shown and "Drop this vacation" in shown
    dropped = browser.post(f"{PAGE}/end", data={"csrf": csrf_of(shown)})
    assert dropped.status_code == 303
    assert "Plan a vacation" in browser.get(PAGE).text


def test_a_vacation_from_now_is_under_way_and_its_end_can_move(browser: FlaskClient) -> None:
    token = csrf_of(browser.get(PAGE).text)
    browser.post(PAGE, data={"csrf": token, "until": typed(timedelta(days=2))})
    shown = browser.get(PAGE).text
    assert "You are on vacation" in shown and "Change when it ends" in shown
    assert 'name="from"' not in shown
    assert (
        browser.post(PAGE, data={"csrf": token, "until": typed(timedelta(days=3))}).status_code
        == 303
    )
    assert browser.post(f"{PAGE}/end", data={"csrf": token}).status_code == 303
    assert "You are on vacation" not in browser.get(PAGE).text


@pytest.mark.parametrize(
    ("fields", "status", "said"),
    [
        ({"until": "soon"}, 422, "is not a time"),
        ({"until": ""}, 422, "until when"),
        ({"until": "9" * 500}, 422, "is not a time"),
        ({"from": f"{PAST}-01-01T00:00", "until": f"{NEXT}-01-01T00:00"}, 422, "in the past"),
        ({"until": "XXX"}, 422, "is not a time"),
        ({"until": "45d"}, 409, "at most 30 fit in any 365 days in a row"),
    ],
)
def test_bad_input_is_a_clear_page_that_changes_nothing(
    browser: FlaskClient, fields: dict[str, str], status: int, said: str
) -> None:
    token = csrf_of(browser.get(PAGE).text)
    if fields.get("until") == "45d":
        fields = {"until": typed(timedelta(days=45))}
    answer = browser.post(PAGE, data={"csrf": token, **fields})
    assert answer.status_code == status and said in answer.text
    assert answer.mimetype == "text/html"
    assert "Plan a vacation" in browser.get(PAGE).text


def test_forms_from_elsewhere_and_strangers_are_refused(browser: FlaskClient, app: Flask) -> None:
    token = csrf_of(browser.get(PAGE).text)
    until = typed(timedelta(days=2))
    assert browser.post(PAGE, data={"until": until}).status_code == 403
    elsewhere = {"Origin": "https://evil.example"}
    assert (
        browser.post(PAGE, data={"csrf": token, "until": until}, headers=elsewhere).status_code
        == 403
    )
    assert "Plan a vacation" in browser.get(PAGE).text
    stranger = app.test_client()
    assert stranger.get(PAGE).status_code == 401
    assert "Sign in first" in stranger.get(PAGE).text
