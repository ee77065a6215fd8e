"""Review of "Players: one home for all my games": defects found, each pinned by a test.

In-process (the `app` of tests/fixtures.py on a SQLite file, tasks run eagerly).
"""

from __future__ import annotations

from datetime import timedelta
from typing import Any

from flask import Flask
from flask.testing import FlaskClient

from referee.service import Referee
from referee.service.creating import NewGame, Player, create_game
from referee.service.deadlines import sweep_deadlines
from referee.service.players import MANAGE, open_session
from referee.service.players import Player as Signed
from referee.service.vacations import set_vacation
from referee.store import keys
from referee.store.clock import parse_stamp
from referee.store.tables import Game

ANN = "ann@example.org"
BOB = "bob@example.org"


def _signed_in(app: Flask, referee: Referee, address: str) -> FlaskClient:
    browser = app.test_client()
    browser.set_cookie("player", open_session(referee, address))
    return browser


def _game(referee: Referee, *emails: str | None) -> tuple[str, list[str]]:
    players = [Player(f"P{n}", email) for n, email in enumerate(emails)]
    created = create_game(referee, NewGame("subdivision", players, {}, trusted=True))
    return created.game.id, created.tokens


def _game_tokens(referee: Referee, game_id: str) -> list[str]:
    """The seats' tokens of a game whose seats have addresses (derived from the secret)."""
    secret = referee.secret()
    return [keys.seat_link_token(secret, game_id, seat) for seat in (0, 1)]


def _bearer(token: str) -> dict[str, str]:
    return {"Authorization": f"Bearer {token}"}


def _made(browser: FlaskClient, scopes: list[str]) -> dict[str, Any]:
    made = browser.post("/v1/me/tokens", json={"name": "+".join(scopes), "scopes": scopes})
    assert made.status_code == 201, made.get_data(as_text=True)
    body: dict[str, Any] = made.get_json()
    return body


def _csrf(browser: FlaskClient, page: str) -> str:
    """The form token a page hands the browser (and sets as its cookie)."""
    text = browser.get(page).get_data(as_text=True)
    marker = 'name="csrf" value="'
    start = text.index(marker) + len(marker)
    return text[start : text.index('"', start)]


def test_revoking_a_token_id_beyond_any_row_is_not_found(app: Flask, referee: Referee) -> None:
    browser = _signed_in(app, referee, ANN)
    _game(referee, ANN, BOB)
    token = _csrf(browser, "/me")
    for huge in ("9" * 19, "9" * 30):
        answer = browser.post(f"/me/tokens/{huge}/revoke", data={"csrf": token})
        assert answer.status_code == 404, answer.get_data(as_text=True)[:300]


def test_a_player_token_accepting_a_rematch_gets_no_seat_token_that_outlives_it(
    app: Flask, client: FlaskClient, referee: Referee
) -> None:
    game_id, seats = _game(referee, "rae@example.org", BOB)
    browser = _signed_in(app, referee, "rae@example.org")
    made = _made(browser, ["read", "play"])
    token = made["token"]
    resigned = client.post(f"/v1/games/{game_id}/resign?wait=5", headers=_bearer(seats[1]))
    assert resigned.status_code == 201, resigned.get_data(as_text=True)
    assert client.post(f"/v1/games/{game_id}/rematch", headers=_bearer(seats[1])).status_code == 200
    accepted = client.post(f"/v1/games/{game_id}/rematch", headers=_bearer(token))
    assert accepted.status_code == 200, accepted.get_data(as_text=True)
    body = accepted.get_json()
    new_game = body["game_id"]
    assert new_game is not None
    # The player token acts in the new game as the player's seat; it is handed no seat token,
    # which no revocation of it would stop.
    assert body["token"] is None
    assert (
        client.get(f"/v1/games/{new_game}/legal-moves", headers=_bearer(token)).status_code == 200
    )
    again = client.post(f"/v1/games/{game_id}/rematch", headers=_bearer(token)).get_json()
    assert again["game_id"] == new_game and again["token"] is None
    # A seat token still gets its seat's token in the new game, as before.
    assert client.post(f"/v1/games/{game_id}/rematch", headers=_bearer(seats[1])).get_json()[
        "token"
    ]


def test_a_finished_game_on_my_page_opens_my_seat_where_the_rematch_is_offered(
    app: Flask, referee: Referee
) -> None:
    game_id, seats = _game(referee, "sol@example.org", BOB)
    old_id, _ = _game(referee, "sol@example.org", BOB)
    client = app.test_client()
    for ending in (game_id, old_id):
        tokens = seats if ending == game_id else _game_tokens(referee, ending)
        ended = client.post(f"/v1/games/{ending}/resign?wait=5", headers=_bearer(tokens[1]))
        assert ended.status_code == 201, ended.get_data(as_text=True)
    # One ended long ago: its play-now links no longer work, so its row opens its page.
    with referee.db.transaction() as session:
        game = session.get(Game, old_id)
        assert game is not None
        game.updated_at = "2020-01-01T00:00:00.000000+00:00"
        session.add(game)
    browser = _signed_in(app, referee, "sol@example.org")
    page = browser.get("/me").get_data(as_text=True)
    link = f"/g/{game_id}/play/{keys.play_token(referee.secret(), game_id, 0)}"
    assert f'href="{link}"' in page
    assert f'href="/g/{old_id}"' in page
    assert browser.get(link).status_code == 200
    assert 'id="rematch-accept"' in browser.get(f"/g/{game_id}").get_data(as_text=True)


def test_the_lists_refresh_from_my_page_also_on_the_answer_to_the_token_form(
    app: Flask, referee: Referee
) -> None:
    _game(referee, "tia@example.org", BOB)
    browser = _signed_in(app, referee, "tia@example.org")
    token = _csrf(browser, "/me")
    made = browser.post("/me/tokens", data={"csrf": token, "name": "bot", "scope-read": "on"})
    assert made.status_code == 201
    # That answer is at /me/tokens, which has no GET: the script fetches the lists from /me.
    assert browser.get("/me/tokens").status_code == 405
    assert 'data-page="/me"' in made.get_data(as_text=True)
    script = browser.get("/assets/me.js").get_data(as_text=True)
    assert "root.dataset.page" in script and "location.pathname" not in script


def test_a_turn_that_ran_out_before_a_vacation_began_still_times_out(
    fresh_referee: Referee,
) -> None:
    referee = fresh_referee
    players = [Player("Ann", "ann@late.test"), Player("Bob", "bob@late.test")]
    game = create_game(referee, NewGame("subdivision", players, {}, deadline="1h")).game
    mover = Signed(("ann@late.test", "bob@late.test")[game.to_act[0]], frozenset({MANAGE}))
    began = parse_stamp(game.updated_at)
    # The turn ran out at began + 1h; the sweep was late (a worker down), and meanwhile
    # the player, overdue, goes on vacation: allowed, as the deadline fell before it.
    late = began + timedelta(hours=2)
    set_vacation(referee, mover, None, late + timedelta(days=3), late)
    # That turn ran out first: the vacation does not save it.
    assert sweep_deadlines(referee, late + timedelta(minutes=1)).timed_out == [game.id]
