"""Names that turn text around, hide, or show nothing: refused at creation, never shown.

In-process on SQLite through Flask's test client, by the API and by the
new-game form. A game made before the rule (through the service, which
does not check names) still shows its names safely: isolated in `<bdi>`
on every page and without the refused characters in pages and pictures.
"""

from __future__ import annotations

import re
from dataclasses import replace
from typing import Any

import pytest
from flask.testing import FlaskClient

from referee.service import Referee
from referee.service.creating import NewGame, Player, create_game
from referee.settings import Settings

HOST = "http://localhost"
# Hosseinzadeh in Persian: the non-joiner belongs inside the name.
PERSIAN = "\u062d\u0633\u06cc\u0646\u200c\u0632\u0627\u062f\u0647"
REFUSED = {
    "\u202eevil": "U+202E (RIGHT-TO-LEFT OVERRIDE): it changes the direction of text",
    "Bob\u2067": "U+2067 (RIGHT-TO-LEFT ISOLATE): it changes the direction of text",
    "Al\u200bice": "U+200B (ZERO WIDTH SPACE): it is an invisible character",
    "\ufeffCy": "U+FEFF (ZERO WIDTH NO-BREAK SPACE): it is an invisible character",
    " ": "it holds only spaces or invisible characters",
    "\u3000": "it holds only spaces or invisible characters",
}
# What no page or picture may hold: every character a new name may not.
HIDDEN = re.compile("[\u202a-\u202e\u2066-\u2069\u200b\u200e\u200f\u061c\ufeff\u2060]")


@pytest.fixture(scope="module")
def app_settings(app_settings: Settings) -> Settings:
    return replace(app_settings, public_url=HOST)


def games_count(client: FlaskClient) -> int:
    listed: dict[str, Any] = client.get("/v1/games?limit=100").get_json()
    return len(listed["games"])


@pytest.mark.parametrize("name", REFUSED, ids=repr)
def test_the_api_refuses_the_name_saying_which_and_why(client: FlaskClient, name: str) -> None:
    before = games_count(client)
    body = {"game": "subdivision", "players": [{"name": "Ann"}, {"name": name}]}
    answer = client.post("/v1/games", json=body)
    assert answer.status_code == 422 and answer.mimetype == "application/problem+json"
    problem = answer.get_json()
    assert problem["code"] == "bad_request"
    (said,) = problem["errors"]["json"]["players"]["1"]["name"]
    assert said.endswith(REFUSED[name])
    assert games_count(client) == before


def test_the_form_refuses_the_name_beside_its_field(client: FlaskClient) -> None:
    page = client.get("/new/subdivision").get_data(as_text=True)
    csrf = re.search(r'name="csrf" value="([^"]+)"', page)
    assert csrf is not None
    form = {"csrf": csrf.group(1), "name-0": "Ann", "name-1": "\u2066Bob"}
    answer = client.post("/new/subdivision", data=form, headers={"Origin": HOST})
    assert answer.status_code == 422
    said = re.search(r'id="name-1-error">([^<]*)<', answer.get_data(as_text=True))
    assert said is not None and "U+2066 (LEFT-TO-RIGHT ISOLATE)" in said.group(1)


def test_an_old_games_names_are_isolated_and_cleaned_everywhere(
    client: FlaskClient, referee: Referee
) -> None:
    # Made as before the rule: the service takes any name the schema took then.
    players = [Player("\u202egnp.exe Ann"), Player("\u200b\u3000"), Player(PERSIAN)]
    game_id = create_game(referee, NewGame("subdivision", players, {})).game.id
    lobby = client.get("/").get_data(as_text=True)
    assert f"<bdi>gnp.exe Ann</bdi>, <bdi>Player 2</bdi>, <bdi>{PERSIAN}</bdi>" in lobby
    page = client.get(f"/g/{game_id}").get_data(as_text=True)
    # The players' table and the line saying who is to play isolate each name.
    assert "<td><bdi>gnp.exe Ann</bdi></td>" in page
    assert "<td><bdi>Player 2</bdi></td>" in page
    assert f"<td><bdi>{PERSIAN}</bdi></td>" in page
    assert "To play: <strong><bdi>gnp.exe Ann</bdi></strong>" in page
    svg = client.get(f"/v1/games/{game_id}/board.svg").get_data(as_text=True)
    assert "gnp.exe Ann" in svg and "Player 2" in svg
    for shown in (lobby, page, svg):
        # The one bidi control shown: the isolate (FSI...PDI) pictures and text boards
        # put around a name of other than ASCII, here the Persian one, whole or clipped.
        isolated = re.findall("\u2068([^\u2068\u2069]*)\u2069", shown)
        assert all(PERSIAN.startswith(name.removesuffix("…")) for name in isolated), isolated
        assert HIDDEN.search(re.sub("\u2068([^\u2068\u2069]*)\u2069", r"\1", shown)) is None
    assert "\u2068" in svg
    # The API gives back the names as stored: they are data, not display.
    seats = client.get(f"/v1/games/{game_id}").get_json()["seats"]
    assert [s["name"] for s in seats] == [p.name for p in players]
