"""The game page and board.svg mark the last move at the position they show.

In-process app on the embedded default (moves decided eagerly), moves sent
through the API. At move N the picture marks what move N did (compared
with the same viewer's view at N - 1); at the start it marks nothing.
"""

from __future__ import annotations

import re
from dataclasses import replace

import pytest
from flask import Flask
from flask.testing import FlaskClient

from referee.settings import Settings

HOST = "http://localhost"
MARKED_CELL = re.compile(r'<rect[^>]*class="last"[^>]*data-cell="([^"]+)"')


@pytest.fixture(scope="module")
def app_settings(app_settings: Settings) -> Settings:
    return replace(app_settings, public_url=HOST)


def created(api: FlaskClient, game: str, players: int) -> tuple[str, list[str]]:
    answer = api.post(
        "/v1/games", json={"game": game, "players": [{"name": f"P{n}"} for n in range(players)]}
    )
    assert answer.status_code == 201, answer.text
    body = answer.get_json()
    return body["id"], [seat["token"] for seat in body["seats"]]


def move(api: FlaskClient, game_id: str, token: str, notation: str) -> None:
    answer = api.post(
        f"/v1/games/{game_id}/moves",
        json={"notation": notation},
        headers={"Authorization": f"Bearer {token}"},
    )
    assert answer.status_code in (200, 201, 202), answer.text


def board(api: FlaskClient, game_id: str, at: int | None = None, token: str = "") -> str:
    query = "" if at is None else f"?at={at}"
    headers = {"Authorization": f"Bearer {token}"} if token else {}
    answer = api.get(f"/v1/games/{game_id}/board.svg{query}", headers=headers)
    assert answer.status_code == 200
    return answer.get_data(as_text=True)


def game_page(api: FlaskClient, game_id: str, at: int | None = None) -> str:
    answer = api.get(f"/g/{game_id}", query_string={} if at is None else {"at": at})
    assert answer.status_code == 200
    return answer.get_data(as_text=True)


def test_the_page_and_board_svg_mark_the_move_at_the_position_shown(app: Flask) -> None:
    api = app.test_client()
    game_id, tokens = created(api, "subdivision", 2)
    move(api, game_id, tokens[0], "2c4")
    move(api, game_id, tokens[1], "3e5")
    for at, cells in ((None, ["e5"]), (2, ["e5"]), (1, ["c4"]), (0, [])):
        assert MARKED_CELL.findall(board(api, game_id, at)) == cells
        assert MARKED_CELL.findall(game_page(api, game_id, at)) == cells
    assert 'class="last"' not in board(api, game_id, 0, tokens[0])


def test_a_seat_and_a_spectator_see_the_same_marks_and_no_more(app: Flask) -> None:
    api = app.test_client()
    game_id, tokens = created(api, "ice_palace", 3)
    state = api.get(f"/v1/games/{game_id}").get_json()
    (leader,) = state["to_act"]
    mine = api.get(
        f"/v1/games/{game_id}/state", headers={"Authorization": f"Bearer {tokens[leader]}"}
    ).get_json()["state"]
    piece = mine["hands"][leader][0]
    move(api, game_id, tokens[leader], f"{piece}@0,0")
    watched = board(api, game_id)
    assert MARKED_CELL.findall(watched) == ["0,0"]
    assert 'data-place="hand"' not in watched
    for token in tokens:
        assert MARKED_CELL.findall(board(api, game_id, token=token)) == ["0,0"]
