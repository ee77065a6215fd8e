"""Table talk over HTTP, in-process: who may read and write a game's messages, mutes and
notes (the game's seats by seat or player token, or the page's seat cookie: 403 for
everyone else), what is refused (422, 429 with Retry-After), the page's talk beside the
board, unread games on /me, and that messages never touch the game's state, log, record
or verification.

The app runs on the embedded default (a SQLite file, tasks run eagerly).
"""

from __future__ import annotations

import re
from dataclasses import replace
from datetime import datetime, timedelta
from typing import Any

import pytest
import time_machine
from flask import Flask
from flask.testing import FlaskClient
from sqlalchemy import text

from referee.service import Referee
from referee.service.creating import NewGame, Player, create_game
from referee.service.players import open_session
from referee.service.table_talk import PER_HOUR
from referee.settings import Settings
from referee.store.tables import SQLModel

HOST = "http://localhost"
ANN = "ann-talk@example.org"
BOB = "bob-talk@example.org"
EVE = "eve-talk@example.org"


@pytest.fixture(scope="module")
def app_settings(app_settings: Settings) -> Settings:
    # The pages' forms come from the test client's host.
    return replace(app_settings, public_url=HOST)


def _game(referee: Referee, *emails: str | None) -> tuple[str, list[str]]:
    players = [Player(f"P{n}", email) for n, email in enumerate(emails)]
    created = create_game(referee, NewGame("subdivision", players, {}, trusted=True))
    return created.game.id, list(created.tokens)


def _bearer(token: str | None) -> dict[str, str]:
    return {} if token is None else {"Authorization": f"Bearer {token}"}


def _problem(answer: Any, status: int, code: str) -> dict[str, Any]:
    assert answer.status_code == status, answer.get_data(as_text=True)
    assert answer.mimetype == "application/problem+json"
    body: dict[str, Any] = answer.get_json()
    assert body["code"] == code, body
    return body


def _say(client: FlaskClient, game_id: str, token: str | None, words: str) -> Any:
    return client.post(
        f"/v1/games/{game_id}/messages", json={"text": words}, headers=_bearer(token)
    )


def _read(client: FlaskClient, game_id: str, token: str | None, after: int = 0) -> Any:
    return client.get(
        f"/v1/games/{game_id}/messages", query_string={"after": after}, headers=_bearer(token)
    )


def _counts(referee: Referee) -> dict[str, int]:
    with referee.db.engine.connect() as connection:
        return {
            table: connection.execute(text(f"SELECT count(*) FROM {table}")).scalar_one()
            for table in SQLModel.metadata.tables
        }


def _token(app: Flask, referee: Referee, address: str, scopes: list[str]) -> str:
    browser = app.test_client()
    browser.set_cookie("player", open_session(referee, address))
    made = browser.post("/v1/me/tokens", json={"name": "talk", "scopes": scopes})
    assert made.status_code == 201, made.get_data(as_text=True)
    secret: str = made.get_json()["token"]
    return secret


def test_seats_write_and_read_each_others_messages(client: FlaskClient, referee: Referee) -> None:
    game_id, (ann, bob) = _game(referee, None, None)
    written = _say(client, game_id, ann, "  Good luck!\n\n\n\nHave fun.  ")
    assert written.status_code == 201, written.get_data(as_text=True)
    said = written.get_json()
    assert said["seq"] == 1 and said["seat"] == 0 and said["name"] == "P0"
    assert said["text"] == "Good luck!\n\nHave fun."
    assert _say(client, game_id, bob, "<b>thanks</b> https://x.test").status_code == 201
    for token in (ann, bob):
        answer = _read(client, game_id, token)
        assert answer.status_code == 200
        assert [(m["seq"], m["seat"], m["text"]) for m in answer.get_json()["messages"]] == [
            (1, 0, "Good luck!\n\nHave fun."),
            (2, 1, "<b>thanks</b> https://x.test"),
        ]
    assert [m["seq"] for m in _read(client, game_id, ann, after=1).get_json()["messages"]] == [2]
    assert _read(client, game_id, ann, after=2).get_json() == {"messages": [], "muted": []}


