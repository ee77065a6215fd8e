"""The pages in the reader's language and zone, through Flask's test client.

The language comes from the signed-in player's choice, else the `lang` cookie
the switch sets, else `Accept-Language`; times are said in the player's zone,
else the browser's (`tz` cookie), else UTC. The switch only ever sends the
reader back to a page of this site.
"""

from __future__ import annotations

import json
import re
from dataclasses import replace
from datetime import datetime

import pytest
from flask import Flask
from flask.testing import FlaskClient

from api.http.player_auth import PLAYER_COOKIE
from referee.i18n import speaking, when
from referee.service import Referee, profiles
from referee.service.creating import NewGame, Player, create_game
from referee.service.players import open_session, player_of_session
from referee.service.vacations import game_clock
from referee.settings import Settings
from referee.store.tables import Game

HOST = "http://localhost"


@pytest.fixture(scope="module")
def app_settings(app_settings: Settings) -> Settings:
    # The test client's pages are served from http://localhost: forms come from there.
    return replace(app_settings, public_url=HOST)


def new_game(
    referee: Referee, deadline: str | None = "72h", address: str = "ann-fr@example.org"
) -> str:
    players = [Player("Ann", address), Player("Bob", None)]
    command = NewGame("subdivision", players, {}, deadline=deadline, trusted=True)
    return create_game(referee, command).game.id


def signed_in(app: Flask, referee: Referee, address: str) -> FlaskClient:
    browser = app.test_client()
    browser.set_cookie(PLAYER_COOKIE, open_session(referee, address))
    return browser


def csrf_of(page: str) -> str:
    found = re.search(r'name="csrf" value="([^"]+)"', page)
    assert found is not None, page
    return found.group(1)


def is_french(page: str) -> None:
    assert '<html lang="fr">' in page
    assert "Mes parties" in page and "Parties ouvertes" in page
    assert "My games" not in page


def test_accept_language_french_gets_the_lobby_and_a_game_in_french(
    app: Flask, referee: Referee
) -> None:
    game_id = new_game(referee)
    browser = app.test_client()
    lobby = browser.get("/", headers={"Accept-Language": "fr-FR,fr;q=0.9,en;q=0.5"}).text
    is_french(lobby)
    assert "Commencer une partie" in lobby and "Start a game" not in lobby
    game = browser.get(f"/g/{game_id}", headers={"Accept-Language": "fr"}).text
    is_french(game)
    assert "Partie loyale" in game and "Le plateau en texte" in game
    assert "3 jours par tour" in game
    # English stays English where nothing asks for French.
    english = app.test_client().get("/", headers={"Accept-Language": "en-GB"}).text
    assert '<html lang="en">' in english and "Start a game" in english


def test_the_lang_cookie_wins_over_accept_language(app: Flask, referee: Referee) -> None:
    game_id = new_game(referee)
    browser = app.test_client()
    browser.set_cookie("lang", "fr")
    is_french(browser.get("/", headers={"Accept-Language": "en"}).text)
    is_french(browser.get(f"/g/{game_id}", headers={"Accept-Language": "en"}).text)


def test_a_player_who_chose_french_gets_french_pages(app: Flask, referee: Referee) -> None:
    address = "chose-fr@example.org"
    new_game(referee, address=address)
    browser = signed_in(app, referee, address)
    player = player_of_session(referee, browser.get_cookie(PLAYER_COOKIE).value)
    profiles.set_profile(referee, player, language="fr")
    page = browser.get("/me", headers={"Accept-Language": "en"}).text
    is_french(page)
    assert "À vous de jouer" in page
    is_french(browser.get("/", headers={"Accept-Language": "en"}).text)


def test_the_switch_sets_the_cookie_and_goes_back(app: Flask) -> None:
    browser = app.test_client()
    token = csrf_of(browser.get("/seeks?game=mandala").text)
    page = browser.get("/seeks?game=mandala").text
    assert 'name="next" value="/seeks?game=mandala"' in page
    answer = browser.post(
        "/language", data={"csrf": token, "language": "fr", "next": "/seeks?game=mandala"}
    )
    assert answer.status_code == 303 and answer.headers["Location"] == "/seeks?game=mandala"
    cookie = browser.get_cookie("lang")
    assert cookie is not None and cookie.value == "fr"
    is_french(browser.get("/seeks?game=mandala").text)
    # The current language is marked on the switch.
    assert re.search(r'value="fr" lang="fr" aria-current="true"', browser.get("/").text)


@pytest.mark.parametrize("elsewhere", ["https://evil.example/", "//evil.example/x", "/\\evil"])
def test_the_switch_refuses_to_send_anyone_elsewhere(app: Flask, elsewhere: str) -> None:
    browser = app.test_client()
    token = csrf_of(browser.get("/").text)
    answer = browser.post("/language", data={"csrf": token, "language": "fr", "next": elsewhere})
    assert answer.status_code == 303 and answer.headers["Location"] == "/"


def test_the_switch_changes_a_signed_in_players_language(app: Flask, referee: Referee) -> None:
    address = "switcher@example.org"
    new_game(referee, address=address)
    browser = signed_in(app, referee, address)
    player = player_of_session(referee, browser.get_cookie(PLAYER_COOKIE).value)
    token = csrf_of(browser.get("/me").text)
    browser.post("/language", data={"csrf": token, "language": "fr", "next": "/me"})
    assert profiles.speech(referee, player)[0] == "fr"
    # Another browser of the same player, without the cookie, speaks French too.
    elsewhere = signed_in(app, referee, address)
    is_french(elsewhere.get("/me", headers={"Accept-Language": "en"}).text)


