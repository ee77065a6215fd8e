"""The game pages through Flask's test client: every page and form, bad input, secrets.

The app runs in-process on the embedded default (a SQLite file, moves
decided eagerly). Each browser is its own test client with its own
cookies. A spectator's page is checked for what the rules hide: Ice
Palace hands, Mandala Stones objectives, sealed MaNiKi answers, the seed
before the end.
"""

from __future__ import annotations

import json
import logging
import re
from dataclasses import replace
from html import unescape
from typing import Any

import pytest
from flask import Flask
from flask.testing import FlaskClient
from sqlmodel import Session
from werkzeug.test import TestResponse

from api.pages import kit
from referee import games
from referee.games import AnyGame
from referee.service import Referee, game_states
from referee.settings import Settings
from referee.store import addresses, reads, rematches
from referee.store.db import Database
from referee.store.tables import Game

HOST = "http://localhost"


@pytest.fixture(scope="module")
def app_settings(app_settings: Settings) -> Settings:
    # The test client's pages are served from http://localhost: forms come from there.
    return replace(app_settings, public_url=HOST)


def browser(app: Flask) -> FlaskClient:
    return app.test_client()


def csrf_of(page: str) -> str:
    found = re.search(r'name="csrf" value="([^"]+)"', page)
    assert found is not None, page
    return found.group(1)


def message(page: str) -> str:
    """The text of the page's alerts."""
    found = re.findall(r'<(p|div)[^>]*role="alert"[^>]*>(.*?)</\1>', page, re.S)
    return unescape(" ".join(re.sub(r"<[^>]+>", " ", text) for _, text in found))


def create(
    app: Flask, game: str, names: list[str], **fields: str
) -> tuple[FlaskClient, TestResponse]:
    host = browser(app)
    token = csrf_of(host.get(f"/new/{game}").get_data(as_text=True))
    form = {"csrf": token, **{f"name-{n}": name for n, name in enumerate(names)}, **fields}
    return host, host.post(f"/new/{game}", data=form)


def links_of(page: str) -> list[str]:
    return re.findall(r'value="(http://localhost/g/[0-9a-f]{32}/seat/[^"]+)"', page)


def new_game(
    app: Flask, game: str, names: list[str], **fields: str
) -> tuple[str, FlaskClient, list[FlaskClient]]:
    """A game created in the lobby: its id, a spectator, and one browser per seat."""
    host, answer = create(app, game, names, **fields)
    assert answer.status_code == 201, message(answer.get_data(as_text=True))
    links = links_of(answer.get_data(as_text=True))
    assert len(links) == len(names)
    seats = []
    for link in links:
        seat = browser(app)
        assert seat.get(link.removeprefix(HOST)).status_code == 200
        seats.append(seat)
    return links[0].split("/")[4], host, seats


def page(client: FlaskClient, game_id: str, **args: Any) -> str:
    answer = client.get(f"/g/{game_id}", query_string=args)
    assert answer.status_code == 200
    return answer.get_data(as_text=True)


def database(app: Flask) -> Database:
    """The database of the app's referee."""
    referee: Referee = app.extensions["referee"]
    return referee.db


def play(client: FlaskClient, game_id: str, notation: str, **extra: str) -> TestResponse:
    # A spectator's game page has no form: this browser's token is on any page with one.
    token = csrf_of(client.get("/new/mandala").get_data(as_text=True))
    form = {"csrf": token, "notation": notation, **extra}
    return client.post(f"/g/{game_id}/move", data=form)


def stored(app: Flask, game_id: str) -> tuple[Game, AnyGame, Any]:
    with Session(database(app).engine) as session:
        game = session.get(Game, game_id)
        assert game is not None
        return game, reads.rules_of(game), game_states.state_at(session, game, game.version)


# -- the lobby and creating games --------------------------------------------------


def test_the_lobby_offers_every_game_and_lists_games(app: Flask) -> None:
    game_id, _, _ = new_game(app, "subdivision", ["Ann", "Bob"])
    lobby = browser(app).get("/")
    text = lobby.get_data(as_text=True)
    assert lobby.status_code == 200 and lobby.mimetype == "text/html"
    for rules in games.all_games():
        assert f'href="/new/{rules.name}"' in text and rules.title in text
    assert f'href="/g/{game_id}"' in text and "<bdi>Ann</bdi>, <bdi>Bob</bdi>" in text


@pytest.mark.parametrize("rules", games.all_games(), ids=games.names())
def test_the_new_game_form_shows_every_option_with_its_default(app: Flask, rules: AnyGame) -> None:
    text = browser(app).get(f"/new/{rules.name}").get_data(as_text=True)
    assert f"New {rules.title} game" in text
    for n in range(max(rules.players)):
        assert f'<label for="name-{n}">' in text and f'<label for="email-{n}">' in text
    defaults = rules.load_options({}, rules.players[0])
    for name, default in defaults.items():
        key = f"opt-{name}"
        assert f'name="{key}"' in text
        if isinstance(default, bool):
            checked = re.search(rf'name="{key}" value="on" checked', text) is not None
            assert checked == default, name
        elif isinstance(default, dict | list):
            shown = re.search(rf'<textarea id="{key}"[^>]*>(.*?)</textarea>', text, re.S)
            assert shown is not None and json.loads(unescape(shown.group(1))) == default, name
        elif re.search(rf'<select id="{key}"', text):
            assert re.search(rf'<option value="{re.escape(str(default))}" selected>', text), name
        else:
            assert re.search(rf'name="{key}"[^>]*value="{re.escape(str(default))}"', text), name
    # The defaults as the form shows them make a game.
    form = re.findall(r'<(?:input|textarea|select)[^>]*name="(opt-[^"]+)"', text)
    assert sorted(set(form)) == sorted(f"opt-{name}" for name in defaults)