def test_anyone_but_a_seat_reads_and_writes_nothing(
    app: Flask, client: FlaskClient, referee: Referee
) -> None:
    game_id, (ann, _bob) = _game(referee, None, None)
    _other, (stranger_seat, _) = _game(referee, None, None)
    assert _say(client, game_id, ann, "our secret").status_code == 201
    eve = _token(app, referee, EVE, ["read", "play"])
    before = _counts(referee)
    outsiders = [None, stranger_seat, "not-a-token-of-anything"]
    for token in outsiders:
        for answer in (
            _read(client, game_id, token),
            _say(client, game_id, token, "let me in"),
            client.get(f"/v1/games/{game_id}/note", headers=_bearer(token)),
            client.put(f"/v1/games/{game_id}/note", json={"text": "x"}, headers=_bearer(token)),
            client.put(f"/v1/games/{game_id}/mutes/1", headers=_bearer(token)),
            client.delete(f"/v1/games/{game_id}/mutes/1", headers=_bearer(token)),
        ):
            body = _problem(answer, 403, "not_a_seat")
            assert "our secret" not in answer.get_data(as_text=True), body
    # Another player's token is a stranger here too.
    _problem(_read(client, game_id, eve), 403, "not_a_seat")
    _problem(_say(client, game_id, eve, "hi"), 403, "not_a_seat")
    # A header that is not a bearer token is refused as everywhere.
    answer = client.get(f"/v1/games/{game_id}/messages", headers={"Authorization": "Basic x"})
    _problem(answer, 401, "unauthorized")
    _problem(_read(client, "0" * 32, ann), 404, "not_found")
    assert _counts(referee) == before


def test_a_player_token_talks_as_its_players_seat(
    app: Flask, client: FlaskClient, referee: Referee
) -> None:
    game_id, (_ann, bob) = _game(referee, ANN, None)
    reader = _token(app, referee, ANN, ["read"])
    player = _token(app, referee, ANN, ["read", "play"])
    assert _say(client, game_id, bob, "hello Ann").status_code == 201
    assert [m["text"] for m in _read(client, game_id, reader).get_json()["messages"]] == [
        "hello Ann"
    ]
    # Writing is acting: a token without `play` may not.
    _problem(_say(client, game_id, reader, "hi"), 403, "forbidden")
    said = _say(client, game_id, player, "hello Bob")
    assert said.status_code == 201 and said.get_json()["seat"] == 0


@pytest.mark.parametrize(
    "words",
    ["", "   \n\t  ", "\u200b\u2066\u202e", "x" * 1001, "  " + "y" * 1001],
)
def test_a_message_that_shows_nothing_or_too_much_is_refused(
    client: FlaskClient, referee: Referee, words: str
) -> None:
    game_id, (ann, _bob) = _game(referee, None, None)
    before = _counts(referee)
    answer = _say(client, game_id, ann, words)
    assert answer.status_code == 422 and answer.mimetype == "application/problem+json"
    assert answer.get_json()["code"] in ("bad_message", "bad_request")
    assert _counts(referee) == before


def test_a_long_message_with_blanks_around_is_taken_trimmed(
    client: FlaskClient, referee: Referee
) -> None:
    game_id, (ann, _bob) = _game(referee, None, None)
    answer = _say(client, game_id, ann, "\n  " + "z" * 1000 + "   \n")
    assert answer.status_code == 201 and answer.get_json()["text"] == "z" * 1000


