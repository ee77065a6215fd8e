"""`/me`, a player's page, through Flask's test client: its lists, its links, its tokens.

The app runs in-process on the embedded default (a SQLite file, moves
decided eagerly). A browser is signed in by a session opened in the
service (`open_session`) and set as its `player` cookie, as the sign-in
link does. Each test plays with addresses of its own.
"""

from __future__ import annotations

import re
from dataclasses import replace
from datetime import UTC, datetime, timedelta
from html import unescape

import pytest
from flask import Flask
from flask.testing import FlaskClient

from api.http.player_auth import PLAYER_COOKIE
from api.pages.in_words import deadline_words, result_words
from referee import games
from referee.i18n import speaking
from referee.service import Referee, game_states
from referee.service.creating import NewGame, Player, create_game
from referee.service.players import open_session
from referee.service.submitting import KnownSeat, SubmitMove, submit_move
from referee.settings import Settings
from referee.store import keys
from referee.store.tables import Game

HOST = "http://localhost"
RULES = games.get("subdivision")


@pytest.fixture(scope="module")
def app_settings(app_settings: Settings) -> Settings:
    # The test client's pages are served from http://localhost: forms come from there.
    return replace(app_settings, public_url=HOST)


def signed_in(app: Flask, referee: Referee, address: str) -> FlaskClient:
    browser = app.test_client()
    browser.set_cookie(PLAYER_COOKIE, open_session(referee, address))
    return browser


def new_game(
    referee: Referee, seats: list[tuple[str, str | None]], deadline: str | None = None
) -> str:
    players = [Player(name, email) for name, email in seats]
    command = NewGame("subdivision", players, {}, deadline=deadline, trusted=True)
    return create_game(referee, command).game.id


def to_act(referee: Referee, game_id: str) -> list[int]:
    with referee.db.reading() as session:
        game = session.get(Game, game_id)
        assert game is not None
        return list(game.to_act)


def play(referee: Referee, game_id: str) -> None:
    """The seat to act plays its first legal move."""
    with referee.db.reading() as session:
        game = session.get(Game, game_id)
        assert game is not None
        seat = game.to_act[0]
        state = game_states.state_at(session, game, game.version)
    move = RULES.notate(RULES.legal_moves(state, seat)[0])
    submit_move(referee, SubmitMove(game_id, KnownSeat(seat), move), wait=5)


def resign(referee: Referee, game_id: str, seat: int) -> None:
    submit_move(referee, SubmitMove(game_id, KnownSeat(seat), {"type": "resign"}), wait=5)


def section(page: str, heading: str) -> str:
    """The HTML of the page's section under the heading `heading`."""
    found = re.search(rf'<h2 id="{heading}-heading">(.*?)</section>', page, re.S)
    assert found is not None, heading
    return found.group(1)


def listed(html: str) -> list[str]:
    return re.findall(r'data-game="([0-9a-f]{32})"', html)


def text(html: str) -> str:
    inline = re.sub(r"</?bdi>", "", html)
    return " ".join(unescape(re.sub(r"<[^>]+>", " ", inline)).split())


def csrf_of(page: str) -> str:
    found = re.search(r'name="csrf" value="([^"]+)"', page)
    assert found is not None
    return found.group(1)


def test_a_browser_not_signed_in_is_sent_to_sign_in(app: Flask) -> None:
    stale = app.test_client()
    stale.set_cookie(PLAYER_COOKIE, "a-session-that-never-was")
    for browser in (app.test_client(), stale):
        answer = browser.get("/me")
        assert answer.status_code == 303
        assert answer.headers["Location"] == "/me/sign-in"
    # A form sent without a session (and so without its token) does nothing.
    assert stale.post("/me/tokens", data={"name": "x", "scope-read": "on"}).status_code == 403


