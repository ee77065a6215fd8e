"""`/v1/me/settings`, muting over REST, and the page `/me/settings`, in process on SQLite.

Every bad input is a problem+json (or, on the page, the page again with the
reason), never a 500; a player token reads the settings and changes nothing.
"""

from __future__ import annotations

import re
from dataclasses import replace
from typing import Any

import pytest
from flask import Flask
from flask.testing import FlaskClient

from api.http.player_auth import PLAYER_COOKIE
from referee.service import Referee
from referee.service.creating import NewGame, create_game
from referee.service.creating import Player as Seated
from referee.service.players import open_session
from referee.settings import Settings
from referee.store import keys, player_tokens
from referee.store.clock import now

HOST = "http://localhost"
ANN = "ann@players.test"


@pytest.fixture(scope="module")
def app_settings(app_settings: Settings) -> Settings:
    # The test client's pages are served from http://localhost: forms come from there.
    return replace(app_settings, public_url=HOST)


@pytest.fixture(scope="module")
def games(referee: Referee) -> list[str]:
    """Two trusted games with Ann at seat 0."""
    made = []
    for other in ("bob", "cy"):
        players = [Seated("Ann", ANN), Seated(other.title(), f"{other}@players.test")]
        made.append(create_game(referee, NewGame("subdivision", players, {}, trusted=True)))
    return [created.game.id for created in made]


@pytest.fixture
def ann(app: Flask, referee: Referee, games: list[str]) -> FlaskClient:
    """A browser signed in as Ann, her settings back at the defaults."""
    browser = app.test_client()
    browser.set_cookie(PLAYER_COOKIE, open_session(referee, ANN))
    answer = browser.put(
        "/v1/me/settings", json={"turn_mail": "each", "digest_hours": [7, 19], "reminders": True}
    )
    assert answer.status_code == 200, answer.text
    for game_id in games:
        browser.delete(f"/v1/me/games/{game_id}/mute")
    return browser


def _token(referee: Referee, scopes: list[str]) -> str:
    secret = "rp_" + keys.new_token()
    with referee.db.transaction() as session:
        player_tokens.add(session, ANN, "test", scopes, keys.hash_token(secret), now())
    return secret


def test_settings_read_and_change_in_part(ann: FlaskClient, games: list[str]) -> None:
    shown = ann.get("/v1/me/settings").json
    assert shown == {
        "turn_mail": "each",
        "digest_hours": [7, 19],
        "reminders": True,
        "seek_news": [],
        "muted": [],
    }
    changed = ann.put("/v1/me/settings", json={"turn_mail": "digest", "digest_hours": [21, 6]})
    assert changed.status_code == 200
    assert changed.json == {
        "turn_mail": "digest",
        "digest_hours": [6, 21],
        "reminders": True,
        "seek_news": [],
        "muted": [],
    }
    assert ann.put("/v1/me/settings", json={}).json["turn_mail"] == "digest"
    news = ann.put("/v1/me/settings", json={"seek_news": ["subdivision", "maniki", "maniki"]})
    assert news.json["seek_news"] == ["maniki", "subdivision"]
    assert ann.get("/v1/me/settings").json["turn_mail"] == "digest"
    assert ann.put("/v1/me/settings", json={"seek_news": []}).json["seek_news"] == []


@pytest.mark.parametrize(
    "body",
    [
        {"turn_mail": "weekly"},
        {"turn_mail": None},
        {"digest_hours": []},
        {"digest_hours": [24]},
        {"digest_hours": ["7"]},
        {"digest_hours": [7.5]},
        {"digest_hours": [7, 7]},
        {"digest_hours": list(range(25))},
        {"reminders": "maybe"},
        {"seek_news": ["chess"]},
        {"seek_news": "maniki"},
        {"seek_news": [None]},
        {"muted": []},
        {"colour": "blue"},
        [1, 2],
        "digest",
    ],
)
def test_bad_settings_are_problems(ann: FlaskClient, body: Any) -> None:
    answer = ann.put("/v1/me/settings", json=body)
    assert answer.status_code == 422, answer.text
    assert answer.content_type == "application/problem+json"
    assert answer.json["code"] == "bad_request"
    assert ann.get("/v1/me/settings").json["turn_mail"] == "each"


def test_not_json_is_a_problem(ann: FlaskClient) -> None:
    answer = ann.put("/v1/me/settings", data="turn_mail=off", content_type="text/plain")
    assert answer.status_code in (400, 415, 422)
    assert answer.content_type == "application/problem+json"


def test_without_a_player_nothing_is_shown(app: Flask) -> None:
    stranger = app.test_client()
    for method, path in [
        ("get", "/v1/me/settings"),
        ("put", "/v1/me/settings"),
        ("put", f"/v1/me/games/{'0' * 32}/mute"),
    ]:
        body = {"json": {}} if path.endswith("settings") and method == "put" else {}
        answer = getattr(stranger, method)(path, **body)
        assert answer.status_code == 401 and answer.json["code"] == "unauthorized"
    forged = stranger.get("/v1/me/settings", headers={"Authorization": "Bearer rp_forged"})
    assert forged.status_code == 401


