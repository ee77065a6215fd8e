"""Player tokens over HTTP: made by a signed-in browser and shown once, listed without their
secret, revoked at once; `/v1/me/games`; a token acting as its player's seat in any game.

In-process (the `app` of tests/fixtures.py on a SQLite file, tasks run eagerly).
"""

from __future__ import annotations

from typing import Any

import pytest
from flask import Flask
from flask.testing import FlaskClient
from sqlalchemy import text

from referee.service import Referee
from referee.service.creating import NewGame, Player, create_game
from referee.service.players import open_session
from referee.store.tables import PlayerToken, SQLModel

ANN = "ann@example.org"
BOB = "bob@example.org"


def counts(referee: Referee) -> dict[str, int]:
    """Every table's rows: a refused request writes none."""
    with referee.db.engine.connect() as connection:
        return {
            table: connection.execute(text(f"SELECT count(*) FROM {table}")).scalar_one()
            for table in SQLModel.metadata.tables
        }


def _signed_in(app: Flask, referee: Referee, address: str) -> FlaskClient:
    """A browser of its own, signed in as `address`."""
    browser = app.test_client()
    browser.set_cookie("player", open_session(referee, address))
    return browser


def _game(referee: Referee, *emails: str | None) -> tuple[str, list[str]]:
    """A Subdivision game seating `emails` in order (None: a seat without an address)."""
    players = [Player(f"P{n}", email) for n, email in enumerate(emails)]
    created = create_game(referee, NewGame("subdivision", players, {}, trusted=True))
    return created.game.id, created.tokens


def _token(app: Flask, referee: Referee, address: str, scopes: list[str]) -> str:
    made = _signed_in(app, referee, address).post(
        "/v1/me/tokens", json={"name": f"{'+'.join(scopes)} of {address}", "scopes": scopes}
    )
    assert made.status_code == 201, made.get_data(as_text=True)
    secret: str = made.get_json()["token"]
    return secret


def _bearer(token: str) -> dict[str, str]:
    return {"Authorization": f"Bearer {token}"}


def _problem(answer: Any, status: int, code: str) -> dict[str, Any]:
    assert answer.status_code == status, answer.get_data(as_text=True)
    assert answer.mimetype == "application/problem+json"
    body: dict[str, Any] = answer.get_json()
    assert body["code"] == code
    return body


def _legal_notation(client: FlaskClient, game_id: str, token: str) -> str:
    answer = client.get(f"/v1/games/{game_id}/legal-moves", headers=_bearer(token))
    assert answer.status_code == 200, answer.get_data(as_text=True)
    notation: str = answer.get_json()["moves"][0]["notation"]
    return notation


def test_a_token_is_shown_once_listed_without_its_secret_and_revoked(
    app: Flask, referee: Referee
) -> None:
    browser = _signed_in(app, referee, "Tess@Example.org")
    made = browser.post("/v1/me/tokens", json={"name": "my bot", "scopes": ["play", "read"]})
    assert made.status_code == 201 and made.headers["Cache-Control"] == "no-store"
    body = made.get_json()
    secret = body["token"]
    assert secret.startswith("rp_") and len(secret) > 40
    assert body["scopes"] == ["read", "play"] and body["last_used_at"] is None
    with referee.db.reading() as session:
        row = session.get(PlayerToken, body["id"])
        assert (
            row is not None and secret not in row.token_hash and row.address == "tess@example.org"
        )
    listed = browser.get("/v1/me/tokens")
    assert listed.status_code == 200
    assert secret not in listed.get_data(as_text=True)
    assert [t["name"] for t in listed.get_json()["tokens"]] == ["my bot"]
    # Its use is noted, not on every request: at most once a minute.
    assert app.test_client().get("/v1/me", headers=_bearer(secret)).get_json() == {
        "email": "tess@example.org"
    }
    noted = browser.get("/v1/me/tokens").get_json()["tokens"][0]["last_used_at"]
    assert noted is not None
    assert app.test_client().get("/v1/me", headers=_bearer(secret)).status_code == 200
    assert browser.get("/v1/me/tokens").get_json()["tokens"][0]["last_used_at"] == noted
    assert browser.delete(f"/v1/me/tokens/{body['id']}").status_code == 204
    assert browser.get("/v1/me/tokens").get_json() == {"tokens": []}
    _problem(app.test_client().get("/v1/me", headers=_bearer(secret)), 401, "unauthorized")
    # Revoked already: not found, as another player's or no token at all.
    _problem(browser.delete(f"/v1/me/tokens/{body['id']}"), 404, "not_found")