def test_thirty_an_hour_then_429_with_retry_after(
    client: FlaskClient, referee: Referee, now: datetime
) -> None:
    game_id, (ann, bob) = _game(referee, None, None)
    with time_machine.travel(now, tick=False) as moving:
        for n in range(PER_HOUR):
            assert _say(client, game_id, ann, f"message {n}").status_code == 201
            moving.shift(timedelta(seconds=10))
        refused = _say(client, game_id, ann, "one too many")
        body = _problem(refused, 429, "too_many_messages")
        # The first of the hour is 300 s old: free again in 3300 s.
        assert refused.headers["Retry-After"] == "3300"
        assert "3300" in body["detail"]
        # The limit is the seat's: the other seat writes on.
        assert _say(client, game_id, bob, "my turn to talk").status_code == 201
        moving.shift(timedelta(seconds=3300))
        assert _say(client, game_id, ann, "back again").status_code == 201
    assert len(_read(client, game_id, bob).get_json()["messages"]) == PER_HOUR + 2


def test_a_seat_mutes_another_for_itself(client: FlaskClient, referee: Referee) -> None:
    game_id, (ann, bob, cy) = _game(referee, None, None, None)
    muted = client.put(f"/v1/games/{game_id}/mutes/1", headers=_bearer(ann))
    assert muted.status_code == 200 and muted.get_json() == {"muted": [1]}
    _say(client, game_id, bob, "spam spam")
    _say(client, game_id, cy, "real news")
    mine = _read(client, game_id, ann).get_json()
    assert [m["text"] for m in mine["messages"]] == ["real news"] and mine["muted"] == [1]
    assert [m["text"] for m in _read(client, game_id, cy).get_json()["messages"]] == [
        "spam spam",
        "real news",
    ]
    for refused in (0, 3, 99):
        answer = client.put(f"/v1/games/{game_id}/mutes/{refused}", headers=_bearer(ann))
        _problem(answer, 422, "bad_request")
    unmuted = client.delete(f"/v1/games/{game_id}/mutes/1", headers=_bearer(ann))
    assert unmuted.get_json() == {"muted": []}
    assert len(_read(client, game_id, ann).get_json()["messages"]) == 2


def test_a_note_is_seen_by_its_seat_alone(client: FlaskClient, referee: Referee) -> None:
    game_id, (ann, bob) = _game(referee, None, None)
    empty = client.get(f"/v1/games/{game_id}/note", headers=_bearer(ann)).get_json()
    assert empty == {"text": "", "updated_at": None}
    kept = client.put(
        f"/v1/games/{game_id}/note", json={"text": "Bob hoards blue"}, headers=_bearer(ann)
    )
    assert kept.status_code == 200 and kept.get_json()["text"] == "Bob hoards blue"
    assert client.get(f"/v1/games/{game_id}/note", headers=_bearer(ann)).get_json()["text"] == (
        "Bob hoards blue"
    )
    theirs = client.get(f"/v1/games/{game_id}/note", headers=_bearer(bob))
    assert theirs.get_json()["text"] == "" and "blue" not in theirs.get_data(as_text=True)
    too_long = client.put(
        f"/v1/games/{game_id}/note", json={"text": "n" * 4001}, headers=_bearer(ann)
    )
    assert too_long.status_code == 422
    cleared = client.put(f"/v1/games/{game_id}/note", json={"text": " "}, headers=_bearer(ann))
    assert cleared.get_json() == {"text": "", "updated_at": None}


def _snapshot(client: FlaskClient, game_id: str, tokens: list[str]) -> dict[str, bytes]:
    """Every answer about a game's play, its record and its check, byte for byte."""
    paths = [
        f"/v1/games/{game_id}",
        f"/v1/games/{game_id}/state",
        f"/v1/games/{game_id}/moves",
        f"/v1/games/{game_id}/log.jsonl",
        f"/v1/games/{game_id}/verify",
        f"/v1/games/{game_id}/board.svg",
    ]
    found = {path: client.get(path).get_data() for path in paths}
    for seat, token in enumerate(tokens):
        found[f"state as {seat}"] = client.get(
            f"/v1/games/{game_id}/state", headers=_bearer(token)
        ).get_data()
    return found


def _rows(referee: Referee, game_id: str) -> dict[str, list[Any]]:
    with referee.db.engine.connect() as connection:
        return {
            table: [
                tuple(row)
                for row in connection.execute(
                    text(f"SELECT * FROM {table} WHERE {key} = :game ORDER BY 1, 2"),
                    {"game": game_id},
                )
            ]
            for table, key in (
                ("game", "id"),
                ("move", "game_id"),
                ("snapshot", "game_id"),
                ("submission", "game_id"),
            )
        }