def test_creating_shows_each_personal_link_once(app: Flask) -> None:
    host, answer = create(app, "mandala", ["Ann", "Bob", "Cy"], **{"email-1": "bob@example.org"})
    text = answer.get_data(as_text=True)
    assert answer.status_code == 201
    assert answer.headers["Cache-Control"] == "no-store"
    links = links_of(text)
    # Bob has a mail address: his link goes there, not to whoever made the game.
    assert len(links) == 2 and len(set(links)) == 2
    assert fates(text) == {0: "link", 1: "invited", 2: "link"}
    assert "Invited by mail: their personal link goes to their address once they accept" in text
    game_id = links[0].split("/")[4]
    for link in links:
        assert link.rsplit("/", 1)[1] not in page(host, game_id)
        assert link.rsplit("/", 1)[1] not in browser(app).get("/").get_data(as_text=True)


def fates(text: str) -> dict[int, str]:
    """What the game-ready page says happened to each seat."""
    found = re.findall(r'class="seat-fate[^"]*" data-seat="(\d+)" data-fate="(\w+)"', text)
    return {int(seat): fate for seat, fate in found}


def test_the_ready_page_says_what_happened_to_each_seat(app: Flask) -> None:
    """An address that accepted the referee's mail gets its link mailed at once, one that
    never answered is invited, one that stopped gets nothing; a bot needs no link."""
    with Session(database(app).engine) as session:
        for address, consents in (("keen@example.org", True), ("done@example.org", False)):
            addresses.ensure(session, b"s" * 32, address)
            known = addresses.find(session, address)
            assert known is not None
            if consents:
                addresses.accept(session, known)
            else:
                addresses.stop(session, known)
        session.commit()
    fields = {"email-0": "Keen@example.org", "email-1": "new@example.org"}
    _, answer = create(
        app,
        "mandala",
        ["Ann", "Bob", "Cy", "", ""],
        **fields,
        **{"email-2": "done@example.org", "bot-3": "random"},
    )
    text = answer.get_data(as_text=True)
    assert answer.status_code == 201, message(text)
    assert fates(text) == {0: "mailed", 1: "invited", 2: "stopped", 3: "bot"}
    assert "Accepted the referee's mail already: their personal link is mailed" in text
    assert links_of(text) == []


@pytest.mark.parametrize(
    ("game", "fields", "expected"),
    [
        ("mandala", {}, "played by 2, 3, 4, 5 players; you named 0"),
        ("mandala", {"name-0": "Ann"}, "you named 1"),
        ("mandala", {"name-0": "Ann", "email-1": "b@example.org"}, "Give this player a name"),
        ("mandala", {"name-0": "Ann", "name-1": "Bob", "email-1": "not mail"}, "email"),
        ("mandala", {"name-0": "A" * 101, "name-1": "Bob"}, "Length must be between"),
        ("subdivision", {"name-0": "A", "name-1": "B", "opt-parks": "lots"}, "Must be one of"),
        (
            "subdivision",
            {"name-0": "A", "name-1": "B", "opt-parks": "players", "opt-three_house": "on"},
            "cannot be shared evenly",
        ),
        (
            "mandala_stones",
            {"name-0": "A", "name-1": "B", "opt-objectives": "maybe"},
            "not valid JSON",
        ),
        ("mandala_stones", {"name-0": "A", "name-1": "B", "opt-objectives": '"on"'}, "objectives"),
        (
            "subdivision",
            {"name-0": "A", "name-1": "B", "opt-cells": "[[99, 99]]"},
            "cells[0]: Not a valid",
        ),
        ("mandala", {"name-0": "A", "name-1": "B", "bot-1": "genius"}, "not a bot level"),
        (
            "mandala",
            {"name-0": "A", "name-1": "B", "bot-1": "strong", "email-1": "b@example.com"},
            "a bot has no mail address",
        ),
        ("mandala", {"bot-0": "random", "bot-1": "strong"}, "one person at least"),
    ],
)
def test_bad_new_game_forms_say_what_is_wrong(
    app: Flask, game: str, fields: dict[str, str], expected: str
) -> None:
    host = browser(app)
    token = csrf_of(host.get(f"/new/{game}").get_data(as_text=True))
    with Session(database(app).engine) as session:
        before = len(reads.list_games(session, None, None, None, 1000))
    answer = host.post(f"/new/{game}", data={"csrf": token, **fields})
    assert answer.status_code == 422
    assert expected.lower() in message(answer.get_data(as_text=True)).lower()
    with Session(database(app).engine) as session:
        assert len(reads.list_games(session, None, None, None, 1000)) == before
    # What was typed stays in the form.
    for key, value in fields.items():
        if key.startswith(("name-", "email-")):
            assert f'value="{value}"' in answer.get_data(as_text=True)