def test_only_a_signed_in_browser_makes_lists_and_revokes_tokens(
    app: Flask, referee: Referee
) -> None:
    token = _token(app, referee, ANN, ["read", "play"])
    anyone = app.test_client()
    for answer in (
        anyone.post(
            "/v1/me/tokens", json={"name": "x", "scopes": ["read"]}, headers=_bearer(token)
        ),
        anyone.get("/v1/me/tokens", headers=_bearer(token)),
        anyone.delete("/v1/me/tokens/1", headers=_bearer(token)),
    ):
        _problem(answer, 403, "forbidden")
    _problem(anyone.get("/v1/me/tokens"), 401, "unauthorized")
    _problem(
        anyone.post("/v1/me/tokens", json={"name": "x", "scopes": ["read"]}), 401, "unauthorized"
    )
    # A seat token is no player's; a cookie no session made signs in no one.
    _, seats = _game(referee, ANN, None)
    _problem(anyone.get("/v1/me/games", headers=_bearer(seats[0])), 401, "unauthorized")
    forged = app.test_client()
    forged.set_cookie("player", "not-a-session")
    _problem(forged.get("/v1/me/games"), 401, "unauthorized")


def test_another_players_token_cannot_be_revoked(app: Flask, referee: Referee) -> None:
    bobs = _signed_in(app, referee, BOB).post(
        "/v1/me/tokens", json={"name": "bob's", "scopes": ["read"]}
    )
    ann = _signed_in(app, referee, ANN)
    _problem(ann.delete(f"/v1/me/tokens/{bobs.get_json()['id']}"), 404, "not_found")
    still = app.test_client().get("/v1/me", headers=_bearer(bobs.get_json()["token"]))
    assert still.status_code == 200


def test_my_games_through_a_token_and_a_browser(app: Flask, referee: Referee) -> None:
    mine, _ = _game(referee, "gus@example.org", BOB)
    waiting, _ = _game(referee, BOB, "Gus@example.org")
    _game(referee, BOB, None)
    token = _token(app, referee, "gus@example.org", ["read"])
    listed = app.test_client().get("/v1/me/games", headers=_bearer(token))
    assert listed.status_code == 200
    games = listed.get_json()["games"]
    assert [g["id"] for g in games] == [mine, waiting]
    first = games[0]
    assert first["my_turn"] is True and first["to_act"] == [0] and first["deadline"] is None
    assert first["seats"] == [
        {"seat": 0, "name": "P0", "me": True},
        {"seat": 1, "name": "P1", "me": False},
    ]
    assert set(first) == {
        "id",
        "game",
        "status",
        "seats",
        "to_act",
        "my_turn",
        "deadline",
        "version",
        "updated_at",
        "result",
    }
    browser = _signed_in(app, referee, "gus@example.org")
    mine_now = browser.get("/v1/me/games?to_act=me&status=active").get_json()
    assert [g["id"] for g in mine_now["games"]] == [mine]
    paged = browser.get("/v1/me/games?limit=1").get_json()
    assert paged["next_cursor"] == "1"
    rest = browser.get(f"/v1/me/games?limit=1&cursor={paged['next_cursor']}").get_json()
    assert [g["id"] for g in rest["games"]] == [waiting] and rest["next_cursor"] is None


def test_a_read_token_sees_as_my_seat_but_cannot_act(
    app: Flask, client: FlaskClient, referee: Referee
) -> None:
    game_id, seats = _game(referee, ANN, BOB)
    read = _token(app, referee, ANN, ["read"])
    as_seat = client.get(f"/v1/games/{game_id}/state", headers=_bearer(seats[0])).get_json()
    as_token = client.get(f"/v1/games/{game_id}/state", headers=_bearer(read))
    assert as_token.status_code == 200 and as_token.get_json() == as_seat
    assert client.get(f"/v1/games/{game_id}/legal-moves", headers=_bearer(read)).status_code == 200
    assert client.get(f"/v1/games/{game_id}/board.svg", headers=_bearer(read)).status_code == 200
    assert client.get(f"/v1/games/{game_id}/webhook", headers=_bearer(read)).status_code == 200
    notation = _legal_notation(client, game_id, read)
    before = counts(referee)
    moves = f"/v1/games/{game_id}/moves?wait=5"
    _problem(
        client.post(moves, json={"notation": notation}, headers=_bearer(read)), 403, "forbidden"
    )
    _problem(client.post(f"/v1/games/{game_id}/resign", headers=_bearer(read)), 403, "forbidden")
    for method in (client.delete, client.post):
        path = f"/v1/games/{game_id}/webhook" + ("/secret" if method == client.post else "")
        _problem(method(path, headers=_bearer(read)), 403, "forbidden")
    _problem(
        client.put(
            f"/v1/games/{game_id}/webhook", json={"url": "https://x.example"}, headers=_bearer(read)
        ),
        403,
        "forbidden",
    )
    assert counts(referee) == before