def _play(client: FlaskClient, game_id: str, tokens: list[str], moves: int) -> None:
    for _ in range(moves):
        (seat,) = client.get(f"/v1/games/{game_id}").get_json()["to_act"]
        legal = client.get(f"/v1/games/{game_id}/legal-moves", headers=_bearer(tokens[seat]))
        move = legal.get_json()["moves"][0]["move"]
        answer = client.post(
            f"/v1/games/{game_id}/moves?wait=10", json={"move": move}, headers=_bearer(tokens[seat])
        )
        assert answer.status_code == 201, answer.get_data(as_text=True)


def test_messages_leave_state_log_record_and_verification_byte_for_byte(
    client: FlaskClient, referee: Referee
) -> None:
    game_id, tokens = _game(referee, None, None)
    _play(client, game_id, tokens, 3)
    before, rows = _snapshot(client, game_id, tokens), _rows(referee, game_id)
    for n in range(6):
        assert _say(client, game_id, tokens[n % 2], f"talk {n}").status_code == 201
    client.put(f"/v1/games/{game_id}/mutes/1", headers=_bearer(tokens[0]))
    client.put(f"/v1/games/{game_id}/note", json={"text": "a plan"}, headers=_bearer(tokens[0]))
    assert _snapshot(client, game_id, tokens) == before
    assert _rows(referee, game_id) == rows
    # And the game plays on as it would have: the log goes on from the same hash.
    _play(client, game_id, tokens, 1)
    moves = client.get(f"/v1/games/{game_id}/moves").get_json()["moves"]
    assert len(moves) == 4 and client.get(f"/v1/games/{game_id}/verify").get_json()["chain_valid"]


# -- the game page ------------------------------------------------------------------


def _seat_browser(app: Flask, game_id: str, token: str) -> FlaskClient:
    browser = app.test_client()
    assert browser.get(f"/g/{game_id}/seat/{token}").status_code == 200
    return browser


def _csrf(page: str) -> str:
    found = re.search(r'name="csrf" value="([^"]+)"', page)
    assert found is not None
    return found.group(1)


def test_the_page_shows_the_talk_to_seats_alone_as_plain_text(
    app: Flask, client: FlaskClient, referee: Referee
) -> None:
    game_id, (ann, bob) = _game(referee, None, None)
    _other, (stranger, _) = _game(referee, None, None)
    hostile = 'Mine <script>alert(1)</script> <a href="https://x.test">x</a> www.x.test'
    assert _say(client, game_id, bob, hostile).status_code == 201
    seat = _seat_browser(app, game_id, ann)
    page = seat.get(f"/g/{game_id}").get_data(as_text=True)
    assert 'id="talk"' in page and "Table talk" in page
    assert (
        "Mine &lt;script&gt;alert(1)&lt;/script&gt; &lt;a href=&#34;https://x.test&#34;&gt;x&lt;/a&gt;"
        " www.x.test"
    ) in page
    assert "<script>alert" not in page and 'href="https://x.test"' not in page
    # The form sends a message and comes back to the talk (without a script).
    sent = seat.post(f"/g/{game_id}/messages", data={"csrf": _csrf(page), "text": "hi Bob"})
    assert sent.status_code == 303 and sent.headers["Location"].endswith(f"/g/{game_id}#talk")
    assert [m["text"] for m in _read(client, game_id, bob).get_json()["messages"]] == [
        hostile,
        "hi Bob",
    ]
    # Anyone else's page holds none of it, nor a form.
    for other in (app.test_client(), _seat_browser(app, _other, stranger)):
        shown = other.get(f"/g/{game_id}").get_data(as_text=True)
        assert 'id="talk"' not in shown and "hi Bob" not in shown and "alert(1)" not in shown
        _problem(other.get(f"/g/{game_id}/messages"), 403, "not_a_seat")
    spectator = app.test_client()
    token = _csrf(spectator.get("/new/mandala").get_data(as_text=True))
    refused = spectator.post(f"/g/{game_id}/messages", data={"csrf": token, "text": "psst"})
    assert refused.status_code == 403
    assert "psst" not in str(_read(client, game_id, bob).get_json())