def test_a_seat_chosen_as_a_bot_gets_no_link_and_is_shown_as_a_bot(app: Flask) -> None:
    _host, answer = create(app, "mandala", ["Ann"], **{"bot-1": "greedy"})
    assert answer.status_code == 201
    page = answer.get_data(as_text=True)
    assert len(links_of(page)) == 1 and "A bot (greedy) plays this seat" in page
    game_id = re.findall(r'href="/g/([0-9a-f]{32})"', page)[0]
    assert "Bot 2 (bot, greedy)" in browser(app).get(f"/g/{game_id}").get_data(as_text=True)


def test_unchecked_boxes_and_chosen_options_reach_the_game(app: Flask) -> None:
    game_id, _, _ = new_game(
        app, "subdivision", ["A", "B", "C"], **{"opt-three_house": "on", "opt-parks": "players"}
    )
    game, _, _ = stored(app, game_id)
    assert game.options["three_house"] is True and game.options["parks"] == "players"
    assert game.options["private_parks"] is False


def test_an_unknown_game_is_a_page_not_a_500(app: Flask) -> None:
    answer = browser(app).get("/new/chess")
    assert answer.status_code == 404 and answer.mimetype == "text/html"
    assert "no game called 'chess'" in message(answer.get_data(as_text=True))


def test_the_api_key_guards_the_lobby_too(app: Flask) -> None:
    app.config["REFEREE_API_KEY"] = "sesame"
    try:
        host = browser(app)
        form = host.get("/new/mandala").get_data(as_text=True)
        assert 'name="api_key"' in form
        base = {"csrf": csrf_of(form), "name-0": "A", "name-1": "B"}
        refused = host.post("/new/mandala", data={**base, "api_key": "guess"})
        assert refused.status_code == 422 and "API key" in message(refused.get_data(as_text=True))
        assert host.post("/new/mandala", data={**base, "api_key": "sesame"}).status_code == 201
    finally:
        app.config["REFEREE_API_KEY"] = None


# -- CSRF -----------------------------------------------------------------------------


def test_forms_without_the_browsers_token_are_refused(app: Flask) -> None:
    host = browser(app)
    token = csrf_of(host.get("/new/mandala").get_data(as_text=True))
    fields = {"name-0": "A", "name-1": "B"}
    for form, headers in [
        (fields, {}),
        ({**fields, "csrf": "x" * 32}, {}),
        ({**fields, "csrf": token}, {"Origin": "https://evil.example"}),
    ]:
        answer = host.post("/new/mandala", data=form, headers=headers)
        assert answer.status_code == 403 and answer.mimetype == "text/html"
    stranger = browser(app)  # has no csrf cookie at all
    answer = stranger.post("/new/mandala", data={**fields, "csrf": token})
    assert answer.status_code == 403
    same = host.post("/new/mandala", data={**fields, "csrf": token}, headers={"Origin": HOST})
    assert same.status_code == 201


def test_cookies_are_strict_and_pages_carry_safe_headers(app: Flask) -> None:
    _, answer = create(app, "mandala", ["Ann", "Bob"])
    link = links_of(answer.get_data(as_text=True))[0].removeprefix(HOST)
    game_id = link.split("/")[2]
    seat = browser(app)
    opened = seat.get(link)
    text = opened.get_data(as_text=True)
    assert opened.status_code == 200
    assert f'content="0;url=/g/{game_id}"' in text and f'href="/g/{game_id}"' in text
    assert link.rsplit("/", 1)[1] not in text
    assert opened.headers["Referrer-Policy"] == "no-referrer"
    (cookie,) = [c for c in opened.headers.getlist("Set-Cookie") if c.startswith("seat=")]
    for part in ("HttpOnly", "SameSite=Strict", f"Path=/g/{game_id}"):
        assert part in cookie
    shown = seat.get(f"/g/{game_id}")
    assert shown.headers["Cache-Control"] == "no-store"
    assert "script-src 'self'" in shown.headers["Content-Security-Policy"]
    (csrf_cookie,) = [c for c in shown.headers.getlist("Set-Cookie") if c.startswith("csrf=")]
    assert "HttpOnly" in csrf_cookie and "SameSite=Strict" in csrf_cookie
    body = shown.get_data(as_text=True)
    # Nothing is loaded from elsewhere: no fonts, CDNs or outside scripts.
    for address in re.findall(r'(?:src|href)="([^"]+)"', body):
        assert address.startswith(("/", "#")), address
    assert "You are <strong><bdi>Ann</bdi></strong>" in body


def test_a_wrong_personal_link_sets_nothing(app: Flask) -> None:
    game_id, _, _ = new_game(app, "mandala", ["Ann", "Bob"])
    for token in ("nope", "x" * 300):
        answer = browser(app).get(f"/g/{game_id}/seat/{token}")
        assert answer.status_code == 404 and answer.mimetype == "text/html"
        assert not answer.headers.getlist("Set-Cookie")
    assert browser(app).get(f"/g/{'0' * 32}/seat/abc").status_code == 404


def test_leaving_forgets_the_seat(app: Flask) -> None:
    game_id, _, (ann, _) = new_game(app, "mandala", ["Ann", "Bob"])
    token = csrf_of(page(ann, game_id))
    answer = ann.post(f"/g/{game_id}/leave", data={"csrf": token})
    assert answer.status_code == 303
    assert "You are watching" in page(ann, game_id)


# -- playing --------------------------------------------------------------------------


def acting(app: Flask, seats: list[FlaskClient], game_id: str) -> tuple[int, FlaskClient]:
    _, rules, state = stored(app, game_id)
    (seat,) = rules.actors(state)
    return seat, seats[seat]