def test_a_player_token_reads_but_may_not_change(
    app: Flask, referee: Referee, games: list[str]
) -> None:
    bearer = {"Authorization": f"Bearer {_token(referee, ['read', 'play'])}"}
    client = app.test_client()
    assert client.get("/v1/me/settings", headers=bearer).status_code == 200
    for answer in (
        client.put("/v1/me/settings", json={"turn_mail": "off"}, headers=bearer),
        client.put(f"/v1/me/games/{games[0]}/mute", headers=bearer),
    ):
        assert answer.status_code == 403 and answer.json["code"] == "forbidden"
    play_only = {"Authorization": f"Bearer {_token(referee, ['play'])}"}
    assert client.get("/v1/me/settings", headers=play_only).status_code == 403


def test_mute_and_unmute(ann: FlaskClient, games: list[str]) -> None:
    assert ann.put(f"/v1/me/games/{games[1]}/mute").status_code == 204
    assert ann.put(f"/v1/me/games/{games[1]}/mute").status_code == 204
    assert ann.get("/v1/me/settings").json["muted"] == [games[1]]
    assert ann.delete(f"/v1/me/games/{games[1]}/mute").status_code == 204
    assert ann.get("/v1/me/settings").json["muted"] == []
    for game_id in ("0" * 32, "nope", "%00"):
        answer = ann.put(f"/v1/me/games/{game_id}/mute")
        assert answer.status_code == 404 and answer.json["code"] == "not_found"


def test_the_endpoints_are_in_the_openapi_document(client: FlaskClient) -> None:
    paths = client.get("/openapi.json").json["paths"]
    assert set(paths["/v1/me/settings"]) >= {"get", "put"}
    assert set(paths["/v1/me/games/{game_id}/mute"]) >= {"put", "delete"}


# -- the page ----------------------------------------------------------------------


def _csrf(page: str) -> str:
    found = re.search(r'name="csrf" value="([^"]+)"', page)
    assert found is not None, page
    return found.group(1)


def test_the_page_changes_settings(ann: FlaskClient, games: list[str]) -> None:
    page = ann.get("/me/settings")
    assert page.status_code == 200
    text = page.get_data(as_text=True)
    assert 'id="turn-mail-each" checked' in text and 'id="hour-7" checked' in text
    for game_id in games:
        assert f'id="game-{game_id}"' in text
    assert 'id="seek-news-mandala"' in text and 'id="seek-news-mandala" checked' not in text
    form = {
        "csrf": _csrf(text),
        "turn_mail": "digest",
        "hour": ["6", "18"],
        "seek_news": ["mandala", "ice_palace"],
    }
    saved = ann.post("/me/settings", data=form)
    assert saved.status_code == 303 and saved.headers["Location"].endswith("/me/settings?saved=1")
    assert ann.get("/v1/me/settings").json == {
        "turn_mail": "digest",
        "digest_hours": [6, 18],
        "reminders": False,
        "seek_news": ["ice_palace", "mandala"],
        "muted": [],
    }
    assert 'id="seek-news-mandala" checked' in ann.get("/me/settings").get_data(as_text=True)


@pytest.mark.parametrize(
    ("form", "said"),
    [
        ({"turn_mail": "weekly", "hour": ["7"]}, "turn_mail is one of"),
        ({"turn_mail": "digest"}, "1 to 24 distinct hours"),
        ({"turn_mail": "digest", "hour": ["7", "7"]}, "lists an hour twice"),
        ({"turn_mail": "digest", "hour": ["25"]}, "1 to 24 distinct hours"),
        ({"turn_mail": "digest", "hour": ["seven"]}, "a whole number from 0 to 23"),
    ],
)
def test_the_page_says_what_is_wrong(ann: FlaskClient, form: dict[str, Any], said: str) -> None:
    token = _csrf(ann.get("/me/settings").get_data(as_text=True))
    answer = ann.post("/me/settings", data={"csrf": token, **form})
    assert answer.status_code == 422
    assert said in answer.get_data(as_text=True)
    assert ann.get("/v1/me/settings").json["turn_mail"] == "each"


def test_the_page_mutes_a_game(ann: FlaskClient, games: list[str]) -> None:
    token = _csrf(ann.get("/me/settings").get_data(as_text=True))
    path = f"/me/settings/games/{games[0]}/mute"
    answer = ann.post(path, data={"csrf": token, "muted": "yes"})
    assert answer.status_code == 303
    assert ann.get("/v1/me/settings").json["muted"] == [games[0]]
    assert "Unmute" in ann.get("/me/settings").get_data(as_text=True)
    ann.post(path, data={"csrf": token, "muted": "no"})
    assert ann.get("/v1/me/settings").json["muted"] == []
    nowhere = ann.post(f"/me/settings/games/{'0' * 32}/mute", data={"csrf": token, "muted": "yes"})
    assert nowhere.status_code == 404 and "text/html" in nowhere.content_type


def test_the_page_forms_need_their_token_and_this_site(ann: FlaskClient, games: list[str]) -> None:
    token = _csrf(ann.get("/me/settings").get_data(as_text=True))
    assert ann.post("/me/settings", data={"turn_mail": "off"}).status_code == 403
    evil = {"Origin": "https://evil.example"}
    form = {"csrf": token, "turn_mail": "off", "hour": ["7"]}
    assert ann.post("/me/settings", data=form, headers=evil).status_code == 403
    muting = ann.post(f"/me/settings/games/{games[0]}/mute", data={"muted": "yes"})
    assert muting.status_code == 403
    assert ann.get("/v1/me/settings").json["turn_mail"] == "each"


def test_the_page_needs_a_signed_in_browser(app: Flask) -> None:
    answer = app.test_client().get("/me/settings")
    assert answer.status_code == 401 and "sign in" in answer.get_data(as_text=True)
