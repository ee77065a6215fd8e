"""The pages of open games (`/seeks`, `/seeks/<id>`) and `/me`'s public name, open games
and blocks, through Flask's test client.

The app runs in-process on the embedded default (a SQLite file). A player is
an address seated once in a trusted game, signed in by a session opened in
the service (`open_session`) and set as its `player` cookie, as the sign-in
link does. Each test names players of its own; times shown are reckoned
from the suite's clock (`now`).
"""

from __future__ import annotations

import re
from dataclasses import replace
from datetime import datetime, timedelta
from html import unescape

import pytest
import time_machine
from flask import Flask
from flask.testing import FlaskClient
from sqlmodel import select

from api.http.player_auth import PLAYER_COOKIE
from api.pages.in_words import deadline_words
from referee.service import Referee, profiles
from referee.service.creating import NewGame, create_game
from referee.service.creating import Player as Seated
from referee.service.players import MANAGE, PLAY, READ, Player, open_session
from referee.service.seeks import NewSeek, SeekShown, get_seek, post_seek
from referee.settings import Settings
from referee.store import keys
from referee.store.clock import parse_stamp
from referee.store.tables import Seat

HOST = "http://localhost"


@pytest.fixture(scope="module")
def app_settings(app_settings: Settings) -> Settings:
    # The test client's pages are served from http://localhost: forms come from there.
    return replace(app_settings, public_url=HOST)


def players(referee: Referee, *names: str | None) -> list[Player]:
    """New players, seated once in a trusted game; each given its public name (None: none)."""
    made = [
        Player(f"{name or 'nameless'}.{n}@seeks.test".lower(), frozenset({READ, PLAY, MANAGE}))
        for n, name in enumerate(names)
    ]
    seated = [Seated(f"p{n}", email=player.address) for n, player in enumerate(made)]
    if len(seated) == 1:
        seated.append(Seated("p1"))  # a game of one is no game
    create_game(referee, NewGame("subdivision", seated, {}, trusted=True))
    for player, name in zip(made, names, strict=True):
        if name is not None:
            profiles.set_profile(referee, player, name)
    return made


def browser(app: Flask, referee: Referee, player: Player | None = None) -> FlaskClient:
    client = app.test_client()
    if player is not None:
        client.set_cookie(PLAYER_COOKIE, open_session(referee, player.address))
    return client


def text(html: str) -> str:
    """The words of the HTML as a reader reads them (inline markup drops out)."""
    inline = re.sub(r"</?(bdi|strong|time|a)\b[^>]*>", "", html)
    return " ".join(unescape(re.sub(r"<[^>]+>", " ", inline)).split())


def csrf_of(page: str) -> str:
    found = re.search(r'name="csrf" value="([^"]+)"', page)
    assert found is not None, page
    return found.group(1)


def listed(page: str) -> list[str]:
    return re.findall(r'data-seek="([0-9a-f]{32})"', page)


def row(page: str, seek_id: str) -> str:
    """The HTML of one open game's row in a list."""
    found = re.search(rf'data-seek="{seek_id}">(.*?)</li>', page, re.S)
    assert found is not None, seek_id
    return found.group(1)


def act(client: FlaskClient, seek_id: str, action: str) -> tuple[int, str]:
    """Press one of an open game's buttons (the form token read from `/me`, whose sign-out
    form every signed-in player has); the page shown after."""
    token = csrf_of(client.get("/me").text)
    answer = client.post(f"/seeks/{seek_id}/{action}", data={"csrf": token})
    if answer.status_code == 303:
        assert answer.headers["Location"] == f"/seeks/{seek_id}"
        return 303, client.get(answer.headers["Location"]).text
    return answer.status_code, answer.text