def test_a_seat_sees_its_legal_moves_and_the_referees_answer(app: Flask) -> None:
    game_id, host, seats = new_game(app, "subdivision", ["Ann", "Bob"])
    number, seat = acting(app, seats, game_id)
    _, rules, state = stored(app, game_id)
    text = page(seat, game_id)
    legal = [rules.notate(m) for m in rules.legal_moves(state, number)]
    buttons = re.findall(r'name="notation" value="([^"]+)" class="move"', text)
    assert buttons == legal and "Your turn" in text
    assert 'name="notation"' not in page(host, game_id)
    assert 'name="notation"' not in page(seats[1 - number], game_id)
    answer = play(seat, game_id, legal[0], expected_version="0")
    assert answer.status_code == 303
    shown = seat.get(answer.headers["Location"]).get_data(as_text=True)
    assert f"<code>{legal[0]}</code> was accepted as move 1" in shown
    # Another browser following that address learns nothing about the submission.
    assert 'id="answer"' not in host.get(answer.headers["Location"]).get_data(as_text=True)
    assert 'id="answer"' not in seats[1 - number].get(answer.headers["Location"]).get_data(
        as_text=True
    )
    assert f"<code>{legal[0]}</code>" in page(host, game_id)  # the log


def refused(client: FlaskClient, answer: TestResponse, game_id: str, anchor: str) -> str:
    """The page a refused form leads to: a redirect after the POST (a reload never sends
    it again), whose page tells the refusal once."""
    assert answer.status_code == 303
    assert answer.headers["Location"] == f"/g/{game_id}#{anchor}"
    (cookie,) = [c for c in answer.headers.getlist("Set-Cookie") if c.startswith("refused=")]
    for part in ("HttpOnly", "SameSite=Strict", f"Path=/g/{game_id}"):
        assert part in cookie
    text = page(client, game_id)
    # Told once: the page as it is after a reload.
    assert 'id="message"' not in page(client, game_id)
    return text


@pytest.mark.parametrize(
    ("notation", "extra", "expected"),
    [
        ("", {}, "Type a move"),
        ("x" * 401, {}, "at most 400"),
        ("zzz", {}, "Your move “zzz” was not played: expected a size and a cell"),
        ("VALID", {"expected_version": "7"}, "not 7"),
    ],
)
def test_bad_moves_get_a_clear_message(
    app: Flask, notation: str, extra: dict[str, str], expected: str
) -> None:
    game_id, _, seats = new_game(app, "subdivision", ["Ann", "Bob"])
    number, seat = acting(app, seats, game_id)
    _, rules, state = stored(app, game_id)
    if notation == "VALID":
        notation = rules.notate(rules.legal_moves(state, number)[0])
    text = refused(seat, play(seat, game_id, notation, **extra), game_id, "your-move")
    assert expected in message(text)
    # The move's field is back, open, with what was typed and the refusal beside it.
    assert re.search(r'<details class="as-text" open data-keep="yes">', text)
    field = re.search(r'<input id="notation"[^>]*>', text)
    assert field is not None and 'aria-invalid="true"' in field.group(0)
    assert f'value="{notation[:400]}"' in field.group(0)
    assert stored(app, game_id)[0].version == 0


def test_a_damaged_form_is_answered_422_as_it_is(app: Flask) -> None:
    """Not a player's slip: a form no page sends (what a hostile client sends) is a 4xx."""
    game_id, _, seats = new_game(app, "subdivision", ["Ann", "Bob"])
    _, seat = acting(app, seats, game_id)
    answer = play(seat, game_id, "a1", expected_version="-1")
    assert answer.status_code == 422 and "damaged" in message(answer.get_data(as_text=True))
    assert stored(app, game_id)[0].version == 0


def test_a_forged_refusal_cookie_says_nothing(app: Flask) -> None:
    game_id, _, seats = new_game(app, "subdivision", ["Ann", "Bob"])
    _, seat = acting(app, seats, game_id)
    seat.set_cookie("refused", "WyJoaSIsICIiLCAibW92ZSJd.0123", path=f"/g/{game_id}")
    assert 'id="message"' not in page(seat, game_id)


def test_an_accepted_moves_banner_goes_with_the_next_move(app: Flask) -> None:
    game_id, _, seats = new_game(app, "subdivision", ["Ann", "Bob"])
    number, seat = acting(app, seats, game_id)
    _, rules, state = stored(app, game_id)
    answer = play(seat, game_id, rules.notate(rules.legal_moves(state, number)[0]))
    assert answer.status_code == 303
    assert 'id="answer"' in seat.get(answer.headers["Location"]).get_data(as_text=True)
    _, _, state = stored(app, game_id)
    assert play(seats[1 - number], game_id, rules.notate(rules.legal_moves(state, 1 - number)[0]))
    assert 'id="answer"' not in seat.get(answer.headers["Location"]).get_data(as_text=True)


def test_moves_out_of_turn_and_without_a_seat_are_refused(app: Flask) -> None:
    game_id, host, seats = new_game(app, "subdivision", ["Ann", "Bob"])
    number, _ = acting(app, seats, game_id)
    _, rules, state = stored(app, game_id)
    move = rules.notate(rules.legal_moves(state, number)[0])
    answer = play(seats[1 - number], game_id, move)
    assert "not your turn" in message(refused(seats[1 - number], answer, game_id, "your-move"))
    answer = play(host, game_id, move)
    assert "open your personal link" in message(refused(host, answer, game_id, "your-move"))
    assert browser(app).post(f"/g/{'f' * 32}/move", data={}).status_code == 403


