"""The service's refusals in the reader's language: a REST problem's `detail` follows
`Accept-Language` (a move's `reason` stays the English record), and a page says the
refusal in the page's language, whether it was worded as it was raised or is an English
reason the worker would store (a stale version), said by `reason_words`."""

from __future__ import annotations

import re
from dataclasses import replace
from typing import Any

import pytest
from flask import Flask
from flask.testing import FlaskClient

from referee.settings import Settings
from tests.http.test_web_pages import HOST, acting, message, new_game, play, refused, stored

FR = {"Accept-Language": "fr"}
EN = {"Accept-Language": "en"}


@pytest.fixture(scope="module")
def app_settings(app_settings: Settings) -> Settings:
    # The test client's pages are served from there: forms come from there.
    return replace(app_settings, public_url=HOST)


def rest_game(client: FlaskClient) -> dict[str, Any]:
    players = [{"name": "Ann"}, {"name": "Bob"}]
    answer = client.post("/v1/games", json={"game": "subdivision", "players": players})
    assert answer.status_code == 201, answer.text
    found: dict[str, Any] = answer.get_json()
    return found


def test_a_refusal_worded_when_raised_is_french_for_a_french_request(app: Flask) -> None:
    client = app.test_client()
    french = client.get("/v1/games/nope", headers=FR).get_json()
    english = client.get("/v1/games/nope", headers=EN).get_json()
    assert english["detail"] == "there is no game with this id"
    assert french["detail"] == "aucune partie n\u2019a cet identifiant"
    assert french["code"] == english["code"] == "not_found"


def test_a_seats_token_refusal_is_french(app: Flask) -> None:
    client = app.test_client()
    game = rest_game(client)
    path = f"/v1/games/{game['id']}/moves"
    ann = f"Bearer {game['seats'][0]['token']}"
    legal = client.get(f"/v1/games/{game['id']}/legal-moves", headers={"Authorization": ann})
    move = legal.get_json()["moves"][0]["move"]
    asked = {"json": {"move": move}, "query_string": {"seat": 1}}
    english = client.post(path, headers={"Authorization": ann, **EN}, **asked)
    french = client.post(path, headers={"Authorization": ann, **FR}, **asked)
    assert english.status_code == french.status_code == 401
    assert english.get_json()["detail"] == "this token is not seat 1 of this game"
    said = french.get_json()["detail"]
    assert said == "ce jeton n\u2019est pas celui de la place 1 de cette partie"


def test_a_move_refusal_the_worker_would_store_is_french_in_detail_only(app: Flask) -> None:
    client = app.test_client()
    game = rest_game(client)
    path = f"/v1/games/{game['id']}/moves"
    ann = {"Authorization": f"Bearer {game['seats'][0]['token']}"}
    bob = {"Authorization": f"Bearer {game['seats'][1]['token']}"}
    move = client.get(f"/v1/games/{game['id']}/legal-moves", headers=ann).get_json()["moves"][0]
    stale = client.post(
        path, json={"move": move["move"], "expected_version": 5}, headers={**ann, **FR}
    )
    assert stale.status_code == 409
    body = stale.get_json()
    assert body["code"] == "stale_version"
    assert body["reason"] == "the game is at version 0, not 5: look again and resubmit"
    assert body["detail"] == (
        "la partie en est à la version 0, pas 5 : regardez à nouveau et renvoyez votre coup"
    )
    early = client.post(path, json={"move": move["move"]}, headers={**bob, **FR}).get_json()
    assert (early["code"], early["reason"]) == ("not_your_turn", "it is not your turn")
    assert early["detail"] == "ce n\u2019est pas votre tour"


def test_a_stale_move_on_a_french_page_is_said_in_french(app: Flask) -> None:
    game_id, _, seats = new_game(app, "subdivision", ["Ann", "Bob"])
    number, seat = acting(app, seats, game_id)
    _, rules, state = stored(app, game_id)
    seat.set_cookie("lang", "fr")
    notation = rules.notate(rules.legal_moves(state, number)[0])
    text = refused(seat, play(seat, game_id, notation, expected_version="7"), game_id, "your-move")
    said = message(text)
    assert "la partie en est à la version 0, pas 7" in said and "look again" not in said