def test_the_list_says_each_open_game_in_words_and_filters_by_game(
    app: Flask, referee: Referee, now: datetime
) -> None:
    ann, bob = players(referee, "Ann List", "Bob List")
    with time_machine.travel(now - timedelta(hours=3, minutes=10), tick=False):
        older = post_seek(referee, ann, NewSeek("subdivision", deadline="72h"))
    newer = post_seek(
        referee,
        bob,
        NewSeek("mandala", min_players=2, max_players=4, rated=False, bots="greedy"),
    )

    page = browser(app, referee).get("/seeks")
    assert page.status_code == 200
    assert listed(page.text)[:2] == [newer.id, older.id]
    first = text(row(page.text, older.id))
    assert "Subdivision by Ann List" in first
    assert "2 players 1 of 2 seated 3 days per turn rated" in first
    assert "Seated: Ann List" in first and "Posted 3 hours ago" in first
    second = text(row(page.text, newer.id))
    assert "Mandala by Bob List" in second and "2 to 4 players" in second
    assert "1 of 4 seated · may start with 2" in second
    assert "no time limit not rated bots (greedy) may fill empty seats" in second
    assert "Posted just now" in second
    # A stranger is offered the sign-in page, not a button; no address is ever shown.
    assert 'href="/me/sign-in">Sign in to join</a>' in row(page.text, older.id)
    assert "/join" not in page.text
    assert "seeks.test" not in page.text
    assert 'href="/seeks/' + older.id + '"' in page.text

    mandala = browser(app, referee).get("/seeks?game=mandala").text
    assert newer.id in listed(mandala) and older.id not in listed(mandala)
    assert '<a href="/seeks?game=mandala" aria-current="page">Mandala</a>' in mandala
    assert browser(app, referee).get("/seeks?game=chess").status_code == 422

    # The lobby and every page's header lead here.
    lobby = browser(app, referee).get("/").text
    assert '<a href="/seeks">Open games</a>: join one' in lobby
    assert 'class="mine seeks-link" href="/seeks"' in lobby


def test_a_player_joins_by_the_form_and_the_game_starts_linking_each_seat(
    app: Flask, referee: Referee
) -> None:
    ann, bob = players(referee, "Ann Join", "Bob Join")
    seek = post_seek(referee, ann, NewSeek("subdivision"))
    bob_browser = browser(app, referee, bob)
    listing = bob_browser.get("/seeks").text
    assert f'action="/seeks/{seek.id}/join"' in row(listing, seek.id)

    status, page = act(bob_browser, seek.id, "join")
    assert status == 303
    started = get_seek(referee, seek.id, bob.address)
    assert started.status == "started" and started.game_id is not None
    game_id = started.game_id
    assert "This open game is started." in text(page)
    secret = referee.secret()
    with referee.db.reading() as session:
        found = session.exec(select(Seat).where(Seat.game_id == game_id))
        seats = {seat.email: seat.seat for seat in found}
    for player, client in ((bob, bob_browser), (ann, browser(app, referee, ann))):
        shown = client.get(f"/seeks/{seek.id}").text
        link = f"/g/{game_id}/play/{keys.play_token(secret, game_id, seats[player.address])}"
        assert f'<a href="{link}">open your seat</a>' in shown
    # Anyone else watches it.
    stranger = browser(app, referee).get(f"/seeks/{seek.id}").text
    assert f'<a href="/g/{game_id}">Watch the game</a>' in stranger and "/play/" not in stranger
    # A form sent without the form token does nothing.
    other = post_seek(referee, ann, NewSeek("subdivision"))
    assert bob_browser.post(f"/seeks/{other.id}/join", data={}).status_code == 403
    assert get_seek(referee, other.id, None).seated == ("Ann Join",)