def test_an_illegal_move_is_refused_with_the_rules_reason(app: Flask) -> None:
    game_id, _, seats = new_game(app, "mandala", ["Ann", "Bob"])
    _, seat = acting(app, seats, game_id)
    answer = play(seat, game_id, "take 0")
    if answer.status_code == 303:  # index 0 happened to be legal: take it again
        answer = play(seat, game_id, "take 0")
    text = answer.get_data(as_text=True)
    if answer.status_code == 303:
        text = seat.get(answer.headers["Location"]).get_data(as_text=True)
    assert "refused" in message(text) or "not your turn" in message(text)


def test_resigning_needs_the_box_ticked_and_then_ends_a_two_seat_game(app: Flask) -> None:
    game_id, host, (ann, bob) = new_game(app, "mandala", ["Ann", "Bob"])
    before = page(host, game_id)
    game, _, _ = stored(app, game_id)
    assert game.seed not in before and 'id="seed"' not in before
    unticked = ann.post(f"/g/{game_id}/resign", data={"csrf": csrf_of(page(ann, game_id))})
    assert "Tick the box" in message(refused(ann, unticked, game_id, "status"))
    ticked = ann.post(
        f"/g/{game_id}/resign", data={"csrf": csrf_of(page(ann, game_id)), "confirm": "yes"}
    )
    assert ticked.status_code == 303
    over = page(host, game_id)
    assert "finished" in over and "Won by <strong><bdi>Bob</bdi></strong>" in over
    assert "<td>resigned</td>" in over
    assert f'id="seed">{game.seed}<' in over
    assert "Resign" not in page(bob, game_id)


def breakdown_of(text: str) -> dict[str, tuple[list[tuple[str, str]], str]]:
    """The page's score breakdown: per seat's name, its (label, points) rows and total."""
    section = re.search(r'<section[^>]*id="breakdown".*?</section>', text, re.S)
    if section is None:
        return {}
    seats = {}
    for table in re.findall(r"<table.*?</table>", section.group(0), re.S):
        name = re.search(r"<caption><bdi>(.*?)</bdi>", table)
        total = re.search(r'class="num total">(-?\d+)<', table)
        assert name is not None and total is not None, table
        rows = re.findall(r'<tr><td>(.*?)</td><td class="num">(.*?)</td></tr>', table)
        seats[unescape(name.group(1))] = ([(unescape(a), b) for a, b in rows], total.group(1))
    return seats


def test_a_finished_game_shows_each_seats_score_as_the_rules_count_it(app: Flask) -> None:
    game_id, host, seats = new_game(app, "mandala", ["Ann", "Bob"])
    game, rules, state = stored(app, game_id)
    while rules.result(state) is None:
        assert breakdown_of(page(host, game_id)) == {}  # nothing before the end
        number, seat = acting(app, seats, game_id)
        farthest = rules.notate(rules.legal_moves(state, number)[-1])
        assert play(seat, game_id, farthest).status_code == 303
        game, rules, state = stored(app, game_id)
    result = rules.result(state)
    assert result is not None
    with Session(database(app).engine) as session:
        lines = rules.breakdown(*game_states.history(session, game))
    for viewer in (host, *seats):
        shown = breakdown_of(page(viewer, game_id))
        assert list(shown) == ["Ann", "Bob"]
        for seat, name in enumerate(["Ann", "Bob"]):
            rows, total = shown[name]
            assert total == str(result.scores[seat])
            assert rows == [(line.label, f"{line.points:+d}") for line in lines[seat]]
        assert f'id="seed">{game.seed}<' in page(viewer, game_id)
    # Looking back at a position before the end shows no breakdown.
    assert breakdown_of(page(host, game_id, at=game.version - 1)) == {}


def test_a_game_ended_by_resigning_shows_the_breakdown_with_the_resigned_seat(app: Flask) -> None:
    game_id, host, (ann, _) = new_game(app, "subdivision", ["Ann", "Bob"])
    ticked = ann.post(
        f"/g/{game_id}/resign", data={"csrf": csrf_of(page(ann, game_id)), "confirm": "yes"}
    )
    assert ticked.status_code == 303
    text = page(host, game_id)
    # Nothing was placed: each seat's table says so, and both total 0.
    assert breakdown_of(text) == {"Ann": ([], "0"), "Bob": ([], "0")}
    assert text.count("Nothing scored") == 2
    assert re.search(r"<caption><bdi>Ann</bdi> <span class=\"muted\">resigned", text)
    assert re.search(r'<caption><bdi>Bob</bdi> <span class="badge win">winner', text)


def test_history_steps_back_and_forth(app: Flask) -> None:
    game_id, host, seats = new_game(app, "subdivision", ["Ann", "Bob"])
    for _ in range(3):
        number, seat = acting(app, seats, game_id)
        _, rules, state = stored(app, game_id)
        assert play(seat, game_id, rules.notate(rules.legal_moves(state, number)[0])).status_code
    for at in range(4):
        text = page(host, game_id, at=at)
        where = re.search(r'id="where">([^<]+)<', text)
        assert where is not None
        assert where.group(1) == (f"After move {at} of 3" if at else "Start, before move 1 of 3")
        assert ('id="prev"' in text) == (at > 0) and ('id="next"' in text) == (at < 3)
        assert text.count('aria-current="step"') == 1
    assert "looking back in history" in page(host, game_id, at=1)
    number, seat = acting(app, seats, game_id)
    assert 'name="notation"' not in page(seat, game_id, at=1)
    for bad in ("abc", "-1", "4", "9" * 30):
        answer = host.get(f"/g/{game_id}", query_string={"at": bad})
        assert answer.status_code == 400 and answer.mimetype == "text/html"
        assert "move number from 0 to 3" in message(answer.get_data(as_text=True))