def test_a_play_token_moves_and_a_play_only_token_reads_only_its_games(
    app: Flask, client: FlaskClient, referee: Referee
) -> None:
    game_id, _ = _game(referee, ANN, BOB)
    both = _token(app, referee, ANN, ["read", "play"])
    notation = _legal_notation(client, game_id, both)
    played = client.post(
        f"/v1/games/{game_id}/moves?wait=5", json={"notation": notation}, headers=_bearer(both)
    )
    assert played.status_code == 201, played.get_data(as_text=True)
    assert played.get_json()["submission"]["seat"] == 0
    shown = client.get(
        f"/v1/submissions/{played.get_json()['submission']['id']}", headers=_bearer(both)
    )
    assert shown.get_json()["submission"]["move"] != {}
    play_only = _token(app, referee, BOB, ["play"])
    # Playing needs seeing: the game as Bob's seat sees it, and nothing beyond it.
    for path in ("state", "legal-moves", "board.svg", "moves"):
        answer = client.get(f"/v1/games/{game_id}/{path}", headers=_bearer(play_only))
        assert answer.status_code == 200, (path, answer.get_data(as_text=True))
    legal = client.get(f"/v1/games/{game_id}/legal-moves", headers=_bearer(play_only))
    assert legal.get_json()["seat"] == 1
    _problem(client.get("/v1/me/games", headers=_bearer(play_only)), 403, "forbidden")
    _problem(client.get("/v1/me", headers=_bearer(play_only)), 403, "forbidden")
    resigned = client.post(f"/v1/games/{game_id}/resign?wait=5", headers=_bearer(play_only))
    assert resigned.status_code == 201 and resigned.get_json()["submission"]["seat"] == 1
    # Over: a read token may not accept a rematch; a play token may.
    read = _token(app, referee, BOB, ["read"])
    _problem(client.post(f"/v1/games/{game_id}/rematch", headers=_bearer(read)), 403, "forbidden")
    accepted = client.post(f"/v1/games/{game_id}/rematch", headers=_bearer(play_only))
    assert accepted.status_code == 200 and accepted.get_json()["accepted"] == [1]


def test_a_revoked_token_is_refused_at_once(
    app: Flask, client: FlaskClient, referee: Referee
) -> None:
    game_id, _ = _game(referee, "hal@example.org", BOB)
    browser = _signed_in(app, referee, "hal@example.org")
    made = browser.post("/v1/me/tokens", json={"name": "soon gone", "scopes": ["read", "play"]})
    token = made.get_json()["token"]
    assert client.get(f"/v1/games/{game_id}/state", headers=_bearer(token)).status_code == 200
    assert browser.delete(f"/v1/me/tokens/{made.get_json()['id']}").status_code == 204
    _problem(client.get(f"/v1/games/{game_id}/state", headers=_bearer(token)), 401, "unauthorized")
    _problem(client.get("/v1/me/games", headers=_bearer(token)), 401, "unauthorized")
    _problem(
        client.post(f"/v1/games/{game_id}/resign", headers=_bearer(token)), 401, "unauthorized"
    )


def test_a_token_never_acts_in_another_players_game_or_seat(
    app: Flask, client: FlaskClient, referee: Referee
) -> None:
    bobs_game, _ = _game(referee, BOB, "cid@example.org")
    shared, _ = _game(referee, ANN, BOB)
    ann = _token(app, referee, ANN, ["read", "play"])
    for path in ("state", "legal-moves", "events", "board.svg", "webhook"):
        _problem(
            client.get(f"/v1/games/{bobs_game}/{path}", headers=_bearer(ann)), 401, "unauthorized"
        )
    _problem(
        client.post(f"/v1/games/{bobs_game}/resign", headers=_bearer(ann)), 401, "unauthorized"
    )
    # In a game both play, Ann's token is Ann's seat, never Bob's.
    _problem(
        client.get(f"/v1/games/{shared}/legal-moves?seat=1", headers=_bearer(ann)),
        401,
        "unauthorized",
    )
    assert (
        client.get(f"/v1/games/{shared}/legal-moves", headers=_bearer(ann)).get_json()["seat"] == 0
    )
    forged = "rp_" + "A" * 43
    _problem(client.get(f"/v1/games/{shared}/state", headers=_bearer(forged)), 401, "unauthorized")
    _problem(
        client.get(f"/v1/games/{shared}/state", headers=_bearer(ann[:-1])), 401, "unauthorized"
    )