def test_three_lists_in_order_each_row_opening_its_seat(app: Flask, referee: Referee) -> None:
    ann = "ann.lists@example.org"
    # Ann to act in two, the sooner deadline first; Bob to act in one; two finished.
    later = new_game(referee, [("Ann", ann), ("Bob", None)], deadline="72h")
    sooner = new_game(referee, [("Ann", "Ann.Lists@Example.org"), ("Bob", None)], deadline="3h")
    waiting = new_game(referee, [("Bob", None), ("Ann", ann)], deadline="24h")
    won = new_game(referee, [("Ann", ann), ("Cy", None)])
    resign(referee, won, 1)
    lost = new_game(referee, [("Dee", None), ("Ann", ann)])
    resign(referee, lost, 1)
    someone_elses = new_game(referee, [("Zelda", "zelda.lists@example.org"), ("Bob", None)])

    answer = signed_in(app, referee, ann).get("/me")
    assert answer.status_code == 200
    page = answer.get_data(as_text=True)
    assert "Content-Security-Policy" in answer.headers
    assert "Signed in as" in text(page) and ann in page
    assert page.index('id="turn-heading"') < page.index('id="waiting-heading"')
    assert page.index('id="waiting-heading"') < page.index('id="finished-heading"')
    turns, others, over = (section(page, name) for name in ("turn", "waiting", "finished"))
    assert listed(turns) == [sooner, later]
    assert listed(others) == [waiting]
    assert sorted(listed(over)) == sorted([won, lost])
    assert someone_elses not in page and "Zelda" not in page
    assert "Due in 3 hours" in text(turns) and "Due on " in text(turns)
    assert "with Bob" in text(turns)
    assert "Bob's turn" in text(others) and "due tomorrow at" in text(others)
    over_text = text(over)
    assert "You won Ann 0 · Cy 0" in over_text and "You lost Dee 0 · Ann 0" in over_text
    assert re.search(r"<title>Your turn \(2\) — My games", page)

    # Each row opens the seat's play-now link: a finished game's too, while its links
    # work (its page offers the rematch); one past that opens its page
    # (tests/http/test_players_review.py).
    secret = referee.secret()
    for game_id, seat in ((sooner, 0), (later, 0), (waiting, 1), (won, 0), (lost, 1)):
        assert f'href="/g/{game_id}/play/{keys.play_token(secret, game_id, seat)}"' in page
    # The page follows the player's events from the moment it was read.
    assert re.search(r'data-events="/v1/me/events\?since=[0-9]+"', page)


def test_a_game_moves_from_waiting_to_my_turn(app: Flask, referee: Referee) -> None:
    ann = "ann.moves@example.org"
    game_id = new_game(referee, [("Bob", None), ("Ann", ann)])
    browser = signed_in(app, referee, ann)
    page = browser.get("/me").get_data(as_text=True)
    assert listed(section(page, "waiting")) == [game_id] and listed(section(page, "turn")) == []
    assert "No time limit" not in section(page, "waiting")
    play(referee, game_id)
    page = browser.get("/me").get_data(as_text=True)
    assert listed(section(page, "turn")) == [game_id] and listed(section(page, "waiting")) == []
    assert "No time limit" in text(section(page, "turn"))


def test_empty_lists_say_what_to_do(app: Flask, referee: Referee) -> None:
    page = signed_in(app, referee, "nobody.yet@example.org").get("/me").get_data(as_text=True)
    said = text(page)
    assert "you hold no seat in any game yet" in said and "Start a game from the lobby" in said
    assert 'href="/"' in section(page, "turn")
    assert "No finished game yet" in said and "You have no token" in said
    for place in ("/me/settings", "/me/vacation", "#tokens"):
        assert f'href="{place}"' in page
    assert re.search(
        r'<form method="post" action="/me/sign-out"[^>]*>\s*<input type="hidden" name="csrf"', page
    )


def test_tokens_are_made_shown_once_listed_and_revoked(app: Flask, referee: Referee) -> None:
    browser = signed_in(app, referee, "ann.tokens@example.org")
    stranger = signed_in(app, referee, "bob.tokens@example.org")
    page = browser.get("/me").get_data(as_text=True)
    form = {"csrf": csrf_of(page), "name": "desk robot", "scope-read": "on", "scope-play": "on"}
    # Without the form's token, or from another site: refused.
    assert browser.post("/me/tokens", data={**form, "csrf": "forged"}).status_code == 403
    assert (
        browser.post(
            "/me/tokens", data=form, headers={"Origin": "https://evil.example"}
        ).status_code
        == 403
    )

    made = browser.post("/me/tokens", data=form)
    assert made.status_code == 201
    secrets = re.findall(r'value="(rp_[^"]+)"', made.get_data(as_text=True))
    assert len(secrets) == 1 and "shown only this once" in text(made.get_data(as_text=True))
    page = browser.get("/me").get_data(as_text=True)
    assert secrets[0] not in page
    tokens = section(page, "tokens")
    assert "desk robot" in tokens and "read, play" in tokens and "never" in tokens
    assert "desk robot" not in stranger.get("/me").get_data(as_text=True)

    for refused in ({"name": ""}, {"name": "x\u202ey"}, {"scope-read": "", "scope-play": ""}):
        wrong = {key: value for key, value in {**form, **refused}.items() if value}
        answer = browser.post("/me/tokens", data=wrong)
        assert answer.status_code == 422
        assert 'role="alert"' in answer.get_data(as_text=True)

    (token_id,) = re.findall(r'action="/me/tokens/([0-9]+)/revoke"', page)
    # Another player cannot revoke it, nor can a form without its token.
    assert (
        stranger.post(f"/me/tokens/{token_id}/revoke", data={"csrf": csrf_of(page)}).status_code
        == 403
    )
    own = csrf_of(stranger.get("/me").get_data(as_text=True))
    assert stranger.post(f"/me/tokens/{token_id}/revoke", data={"csrf": own}).status_code == 404
    revoked = browser.post(f"/me/tokens/{token_id}/revoke", data={"csrf": csrf_of(page)})
    assert revoked.status_code == 303 and revoked.headers["Location"] == "/me#tokens"
    assert "desk robot" not in section(browser.get("/me").get_data(as_text=True), "tokens")
    again = browser.post(f"/me/tokens/{token_id}/revoke", data={"csrf": csrf_of(page)})
    assert again.status_code == 404 and "no token with this id" in again.get_data(as_text=True)