def test_a_spent_sign_in_link_is_said_in_french(app: Flask) -> None:
    browser = app.test_client()
    browser.set_cookie("lang", "fr")
    page = browser.get("/me/sign-in/" + "x" * 40).text
    assert "ce lien de connexion n\u2019est pas valide (ou ne l\u2019est plus)" in page
    english = app.test_client().get("/me/sign-in/" + "x" * 40, headers=EN).text
    assert re.search(r"this sign-in link is not valid \(or no longer\)", english)


def test_the_http_layers_own_refusals_and_a_player_count_are_french(app: Flask) -> None:
    client = app.test_client()
    body = {"game": 3, "players": []}
    french = client.post("/v1/games", json=body, headers=FR).get_json()
    english = client.post("/v1/games", json=body, headers=EN).get_json()
    assert english["detail"] == "the request does not match its schema"
    assert french["detail"] == "la requête ne suit pas son schéma"
    assert french["code"] == english["code"] == "bad_request"
    assert french["errors"] == english["errors"]
    broken = {"data": b'{"game": "subdivision", "players": [', "content_type": "application/json"}
    said = client.post("/v1/games", headers=FR, **broken).get_json()
    assert said["code"] == "bad_json"
    assert said["detail"].startswith("ce n\u2019est pas du JSON valide : ")
    # The rules' own count of players, said by the new-game form in the page's language.
    form = {"name-0": "Ann", "name-1": "", "csrf": "t"}
    client.set_cookie("csrf", "t", domain="localhost")
    client.set_cookie("lang", "fr", domain="localhost")
    page = client.post("/new/mandala", data=form, headers={"Origin": HOST})
    assert page.status_code == 422
    assert "Mandala se joue à 2, 3, 4, 5 joueurs" in page.get_data(as_text=True)


def test_a_forms_checks_of_its_values_are_french(app: Flask) -> None:
    client = app.test_client()
    client.set_cookie("csrf", "t", domain="localhost")
    client.set_cookie("lang", "fr", domain="localhost")
    form = {"name-0": "Ann", "name-1": "Bob", "opt-parks": "everywhere", "csrf": "t"}
    page = client.post("/new/subdivision", data=form, headers={"Origin": HOST})
    assert page.status_code == 422
    text = page.get_data(as_text=True)
    assert "Doit être l\u2019un de : standard, random, players, cells." in text
    assert "Must be one of" not in text


def test_a_webhook_urls_refusal_is_french(app: Flask) -> None:
    client = app.test_client()
    game = rest_game(client)
    seat = {"Authorization": f"Bearer {game['seats'][0]['token']}"}
    path = f"/v1/games/{game['id']}/webhook"
    asked = {"json": {"url": "ftp://example.com/"}}
    english = client.put(path, headers={**seat, **EN}, **asked).get_json()
    french = client.put(path, headers={**seat, **FR}, **asked).get_json()
    assert english["code"] == french["code"] == "webhook_bad_url"
    assert english["detail"] == "only http and https URLs are taken"
    assert french["detail"] == "seules les URL http et https sont accept\u00e9es"


def test_the_routings_own_refusals_are_french(app: Flask) -> None:
    client = app.test_client()
    english = client.get("/v1/nowhere", headers=EN).get_json()
    french = client.get("/v1/nowhere", headers=FR).get_json()
    assert english["code"] == french["code"] == "not_found"
    assert english["detail"] == "nothing is at this address"
    assert french["detail"] == "il n\u2019y a rien \u00e0 cette adresse"
    assert client.delete("/v1/rules", headers=FR).get_json()["detail"] == (
        "cette adresse ne prend pas cette m\u00e9thode"
    )