def test_seat_picks_among_a_players_seats(
    app: Flask, client: FlaskClient, referee: Referee
) -> None:
    game_id, seats = _game(referee, "ida@example.org", "IDA@example.org")
    token = _token(app, referee, "ida@example.org", ["read", "play"])
    legal = f"/v1/games/{game_id}/legal-moves"
    body = _problem(client.get(legal, headers=_bearer(token)), 422, "bad_request")
    assert "?seat=N" in body["detail"]
    assert client.get(legal + "?seat=1", headers=_bearer(token)).get_json()["seat"] == 1
    _problem(client.get(legal + "?seat=2", headers=_bearer(token)), 401, "unauthorized")
    for bad in ("x", "-1", "100", "1e1", "\u0663"):
        _problem(client.get(legal + f"?seat={bad}", headers=_bearer(token)), 422, "bad_request")
    notation = _legal_notation(client, game_id, seats[0])
    played = client.post(
        f"/v1/games/{game_id}/moves?wait=5&seat=0",
        json={"notation": notation},
        headers=_bearer(token),
    )
    assert played.status_code == 201 and played.get_json()["submission"]["seat"] == 0
    # A seat token keeps working as before, and `seat` must then be its own.
    assert client.get(legal, headers=_bearer(seats[1])).get_json()["seat"] == 1
    assert client.get(legal + "?seat=1", headers=_bearer(seats[1])).status_code == 200
    _problem(client.get(legal + "?seat=0", headers=_bearer(seats[1])), 401, "unauthorized")
    _problem(client.get(f"/v1/games/{game_id}/state?seat=0"), 401, "unauthorized")


@pytest.mark.parametrize(
    ("body", "status", "code"),
    [
        ({"name": "x" * 101, "scopes": ["read"]}, 422, "bad_request"),
        ({"name": "", "scopes": ["read"]}, 422, "bad_request"),
        ({"name": "   ", "scopes": ["read"]}, 422, "bad_request"),
        ({"name": "a\nb", "scopes": ["read"]}, 422, "bad_request"),
        ({"name": "ok", "scopes": []}, 422, "bad_request"),
        ({"name": "ok", "scopes": ["admin"]}, 422, "bad_request"),
        ({"name": "ok", "scopes": ["manage"]}, 422, "bad_request"),
        ({"name": "ok", "scopes": "read"}, 422, "bad_request"),
        ({"name": "ok"}, 422, "bad_request"),
        ({"name": "ok", "scopes": ["read"], "admin": True}, 422, "bad_request"),
        ([1, 2], 422, "bad_request"),
    ],
)
def test_bad_tokens_asked_for_are_refused_and_write_nothing(
    app: Flask, referee: Referee, body: Any, status: int, code: str
) -> None:
    browser = _signed_in(app, referee, "jo@example.org")
    before = counts(referee)
    _problem(browser.post("/v1/me/tokens", json=body), status, code)
    assert counts(referee) == before


def test_bad_requests_to_me_are_problems(app: Flask, referee: Referee) -> None:
    browser = _signed_in(app, referee, "kim@example.org")
    before = counts(referee)
    _problem(
        browser.post("/v1/me/tokens", data="name=x&scopes=read"), 415, "unsupported_media_type"
    )
    _problem(
        browser.post(
            "/v1/me/tokens", data=b'{"name": "x", ', headers={"Content-Type": "application/json"}
        ),
        400,
        "bad_json",
    )
    for token_id in ("abc", "99999999999999999999", "-1", "0x1", "\u0661"):
        _problem(browser.delete(f"/v1/me/tokens/{token_id}"), 404, "not_found")
    for query in ("status=lost", "to_act=you", "cursor=abc", "limit=0", "limit=500", "x=1"):
        _problem(browser.get(f"/v1/me/games?{query}"), 422, "bad_request")
    _problem(
        browser.get("/v1/me/games", headers={"Authorization": "Basic abc"}), 401, "unauthorized"
    )
    _problem(browser.get("/v1/me/games", headers=_bearer("rp_" + "x" * 300)), 401, "unauthorized")
    assert counts(referee) == before