def test_unknown_games_are_pages(app: Flask) -> None:
    for path in (f"/g/{'0' * 32}", "/g/" + "x" * 40, f"/g/{'0' * 32}/seat/t"):
        answer = browser(app).get(path)
        assert answer.status_code == 404 and answer.mimetype == "text/html"


# -- what a spectator never sees ----------------------------------------------------


def test_a_spectator_never_sees_an_ice_palace_hand(app: Flask) -> None:
    game_id, host, seats = new_game(app, "ice_palace", ["Ann", "Bob", "Cy"])
    _, rules, state = stored(app, game_id)
    watched = page(host, game_id)
    assert 'data-place="hand"' not in watched and "(hidden)" in watched
    for number, seat in enumerate(seats):
        hand = rules.view(state, number)["hands"][number]
        shown = "hand: " + " ".join(hand)
        assert shown in page(seat, game_id)
        assert shown not in watched
        for other in seats:
            if other is not seat:
                assert shown not in page(other, game_id)


def test_a_spectator_never_sees_mandala_stones_objectives(app: Flask) -> None:
    game_id, host, seats = new_game(app, "mandala_stones", ["Ann", "Bob", "Cy"])
    _, rules, state = stored(app, game_id)
    watched = page(host, game_id)
    assert 'class="objective-card' not in watched and "objective-back" in watched
    for number, seat in enumerate(seats):
        cards = rules.view(state, number)["objectives"][number]
        assert cards, "the default options deal objectives"
        shown = "objectives: " + ", ".join(map(str, cards))
        assert shown in page(seat, game_id) and shown not in watched


def test_sealed_maniki_answers_stay_sealed(app: Flask) -> None:
    game_id, host, (ann, bob, cy) = new_game(
        app, "maniki", ["Ann", "Bob", "Cy"], **{"opt-mode": "sealed"}
    )
    answer = play(bob, game_id, "KI LO")
    assert answer.status_code == 303
    assert "<code>KI LO</code>" in bob.get(answer.headers["Location"]).get_data(as_text=True)
    for viewer in (host, ann, cy):
        text = page(viewer, game_id)
        assert "KI LO" not in text and "<em>sealed</em>" in text
        assert "answered (sealed)" in text
        assert '<th scope="col" class="num">Cards</th>' in text


# -- the picture endpoint and the logs --------------------------------------------------


def test_board_svg_is_the_callers_view(app: Flask) -> None:
    api = browser(app)
    created = api.post(
        "/v1/games", json={"game": "ice_palace", "players": [{"name": n} for n in "ABC"]}
    ).get_json()
    game_id, token = created["id"], created["seats"][0]["token"]
    watched = api.get(f"/v1/games/{game_id}/board.svg")
    assert watched.status_code == 200 and watched.mimetype == "image/svg+xml"
    assert b'data-place="hand"' not in watched.data
    mine = api.get(
        f"/v1/games/{game_id}/board.svg?at=0", headers={"Authorization": f"Bearer {token}"}
    )
    assert mine.status_code == 200 and b'data-place="hand"' in mine.data
    for path, headers, status in [
        (f"/v1/games/{game_id}/board.svg?at=1", {}, 404),
        (f"/v1/games/{game_id}/board.svg?at=x", {}, 422),
        (f"/v1/games/{game_id}/board.svg", {"Authorization": "Bearer nope"}, 401),
        (f"/v1/games/{'0' * 32}/board.svg", {}, 404),
    ]:
        answer = api.get(path, headers=headers)
        assert answer.status_code == status and answer.mimetype == "application/problem+json"


def test_access_logs_show_personal_links_without_their_token() -> None:
    record = logging.LogRecord(
        "werkzeug",
        logging.INFO,
        __file__,
        1,
        '"%s" %s',
        ("GET /g/abc/seat/s3cr3t HTTP/1.1", 200),
        None,
    )
    kit.RedactSeatLinks().filter(record)
    assert record.getMessage() == '"GET /g/abc/seat/<token> HTTP/1.1" 200'
    atoms = {
        "r": "GET /g/abc/seat/s3cr3t?x=1 HTTP/1.1",
        "f": "http://h/g/abc/seat/s3cr3t",
        "s": 200,
    }
    record = logging.LogRecord(
        "gunicorn.access", logging.INFO, __file__, 1, "%(r)s %(f)s", (), None
    )
    record.args = atoms
    kit.RedactSeatLinks().filter(record)
    assert "s3cr3t" not in record.getMessage()
    assert logging.getLogger("werkzeug").filters and logging.getLogger("gunicorn.access").filters