def test_refusals_are_said_on_the_page_and_change_nothing(app: Flask, referee: Referee) -> None:
    ann, bob, cy = players(referee, "Ann Refused", "Bob Refused", None)
    seek = post_seek(referee, ann, NewSeek("subdivision", min_players=3, max_players=4))
    ann_browser, bob_browser = browser(app, referee, ann), browser(app, referee, bob)

    # Ann may neither start with herself alone (no button, and the form is refused) nor leave.
    own = ann_browser.get(f"/seeks/{seek.id}").text
    assert "/start" not in own and "/leave" not in own and f"/seeks/{seek.id}/withdraw" in own
    assert "It starts by itself once 4 are seated; you may start it with 3." in text(own)
    status, page = act(ann_browser, seek.id, "start")
    assert status == 409
    assert "1 seated: this open game starts with 3 at least." in text(page)
    status, page = act(ann_browser, seek.id, "leave")
    assert status == 409 and "You posted this open game: withdraw it" in text(page)

    assert act(bob_browser, seek.id, "join")[0] == 303
    status, page = act(bob_browser, seek.id, "join")
    assert status == 409 and "You sit at this open game already." in text(page)
    assert 'role="alert"' in page and "Leave this open game" in page

    # A player without a public name is told where to choose one; a join is refused.
    cy_browser = browser(app, referee, cy)
    cy_page = cy_browser.get(f"/seeks/{seek.id}").text
    assert 'href="/me#name">Choose a public name to join</a>' in cy_page
    assert "choose yours on your page" in text(cy_browser.get("/seeks").text)
    status, page = act(cy_browser, seek.id, "join")
    assert status == 409 and "Choose a public name first" in text(page)

    assert act(ann_browser, seek.id, "withdraw")[0] == 303
    status, page = act(bob_browser, seek.id, "leave")
    assert status == 409 and "This open game was withdrawn by the player who posted it." in text(
        page
    )
    after = get_seek(referee, seek.id, ann.address)
    assert after.status == "withdrawn" and after.seated == ("Ann Refused", "Bob Refused")
    assert "withdrawn by the player who posted it" in text(page)


def test_a_private_open_game_is_not_found_but_by_its_players(app: Flask, referee: Referee) -> None:
    ann, bob, cy = players(referee, "Ann Private", "Bob Private", "Cy Private")
    seek = post_seek(referee, ann, NewSeek("subdivision", invite=("Bob Private",)))
    for outsider in (None, cy):
        answer = browser(app, referee, outsider).get(f"/seeks/{seek.id}")
        assert answer.status_code == 404
        assert "Not found" in answer.text and "Ann Private" not in answer.text
        assert seek.id not in browser(app, referee, outsider).get("/seeks").text
    cy_browser = browser(app, referee, cy)
    assert act(cy_browser, seek.id, "join")[0] == 404
    own = browser(app, referee, ann).get(f"/seeks/{seek.id}").text
    assert "Invited: Bob Private" in text(own) and "private" in text(own)
    assert act(browser(app, referee, bob), seek.id, "join")[0] == 303


def test_the_form_posts_an_open_game_or_says_what_is_wrong(
    app: Flask, referee: Referee, now: datetime
) -> None:
    (ann, nameless) = players(referee, "Ann Poster", None)
    ann_browser = browser(app, referee, ann)
    form = {"game": "mandala", "min": "2", "max": "3", "deadline": "48h", "rated": "on"}
    token = csrf_of(ann_browser.get("/seeks").text)
    answer = ann_browser.post("/seeks", data={**form, "csrf": token})
    assert answer.status_code == 303
    seek_id = answer.headers["Location"].removeprefix("/seeks/")
    made = get_seek(referee, seek_id, ann.address)
    assert (made.game, made.min_players, made.max_players) == ("mandala", 2, 3)
    assert made.deadline_seconds == 48 * 3600 and made.rated and made.bots is None
    page = text(ann_browser.get(answer.headers["Location"]).text)
    assert "Mandala, posted by Ann Poster" in page and "2 days per turn" in page
    # Said as the page reads: its clock's narrow no-break space is a space.
    expires = " ".join(deadline_words(parse_stamp(made.expires_at), now).split())
    assert f"Posted just now · expires {expires}" in page

    wrong = {**form, "game": "subdivision", "min": "5", "max": "5", "csrf": token}
    refused = ann_browser.post("/seeks", data=wrong)
    assert refused.status_code == 422
    said = text(refused.text)
    assert "Players from 5 to 5: the game is played by 2, 3, 4 players." in said
    assert '<option value="subdivision" selected>' in refused.text
    assert '<option value="5" selected>' in refused.text

    # A player without a public name is sent to choose one; a form sent anyway is refused.
    nameless_browser = browser(app, referee, nameless)
    line = nameless_browser.get("/seeks").text
    assert 'id="needs-name"' in line and 'href="/me#name"' in line and 'name="invite"' not in line
    token = csrf_of(nameless_browser.get("/me").text)
    sent = nameless_browser.post("/seeks", data={**form, "csrf": token})
    assert sent.status_code == 409 and "Choose a public name first" in text(sent.text)