def due_of(referee: Referee, game_id: str) -> datetime:
    with referee.db.reading() as session:
        game = session.get(Game, game_id)
        assert game is not None
        due = game_clock(session, game).due_at
    assert due is not None
    return due


def test_a_deadline_is_said_in_the_players_zone(app: Flask, referee: Referee) -> None:
    game_id = new_game(referee, address="paris@example.org")
    due = due_of(referee, game_id)
    browser = signed_in(app, referee, "paris@example.org")
    player = player_of_session(referee, browser.get_cookie(PLAYER_COOKIE).value)
    profiles.set_profile(referee, player, language="fr", time_zone="Europe/Paris")
    page = browser.get(f"/g/{game_id}").text
    with speaking("fr", "Europe/Paris"):
        said = when(due)
    assert re.search(r"C(E|ES)T$", said)
    shown = re.search(r'id="deadline">(.*?)</p>', page, re.S)
    assert shown is not None and said in shown.group(1) and "UTC" not in shown.group(1)


def test_a_browsers_zone_cookie_serves_a_reader_not_signed_in(app: Flask, referee: Referee) -> None:
    game_id = new_game(referee)
    due = due_of(referee, game_id)
    browser = app.test_client()
    browser.set_cookie("tz", "America/New_York")
    page = browser.get(f"/g/{game_id}").text
    with speaking("en", "America/New_York"):
        said = when(due)
    assert said in page and re.search(r"E(S|D)T$", said)
    # A cookie naming no zone is UTC.
    browser.set_cookie("tz", "Mars/Olympus")
    with speaking("en", "UTC"):
        assert when(due) in browser.get(f"/g/{game_id}").text


def test_the_game_script_is_given_its_words_in_the_pages_language(
    app: Flask, referee: Referee
) -> None:
    game_id = new_game(referee)
    page = app.test_client().get(f"/g/{game_id}", headers={"Accept-Language": "fr"}).text
    found = re.search(r'<script type="application/json" id="game-words">(.*?)</script>', page)
    assert found is not None
    words = json.loads(found.group(1))
    assert words["notify"] == "Me prévenir quand c\u2019est mon tour"


def test_problem_titles_follow_the_request_language(app: Flask) -> None:
    client = app.test_client()
    french = client.get("/v1/games/nope", headers={"Accept-Language": "fr"})
    english = client.get("/v1/games/nope", headers={"Accept-Language": "en"})
    assert french.status_code == english.status_code == 404
    assert french.json["title"] == "Introuvable" and english.json["title"] == "Not found"
    assert french.json["code"] == english.json["code"] == "not_found"
    page = client.get("/g/nope", headers={"Accept-Language": "fr"}).text
    assert "Retour au salon" in page and '<html lang="fr">' in page


def test_settings_choose_the_language_and_zone_and_refuse_a_bad_zone(
    app: Flask, referee: Referee
) -> None:
    address = "settler@example.org"
    new_game(referee, address=address)
    browser = signed_in(app, referee, address)
    player = player_of_session(referee, browser.get_cookie(PLAYER_COOKIE).value)
    page = browser.get("/me/settings").text
    assert '<option value="Europe/Paris">' in page
    form = {"csrf": csrf_of(page), "turn_mail": "each", "hour": ["7", "19"], "reminders": "on"}
    bad = browser.post(
        "/me/settings", data={**form, "language": "fr", "time_zone": "Europe/Pariss"}
    )
    assert bad.status_code == 422
    # Said beside the field, what was typed kept, and nothing saved.
    assert 'id="time-zone-error"' in bad.text and "Europe/Pariss" in bad.text
    assert 'id="hour-19" checked' in bad.text
    assert profiles.speech(referee, player) == (None, None)
    good = browser.post(
        "/me/settings", data={**form, "language": "fr", "time_zone": "Europe/Paris"}
    )
    assert good.status_code == 303
    assert profiles.speech(referee, player) == ("fr", "Europe/Paris")
    saved = browser.get(good.headers["Location"], headers={"Accept-Language": "en"}).text
    is_french(saved)
    assert 'value="Europe/Paris"' in saved and "Enregistré." in saved


def test_a_new_game_is_made_in_the_language_chosen_on_its_form(
    app: Flask, referee: Referee
) -> None:
    browser = app.test_client()
    token = csrf_of(browser.get("/new/subdivision").text)
    form = {"csrf": token, "name-0": "Ann", "name-1": "Bob", "language": "fr"}
    answer = browser.post("/new/subdivision", data=form)
    assert answer.status_code == 201
    found = re.search(r'id="game-link" href="/g/([^"]+)"', answer.text)
    assert found is not None
    with referee.db.reading() as session:
        game = session.get(Game, found.group(1))
        assert game is not None and game.language == "fr"


def test_the_new_game_form_names_the_options_in_french(app: Flask) -> None:
    french = app.test_client().get("/new/maniki", headers={"Accept-Language": "fr"}).text
    assert "Mode : course, ou manches sous pli" in french and "Noms des ordres" in french
    assert 'name="opt-mode"' in french  # the option's name is the machine's
    english = app.test_client().get("/new/maniki", headers={"Accept-Language": "en"}).text
    assert "Mode: race, or sealed rounds" in english and "Names of the orders" in english