def test_a_time_per_turn_is_set_in_the_lobby_and_shown_with_its_deadline(app: Flask) -> None:
    game_id, host, _ = new_game(app, "mandala", ["Ann", "Bob"], deadline="72h", on_timeout="pass")
    game, _, _ = stored(app, game_id)
    assert (game.deadline_seconds, game.on_timeout) == (72 * 3600, "pass")
    shown = re.search(r'id="deadline">(.*?)</p>', page(host, game_id), re.S)
    assert shown is not None
    assert "3 days per turn" in shown.group(1) and "the referee passes for them" in shown.group(1)
    untimed, _, _ = new_game(app, "mandala", ["Ann", "Bob"])
    assert 'id="deadline"' not in page(host, untimed)
    for fields, expected in [
        ({"deadline": "soon"}, "Time per turn"),
        ({"deadline": "1s"}, "Time per turn"),
        ({"on_timeout": "explode"}, "time runs out"),
    ]:
        _, answer = create(app, "mandala", ["Ann", "Bob"], **fields)
        assert answer.status_code == 422
        assert expected in message(answer.get_data(as_text=True))


def status_of_page(text: str) -> str:
    found = re.search(r'<p class="status" id="status">(.*?)</p>', text, re.S)
    assert found is not None
    return unescape(" ".join(re.sub(r"<[^>]+>", " ", found.group(1)).split()))


def title_of(text: str) -> str:
    found = re.search(r"<title>(.*?)</title>", text, re.S)
    assert found is not None
    return unescape(found.group(1))


def test_the_title_and_the_badge_say_whose_turn_and_when_without_script(app: Flask) -> None:
    game_id, host, seats = new_game(app, "mandala", ["Ann", "Bob"])
    number, seat = acting(app, seats, game_id)
    assert title_of(page(seat, game_id)).startswith("Your turn — Mandala")
    assert not title_of(page(seats[1 - number], game_id)).startswith("Your turn")
    assert not title_of(page(host, game_id)).startswith("Your turn")
    _, rules, state = stored(app, game_id)
    assert play(seat, game_id, rules.notate(rules.legal_moves(state, number)[0])).status_code == 303
    # Looking back is told apart from the present, in play and once finished.
    back = page(seats[number ^ 1], game_id, at=0)
    assert not title_of(back).startswith("Your turn")
    assert status_of_page(back).startswith("looking back The start, before move 1 of 1;")
    assert "still in play" in status_of_page(back)
    resigned = seats[0].post(
        f"/g/{game_id}/resign", data={"csrf": csrf_of(page(seats[0], game_id)), "confirm": "yes"}
    )
    assert resigned.status_code == 303
    finished = status_of_page(page(host, game_id, at=1))
    assert finished.startswith("looking back Move 1 of 2; the game is finished .")
    assert "in play" not in finished
    assert status_of_page(page(host, game_id)).startswith("finished Won by")


def test_the_favicon_is_found_where_browsers_look(app: Flask) -> None:
    client = browser(app)
    asked = client.get("/favicon.ico")
    assert asked.status_code == 301 and asked.headers["Location"] == "assets/favicon.svg"
    icon = client.get("/assets/favicon.svg")
    assert icon.status_code == 200 and icon.mimetype == "image/svg+xml"
    assert 'rel="icon" href="/assets/favicon.svg"' in client.get("/").get_data(as_text=True)


# -- building a move on the board ---------------------------------------------------


def test_a_move_is_built_step_by_step_and_refused_steps_say_why(app: Flask) -> None:
    game_id, _, (ann, bob) = new_game(app, "subdivision", ["Ann", "Bob"])
    first = page(ann, game_id)
    assert 'id="builder"' in first and 'role="button"' in first
    assert 'id="builder"' not in page(bob, game_id)  # not Bob's turn: nothing to build
    answer = ann.get(f"/g/{game_id}/build")
    assert answer.status_code == 200
    built = answer.get_json()
    assert built["steps"] == [] and built["notation"] is None
    cells = re.findall(r'data-step="([a-h][1-8])"', built["svg"])
    assert cells and built["prompt"] == "Choose a cell"
    answer = ann.get(f"/g/{game_id}/build", query_string={"step": cells[0]})
    built = answer.get_json()
    assert built["steps"] == [cells[0]]
    sizes = re.findall(r'data-step="([123])"', built["svg"])
    if sizes:
        built = ann.get(
            f"/g/{game_id}/build", query_string=[("step", cells[0]), ("step", sizes[0])]
        ).get_json()
    assert built["notation"].endswith(cells[0])
    assert 'data-step="' not in built["svg"]  # a whole placement: nothing more to click
    # Nothing was stored by building: the move is sent like any other.
    assert stored(app, game_id)[0].version == 0
    assert play(ann, game_id, built["notation"]).status_code == 303
    assert stored(app, game_id)[0].version == 1


@pytest.mark.parametrize(
    ("who", "steps", "status", "code"),
    [
        ("ann", ["z9"], 422, "bad_step"),
        ("ann", ["a1"] * 65, 422, "bad_request"),
        ("ann", ["x" * 25], 422, "bad_request"),
        ("bob", [], 409, "not_your_turn"),
        ("host", [], 401, "unauthorized"),
    ],
)
def test_building_refuses_clearly_and_changes_nothing(
    app: Flask, who: str, steps: list[str], status: int, code: str
) -> None:
    game_id, host, (ann, bob) = new_game(app, "subdivision", ["Ann", "Bob"])
    client = {"ann": ann, "bob": bob, "host": host}[who]
    answer = client.get(f"/g/{game_id}/build", query_string=[("step", s) for s in steps])
    assert answer.status_code == status
    assert answer.mimetype == "application/problem+json"
    assert answer.get_json()["code"] == code
    assert stored(app, game_id)[0].version == 0