def test_me_sets_the_public_name_and_says_why_one_is_refused(app: Flask, referee: Referee) -> None:
    _taken, cy = players(referee, "Dee Taken", None)
    cy_browser = browser(app, referee, cy)
    page = cy_browser.get("/me").text
    assert "You have no public name yet" in text(page)
    token = csrf_of(page)
    refused = cy_browser.post("/me/name", data={"csrf": token, "name": "dee taken"})
    assert refused.status_code == 409
    assert "Another player is called 'dee taken' already." in text(refused.text)
    assert 'value="dee taken"' in refused.text and 'aria-invalid="true"' in refused.text
    bad = cy_browser.post("/me/name", data={"csrf": token, "name": "x"})
    assert bad.status_code == 422 and 'id="public-name-error"' in bad.text
    assert profiles.profile(referee, cy).name is None

    chosen = cy_browser.post("/me/name", data={"csrf": token, "name": "Cy Chosen"})
    assert chosen.status_code == 303 and chosen.headers["Location"] == "/me#name"
    assert "You are Cy Chosen." in text(cy_browser.get("/me").text)
    assert cy_browser.post("/me/name", data={"name": "Cy Again"}).status_code == 403


def test_me_lists_my_open_games_and_blocks_players(app: Flask, referee: Referee) -> None:
    ann, bob = players(referee, "Ann Blocks", "Bob Blocks")
    mine = post_seek(referee, ann, NewSeek("subdivision"))
    bobs = post_seek(referee, bob, NewSeek("subdivision"))
    ann_browser = browser(app, referee, ann)
    page = ann_browser.get("/me").text
    open_games = re.search(r'id="open-games"(.*?)</section>', page, re.S)
    assert open_games is not None
    assert listed(open_games.group(1)) == [mine.id]
    assert f'href="/seeks/{mine.id}"' in open_games.group(1)
    assert "posted by you" in text(open_games.group(1))
    assert "You block no one." in text(page)

    token = csrf_of(page)
    unknown = ann_browser.post("/me/blocks", data={"csrf": token, "name": "Nobody Here"})
    assert unknown.status_code == 404
    assert "No other player is called 'Nobody Here'." in text(unknown.text)
    blocked = ann_browser.post("/me/blocks", data={"csrf": token, "name": "bob blocks"})
    assert blocked.status_code == 303 and blocked.headers["Location"] == "/me#blocks"
    page = ann_browser.get("/me").text
    assert 'aria-label="Unblock Bob Blocks"' in page
    # Neither sees the other's open games now.
    assert bobs.id not in ann_browser.get("/seeks").text
    assert mine.id not in browser(app, referee, bob).get("/seeks").text
    assert browser(app, referee, bob).get(f"/seeks/{mine.id}").status_code == 404

    removed = ann_browser.post("/me/blocks/remove", data={"csrf": token, "name": "Bob Blocks"})
    assert removed.status_code == 303
    assert "You block no one." in text(ann_browser.get("/me").text)
    assert bobs.id in listed(ann_browser.get("/seeks").text)


def test_the_api_links_each_open_game_to_its_page(app: Flask, referee: Referee) -> None:
    (ann,) = players(referee, "Ann Linked")
    seek: SeekShown = post_seek(referee, ann, NewSeek("subdivision"))
    answer = browser(app, referee).get(f"/v1/seeks/{seek.id}")
    assert answer.json is not None and answer.json["link"] == f"/seeks/{seek.id}"
    assert browser(app, referee).get(answer.json["link"]).status_code == 200
