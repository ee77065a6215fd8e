"""A player's credential that ends (a token revoked, a browser signed out) ends the streams it
opened: `GET /v1/me/events`, and a game's stream followed with a player token.

In-process (the `app` of tests/fixtures.py on a SQLite file), with a short keepalive so that
a stream wakes often.
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import replace

import pytest
from flask import Flask

from referee.service import Referee
from referee.service.creating import NewGame, Player, create_game
from referee.service.players import open_session
from referee.settings import Settings

# Wakes of a stream (keepalives or events) read before giving up on its end.
WAKES = 40


@pytest.fixture(scope="module")
def app_settings(app_settings: Settings) -> Settings:
    return replace(app_settings, events_keepalive=0.05)


def _game(referee: Referee, *emails: str) -> tuple[str, list[str]]:
    players = [Player(f"P{n}", email) for n, email in enumerate(emails)]
    created = create_game(referee, NewGame("subdivision", players, {}, trusted=True))
    return created.game.id, created.tokens


def _chunks(answer: object) -> Iterator[bytes]:
    return iter(answer.response)  # type: ignore[attr-defined]


def _ends(chunks: Iterator[bytes]) -> list[bytes]:
    """What a stream still sends before it ends; fails if it goes on for `WAKES` wakes."""
    sent = []
    for _ in range(WAKES):
        try:
            sent.append(next(chunks))
        except StopIteration:
            return sent
    raise AssertionError(f"the stream goes on: {sent[-3:]}")


def test_revoking_a_token_ends_the_player_stream_it_opened(app: Flask, referee: Referee) -> None:
    _game(referee, "una@example.org", "vic@example.org")
    browser = app.test_client()
    browser.set_cookie("player", open_session(referee, "una@example.org"))
    made = browser.post("/v1/me/tokens", json={"name": "stream", "scopes": ["read"]}).get_json()
    answer = app.test_client().get(
        "/v1/me/events", headers={"Authorization": f"Bearer {made['token']}"}, buffered=False
    )
    assert answer.status_code == 200
    chunks = _chunks(answer)
    assert next(chunks).startswith(b"id: ")
    assert browser.delete(f"/v1/me/tokens/{made['id']}").status_code == 204
    _ends(chunks)
    answer.close()


def test_signing_out_ends_the_player_stream_of_that_browser(app: Flask, referee: Referee) -> None:
    _game(referee, "wes@example.org", "vic@example.org")
    browser = app.test_client()
    cookie = open_session(referee, "wes@example.org")
    browser.set_cookie("player", cookie)
    answer = browser.get("/v1/me/events", buffered=False)
    assert answer.status_code == 200
    chunks = _chunks(answer)
    assert next(chunks).startswith(b"id: ")
    other = app.test_client()
    other.set_cookie("player", cookie)
    # The sign-out form of another tab: its form token as every form's.
    page = other.get("/me").get_data(as_text=True)
    marker = 'name="csrf" value="'
    start = page.index(marker) + len(marker)
    token = page[start : page.index('"', start)]
    assert other.post("/me/sign-out", data={"csrf": token}).status_code == 303
    _ends(chunks)
    answer.close()


def test_revoking_a_token_ends_a_game_stream_it_follows_as_the_seat(
    app: Flask, referee: Referee
) -> None:
    game_id, seats = _game(referee, "xan@example.org", "vic@example.org")
    browser = app.test_client()
    browser.set_cookie("player", open_session(referee, "xan@example.org"))
    made = browser.post("/v1/me/tokens", json={"name": "game", "scopes": ["read"]}).get_json()
    answer = app.test_client().get(
        f"/v1/games/{game_id}/events",
        headers={"Authorization": f"Bearer {made['token']}"},
        buffered=False,
    )
    assert answer.status_code == 200
    chunks = _chunks(answer)
    assert b"data:" in next(chunks)
    assert browser.delete(f"/v1/me/tokens/{made['id']}").status_code == 204
    # The seat's view changes: the revoked token is told nothing of it.
    client = app.test_client()
    moves = client.get(
        f"/v1/games/{game_id}/legal-moves", headers={"Authorization": f"Bearer {seats[0]}"}
    ).get_json()["moves"]
    played = client.post(
        f"/v1/games/{game_id}/moves?wait=5",
        json={"notation": moves[0]["notation"]},
        headers={"Authorization": f"Bearer {seats[0]}"},
    )
    assert played.status_code == 201, played.get_data(as_text=True)
    assert not [chunk for chunk in _ends(chunks) if b"data:" in chunk]
    answer.close()


def test_a_mark_beyond_any_time_is_refused_before_the_stream_opens(
    app: Flask, referee: Referee
) -> None:
    _game(referee, "yul@example.org", "vic@example.org")
    browser = app.test_client()
    browser.set_cookie("player", open_session(referee, "yul@example.org"))
    for mark in ("9" * 20, "9" * 17, "300000000000000000"):
        for asked in (
            browser.get("/v1/me/events", headers={"Last-Event-ID": mark}, buffered=False),
            browser.get(f"/v1/me/events?since={mark}", buffered=False),
        ):
            assert asked.status_code == 400, mark
            assert asked.get_json()["code"] == "bad_request"
            asked.close()