def test_building_in_an_unknown_or_finished_game_is_refused(app: Flask) -> None:
    answer = browser(app).get(f"/g/{'0' * 32}/build")
    assert (answer.status_code, answer.get_json()["code"]) == (404, "not_found")
    game_id, _, (ann, bob) = new_game(app, "subdivision", ["Ann", "Bob"])
    token = csrf_of(page(ann, game_id))
    ann.post(f"/g/{game_id}/resign", data={"csrf": token, "confirm": "yes"})
    answer = bob.get(f"/g/{game_id}/build")
    assert (answer.status_code, answer.get_json()["code"]) == (409, "game_over")


# -- rematch -----------------------------------------------------------------------


def rematch_id_of(app: Flask, game_id: str) -> str | None:
    with Session(database(app).engine) as db:
        return rematches.rematch_id(db, game_id)


def test_a_rematch_starts_when_every_seat_accepts_on_the_page(app: Flask) -> None:
    game_id, host, (ann, bob) = new_game(app, "mandala", ["Ann", "Bob"])
    assert 'id="rematch"' not in page(ann, game_id)  # not while the game runs
    refused = ann.post(f"/g/{game_id}/rematch", data={"csrf": csrf_of(page(ann, game_id))})
    assert refused.status_code == 409
    ann.post(f"/g/{game_id}/resign", data={"csrf": csrf_of(page(ann, game_id)), "confirm": "yes"})
    old, _, _ = stored(app, game_id)
    assert old.status == "over"

    seen = page(ann, game_id)
    assert 'id="rematch-accept"' in seen and "Waiting for: <bdi>Ann</bdi>, <bdi>Bob</bdi>" in seen
    # Where the rematch stands, as the seat's stream tells it (the page refetches on a change).
    assert 'data-rematch=""' in seen
    assert 'id="rematch-accept"' not in page(host, game_id)  # a spectator only watches
    assert ann.post(f"/g/{game_id}/rematch", data={"csrf": csrf_of(seen)}).status_code == 303
    seen = page(ann, game_id)
    assert 'id="rematch-mine"' in seen and "Waiting for: <bdi>Bob</bdi>" in seen
    assert 'data-rematch="0"' in seen
    assert rematch_id_of(app, game_id) is None

    # Bob accepts last: the rematch starts and his browser goes straight to his seat in it.
    answer = bob.post(f"/g/{game_id}/rematch", data={"csrf": csrf_of(page(bob, game_id))})
    assert answer.headers["Location"] == f"/g/{game_id}/rematch"
    answer = bob.get(answer.headers["Location"])
    new_id = rematch_id_of(app, game_id)
    assert new_id is not None and answer.headers["Location"] == f"/g/{new_id}"
    assert "You are <strong><bdi>Bob</bdi></strong>" in page(bob, new_id)
    new, _, _ = stored(app, new_id)
    assert (new.name, new.options, new.status) == (old.name, old.options, "active")
    assert new.seed_commitment != old.seed_commitment
    with Session(database(app).engine) as db:
        assert [s.name for s in reads.seats(db, new_id)] == ["Ann", "Bob"]

    # Ann's browser finds the rematch on the old page, and her seat in it.
    assert 'id="rematch-open"' in page(ann, game_id)
    assert f'data-rematch="0,1;{new_id}"' in page(ann, game_id)
    assert ann.get(f"/g/{game_id}/rematch").headers["Location"] == f"/g/{new_id}"
    assert "You are <strong><bdi>Ann</bdi></strong>" in page(ann, new_id)
    assert f'href="/g/{new_id}"' in page(host, game_id)  # "Watch the rematch"
    # Accepting again changes nothing: one rematch only.
    ann.post(f"/g/{game_id}/rematch", data={"csrf": csrf_of(page(ann, game_id))})
    assert rematch_id_of(app, game_id) == new_id


def test_a_rematch_needs_a_seat_of_the_game(app: Flask) -> None:
    game_id, host, (ann, _) = new_game(app, "subdivision", ["Ann", "Bob"])
    ann.post(f"/g/{game_id}/resign", data={"csrf": csrf_of(page(ann, game_id)), "confirm": "yes"})
    token = csrf_of(host.get("/new/mandala").get_data(as_text=True))
    answer = host.post(f"/g/{game_id}/rematch", data={"csrf": token})
    assert answer.status_code == 401
    assert host.get(f"/g/{game_id}/rematch").status_code == 401
    assert ann.get(f"/g/{game_id}/rematch").status_code == 404  # no rematch yet


def test_a_move_is_built_in_the_page_language_with_its_steps_unchanged(app: Flask) -> None:
    game_id, _, (ann, _bob) = new_game(app, "subdivision", ["Ann", "Bob"])
    french = ann.get(f"/g/{game_id}/build", headers={"Accept-Language": "fr"}).get_json()
    english = ann.get(f"/g/{game_id}/build", headers={"Accept-Language": "en"}).get_json()
    assert french["prompt"] == "Choisissez une case" and english["prompt"] == "Choose a cell"
    steps = re.findall(r'data-step="([a-h][1-8])"', french["svg"])
    assert steps == re.findall(r'data-step="([a-h][1-8])"', english["svg"])
    assert 'aria-label="Poser une' in french["svg"] or 'aria-label="Construire en' in french["svg"]