def test_the_pages_script_reads_and_sends_as_json(app: Flask, referee: Referee) -> None:
    game_id, (ann, bob) = _game(referee, None, None)
    seat = _seat_browser(app, game_id, ann)
    token = _csrf(seat.get(f"/g/{game_id}").get_data(as_text=True))
    json_please = {"Accept": "application/json"}
    sent = seat.post(
        f"/g/{game_id}/messages", data={"csrf": token, "text": "hello"}, headers=json_please
    )
    assert sent.status_code == 201 and sent.get_json()["text"] == "hello"
    empty = seat.post(
        f"/g/{game_id}/messages", data={"csrf": token, "text": " "}, headers=json_please
    )
    _problem(empty, 422, "bad_message")
    other = _seat_browser(app, game_id, bob)
    assert [
        m["seq"] for m in other.get(f"/g/{game_id}/messages?after=0").get_json()["messages"]
    ] == [1]
    assert other.get(f"/g/{game_id}/messages?after=1").get_json() == {"messages": []}
    assert other.get(f"/g/{game_id}/messages?after=-1").status_code == 400


def test_mutes_and_the_note_on_the_page(app: Flask, client: FlaskClient, referee: Referee) -> None:
    game_id, (ann, bob) = _game(referee, None, None)
    _say(client, game_id, bob, "noise from Bob")
    seat = _seat_browser(app, game_id, ann)
    page = seat.get(f"/g/{game_id}").get_data(as_text=True)
    token = _csrf(page)
    assert "noise from Bob" in page
    muted = seat.post(f"/g/{game_id}/mutes/1", data={"csrf": token, "on": "yes"})
    assert muted.status_code == 303
    page = seat.get(f"/g/{game_id}").get_data(as_text=True)
    assert "noise from Bob" not in page and "Unmute" in page
    noted = seat.post(f"/g/{game_id}/note", data={"csrf": token, "text": "my own plan"})
    assert noted.status_code == 303 and noted.headers["Location"].endswith("#note")
    assert "my own plan" in seat.get(f"/g/{game_id}").get_data(as_text=True)
    bobs = _seat_browser(app, game_id, bob).get(f"/g/{game_id}").get_data(as_text=True)
    assert "my own plan" not in bobs and "noise from Bob" in bobs
    # A form without its token does nothing.
    assert seat.post(f"/g/{game_id}/note", data={"text": "forged"}).status_code == 403
    assert client.get(f"/v1/games/{game_id}/note", headers=_bearer(ann)).get_json()["text"] == (
        "my own plan"
    )


def test_me_shows_the_games_with_unread_messages(
    app: Flask, client: FlaskClient, referee: Referee
) -> None:
    quiet, _ = _game(referee, BOB, None)
    game_id, (_bob, other) = _game(referee, BOB, None)
    browser = app.test_client()
    browser.set_cookie("player", open_session(referee, BOB))

    def badge() -> str | None:
        page = browser.get("/me").get_data(as_text=True)
        row = re.search(rf'data-game="{game_id}".*?</li>', page, re.S)
        assert row is not None and f'data-game="{quiet}"' in page
        found = re.search(r'class="badge unread">([^<]*)<', row.group(0))
        quiet_row = re.search(rf'data-game="{quiet}".*?</li>', page, re.S)
        assert quiet_row is not None and "unread" not in quiet_row.group(0)
        return None if found is None else found.group(1)

    assert badge() is None
    _say(client, game_id, other, "are you there?")
    _say(client, game_id, other, "hello?")
    assert badge() == "2 new messages"
    # Read on the game page (here by the API, as the seat's player token would): none new.
    _read(client, game_id, _bob)
    assert badge() is None