def test_the_header_links_to_my_games(client: FlaskClient) -> None:
    assert '<a class="mine" href="/me">My games</a>' in client.get("/").get_data(as_text=True)


NOW = datetime(2026, 11, 27, 14, 20, tzinfo=UTC)


@pytest.mark.parametrize(
    ("due", "said"),
    [
        (None, "no time limit"),
        (NOW - timedelta(seconds=1), "overdue"),
        (NOW, "overdue"),
        (NOW + timedelta(seconds=20), "in under a minute"),
        (NOW + timedelta(minutes=1), "in 1 minute"),
        (NOW + timedelta(minutes=42), "in 42 minutes"),
        (NOW + timedelta(hours=2, minutes=59), "in 3 hours"),
        (NOW + timedelta(hours=1), "in 1 hour"),
        (NOW + timedelta(hours=9, minutes=10), "in 9 hours"),
        # Babel's English clock: a narrow no-break space before AM/PM.
        (datetime(2026, 11, 28, 7, 0, tzinfo=UTC), "tomorrow at 7:00\u202fAM UTC"),
        (datetime(2026, 12, 1, 9, 5, tzinfo=UTC), "on Tuesday at 9:05\u202fAM UTC"),
        (datetime(2026, 12, 24, 18, 0, tzinfo=UTC), "on Dec 24 at 6:00\u202fPM UTC"),
        (datetime(2027, 1, 9, 18, 0, tzinfo=UTC), "on Jan 9, 2027 at 6:00\u202fPM UTC"),
    ],
)
def test_deadlines_in_words(due: datetime | None, said: str) -> None:
    assert deadline_words(due, NOW) == said


def test_a_deadline_later_today_says_when() -> None:
    early = datetime(2026, 11, 27, 1, 0, tzinfo=UTC)
    assert deadline_words(early + timedelta(hours=21), early) == "today at 10:00\u202fPM UTC"


@pytest.mark.parametrize(
    ("due", "said"),
    [
        (NOW + timedelta(minutes=42), "dans 42 minutes"),
        (NOW + timedelta(hours=1), "dans 1 heure"),
        # 07:00 UTC is 08:00 in Paris in winter, and the zone is named.
        (datetime(2026, 11, 28, 7, 0, tzinfo=UTC), "demain à 08:00 CET"),
        (datetime(2026, 12, 1, 9, 5, tzinfo=UTC), "mardi à 10:05 CET"),
        (datetime(2026, 12, 24, 18, 0, tzinfo=UTC), "le 24 déc. à 19:00 CET"),
        # The day is Paris's: 23:30 UTC on the 28th is the 29th there.
        (datetime(2026, 11, 28, 23, 30, tzinfo=UTC), "dimanche à 00:30 CET"),
    ],
)
def test_deadlines_in_words_in_french_in_the_readers_zone(due: datetime, said: str) -> None:
    with speaking("fr", "Europe/Paris"):
        assert deadline_words(due, NOW) == said


def test_a_summer_deadline_in_paris_is_said_in_summer_time() -> None:
    summer = datetime(2027, 6, 10, 9, 0, tzinfo=UTC)
    with speaking("fr", "Europe/Paris"):
        assert deadline_words(summer + timedelta(days=1), summer) == "demain à 11:00 CEST"


def test_results_in_words() -> None:
    assert result_words({"scores": [3, 1], "winners": [0]}, [0]) == "You won"
    assert result_words({"scores": [3, 1], "winners": [0]}, [1]) == "You lost"
    assert result_words({"scores": [2, 2], "winners": [0, 1]}, [1]) == "Draw"
    assert result_words(None, [0]) == "Finished"
