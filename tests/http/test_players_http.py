"""Profiles and leaderboards over HTTP and as pages: `/v1/players/{name}`, `/p/<name>`,
`/v1/ratings/{game}`, `/ratings/<game>` (shapes, 404s and 422s, pages of 50, a chart on
the profile, never an address); ratings and the rating range on open games (409
`rating_out_of_range`, changing nothing); names linking profiles on the game page and
on `/me`, a seat without a public name left as plain text.

In-process (the `app` of tests/fixtures.py on a SQLite file). Ratings and finished
games are rows written straight into the store (`tests/rating_rows.py`).
"""

from __future__ import annotations

import itertools
import re
import secrets
from dataclasses import replace
from datetime import UTC, datetime, timedelta
from typing import Any
from urllib.parse import quote

import pytest
from flask import Flask
from flask.testing import FlaskClient
from sqlalchemy import text
from sqlmodel import SQLModel

from api.http.player_auth import PLAYER_COOKIE
from referee.ratings import Skill, shown
from referee.service import Referee, profiles
from referee.service.creating import NewGame, create_game
from referee.service.creating import Player as Seated
from referee.service.players import MANAGE, PLAY, READ, Player, open_session
from referee.service.seeks import NewSeek, post_seek
from referee.settings import Settings
from referee.store.clock import stamp
from referee.store.tables import Address, Rating
from tests import rating_rows

HOST = "http://localhost"
DOMAIN = "players.test"
T0 = datetime(2026, 2, 1, 9, tzinfo=UTC)
_numbers = itertools.count()


@pytest.fixture(scope="module")
def app_settings(app_settings: Settings) -> Settings:
    return replace(app_settings, public_url=HOST)


def named(referee: Referee, name: str | None) -> Player:
    """A new player, seated once by a trusted client, with the public name `name`
    (made unique; None: none)."""
    number = next(_numbers)
    who = Player(f"p{number}@{DOMAIN}", frozenset({READ, PLAY, MANAGE}))
    create_game(
        referee,
        NewGame("subdivision", [Seated("Me", email=who.address), Seated("Them")], {}, trusted=True),
    )
    if name is not None:
        profiles.set_profile(referee, who, f"{name} {number}")
    return who


def name_of(referee: Referee, who: Player) -> str:
    found = profiles.profile(referee, who).name
    assert found is not None
    return found


def browser(app: Flask, referee: Referee, who: Player | None = None) -> FlaskClient:
    client = app.test_client()
    if who is not None:
        client.set_cookie(PLAYER_COOKIE, open_session(referee, who.address))
    return client


def problem(answer: Any, status: int, code: str) -> None:
    assert answer.status_code == status, answer.get_data(as_text=True)
    assert answer.mimetype == "application/problem+json"
    assert answer.get_json()["code"] == code


def counts(referee: Referee) -> dict[str, int]:
    with referee.db.engine.connect() as connection:
        return {
            table: connection.execute(text(f"SELECT count(*) FROM {table}")).scalar_one()
            for table in SQLModel.metadata.tables
            if table not in ("player_token", "address", "player_session")
        }


def test_a_profile_answers_its_shape_and_shows_a_chart_without_any_address(
    app: Flask, referee: Referee
) -> None:
    ann, bob = named(referee, "Ann"), named(referee, "Bob")
    skills = [(25.0 + n * 0.4, 8.0 - n * 0.3) for n in range(20)]
    with referee.db.transaction() as session:
        rating_rows.rated(session, ann.address, "subdivision", skills, T0, wins=11)
        rating_rows.rated(session, ann.address, "mandala", [(26.0, 7.5)], T0)
        over = rating_rows.game(
            session,
            [ann.address, bob.address],
            T0,
            result={"scores": [7, 3], "winners": [0]},
            finished=T0 + timedelta(days=30),
        )
        rating_rows.move(session, over, 1, 0, T0 + timedelta(hours=5))
        since = session.get(Address, ann.address)
    assert since is not None
    name = name_of(referee, ann)
    answer = app.test_client().get(f"/v1/players/{quote(name.upper())}")
    assert answer.status_code == 200, answer.get_data(as_text=True)
    body = answer.get_json()
    last = shown(Skill(*skills[-1]))
    assert body == {
        "name": name,
        "since": since.created_at,
        "ratings": {
            "mandala": {
                "rating": shown(Skill(26.0, 7.5)).rating,
                "deviation": shown(Skill(26.0, 7.5)).deviation,
                "games": 1,
                "wins": 0,
                "provisional": True,
            },
            "subdivision": {
                "rating": last.rating,
                "deviation": last.deviation,
                "games": 20,
                "wins": 11,
                "provisional": False,
            },
        },
        "stats": {
            "games_finished": 1,
            "games_active": 1,
            "timeouts": 0,
            "resigned": 0,
            "median_response_hours": 5.0,
        },
        "recent": [
            {
                "id": over,
                "game": "subdivision",
                "result": "won",
                "place": 1,
                "players": 2,
                "finished_at": stamp(T0 + timedelta(days=30)),
            }
        ],
    }
    assert DOMAIN not in answer.get_data(as_text=True)

    page = app.test_client().get(f"/p/{quote(name)}")
    assert page.status_code == 200
    html = page.text
    assert DOMAIN not in html and "<script" not in html.split("</head>")[1]
    charts = re.findall(r"<svg .*?</svg>", html, re.S)
    assert len(charts) == 2
    assert sorted(chart.count("<circle") for chart in charts) == [1, 20]
    assert f'<strong class="rating">{last.rating}</strong>' in html
    assert "provisional" in html
    assert f'href="/g/{over}"' in html and "5 hours" in html
    assert 'href="/ratings/subdivision"' in html


@pytest.mark.parametrize("name", ["Nobody Here", f"p0@{DOMAIN}", "x" * 150])
def test_an_unknown_player_is_404_as_an_answer_and_a_page(
    app: Flask, referee: Referee, name: str
) -> None:
    named(referee, None)  # a player without a public name has no profile either
    client = app.test_client()
    problem(client.get(f"/v1/players/{quote(name)}"), 404, "not_found")
    page = client.get(f"/p/{quote(name)}")
    assert page.status_code == 404 and page.mimetype == "text/html"


def _many(referee: Referee, game: str, count: int) -> list[str]:
    """`count` named players rated at `game`, with distinct ratings, best first."""
    made = []
    with referee.db.transaction() as session:
        for n in range(count):
            number = next(_numbers)
            name = f"Many {number}"
            session.add(
                Address(
                    address=f"many{number}@{DOMAIN}",
                    accept_token=secrets.token_hex(16),
                    stop_token=secrets.token_hex(16),
                    created_at=stamp(T0),
                    public_name=name,
                    name_key=name.casefold(),
                )
            )
            session.add(
                Rating(
                    address=f"many{number}@{DOMAIN}",
                    game=game,
                    mu=40.0 - n * 0.1,
                    sigma=2.0,
                    games=12,
                    wins=n % 7,
                    last_seq=0,
                )
            )
            made.append(name)
    return made


def test_a_leaderboard_pages_by_rating_as_an_answer_and_a_page(
    app: Flask, referee: Referee
) -> None:
    names = _many(referee, "maniki", 55)
    client = app.test_client()
    first = client.get("/v1/ratings/maniki")
    assert first.status_code == 200
    body = first.get_json()
    assert body["game"] == "maniki" and len(body["players"]) == 50
    assert body["players"][0] == {
        "place": 1,
        "name": names[0],
        "rating": shown(Skill(40.0, 2.0)).rating,
        "deviation": shown(Skill(40.0, 2.0)).deviation,
        "games": 12,
        "wins": 0,
        "provisional": False,
    }
    rest = client.get(f"/v1/ratings/maniki?cursor={body['next_cursor']}").get_json()
    assert rest["next_cursor"] is None
    listed = [p["name"] for p in body["players"] + rest["players"]]
    assert listed == names
    assert [p["place"] for p in rest["players"]] == list(range(51, 56))
    assert DOMAIN not in first.get_data(as_text=True) + str(rest)
    assert len(client.get("/v1/ratings/maniki?limit=7").get_json()["players"]) == 7

    problem(client.get("/v1/ratings/chess"), 422, "unknown_game")
    problem(client.get("/v1/ratings/maniki?cursor=nonsense"), 422, "bad_request")
    problem(client.get("/v1/ratings/maniki?limit=101"), 422, "bad_request")

    page = client.get("/ratings/maniki")
    assert page.status_code == 200 and DOMAIN not in page.text
    rows = re.findall(r'<a class="player" href="/p/([^"]+)"><bdi>([^<]+)</bdi></a>', page.text)
    assert [(link, name) for link, name in rows] == [(quote(n), n) for n in names[:50]]
    following = re.search(r'href="(/ratings/maniki\?cursor=[^"]+)" rel="next"', page.text)
    assert following is not None
    second = client.get(following.group(1).replace("&amp;", "&")).text
    assert len(re.findall(r'class="player"', second)) == 5 and 'rel="next"' not in second
    # Each name leads to that player's page.
    assert client.get(f"/p/{rows[0][0]}").status_code == 200
    assert client.get("/ratings/chess").status_code == 422
    assert "Choose a game" in client.get("/ratings").text


def test_seeks_show_ratings_and_a_join_out_of_range_is_409_changing_nothing(
    app: Flask, referee: Referee
) -> None:
    ann, bob = named(referee, "Seeker"), named(referee, "Joiner")
    with referee.db.transaction() as session:
        rating_rows.rated(session, ann.address, "mandala_stones", [(30.0, 2.0)], T0)
    anns = browser(app, referee, ann)
    token = anns.post("/v1/me/tokens", json={"name": "t", "scopes": ["read", "play"]})
    posted = anns.post(
        "/v1/seeks",
        json={"game": "mandala_stones", "rating": {"min": 1600}},
        headers={"Authorization": f"Bearer {token.get_json()['token']}"},
    )
    assert posted.status_code == 201, posted.get_data(as_text=True)
    seek = posted.get_json()
    rating = shown(Skill(30.0, 2.0))
    by = {"name": name_of(referee, ann), "rating": rating.rating, "provisional": False}
    assert seek["by"] == by
    assert seek["rating"] == {"min": 1600, "max": None}

    bobs = browser(app, referee, bob)
    before = counts(referee)
    refused = bobs.post(f"/v1/seeks/{seek['id']}/join")
    problem(refused, 409, "rating_out_of_range")
    assert "1500" in refused.get_json()["detail"]
    assert counts(referee) == before
    problem(
        anns.post(
            "/v1/seeks",
            json={"game": "mandala_stones", "rating": {"min": 1700, "max": 1600}},
        ),
        422,
        "bad_request",
    )

    page = app.test_client().get(f"/seeks/{seek['id']}").text
    assert "ratings from 1600" in page and DOMAIN not in page
    link = f'<a class="player" href="/p/{quote(name_of(referee, ann))}">'
    said = f'<bdi>{name_of(referee, ann)}</bdi></a> <span class="muted rating">({rating.rating})'
    assert link + said in page
    listing = app.test_client().get("/seeks?game=mandala_stones").text
    assert link in listing
    # The page's form says it to the player who joins: nothing changed.
    csrf = re.search(r'name="csrf" value="([^"]+)"', bobs.get("/me").text)
    assert csrf is not None
    said = bobs.post(f"/seeks/{seek['id']}/join", data={"csrf": csrf.group(1)})
    assert said.status_code == 409 and "asks for a rating of 1600 at least" in said.text
    assert counts(referee) == before


def test_the_seek_form_takes_a_rating_range(app: Flask, referee: Referee) -> None:
    ann = named(referee, "Former")
    client = browser(app, referee, ann)
    csrf = re.search(r'name="csrf" value="([^"]+)"', client.get("/seeks").text)
    assert csrf is not None
    form = {"csrf": csrf.group(1), "game": "subdivision", "rated": "on"}
    answer = client.post("/seeks", data={**form, "rating_min": "1400", "rating_max": "1650"})
    assert answer.status_code == 303, answer.text
    assert "ratings 1400 to 1650" in client.get(answer.headers["Location"]).text
    refused = client.post("/seeks", data={**form, "rating_min": "lots"})
    assert refused.status_code == 422
    assert "A rating bound is a number from 0 to 4000" in refused.text
    assert 'value="lots"' in refused.text


def test_game_pages_and_me_link_named_players_only(app: Flask, referee: Referee) -> None:
    ann, nameless = named(referee, "Linked"), named(referee, None)
    seats = [
        Seated("Ann at the table", email=ann.address),
        Seated("Nameless one", email=nameless.address.upper()),
        Seated("Robot", bot="greedy"),
    ]
    made = create_game(referee, NewGame("ice_palace", seats, {}, trusted=True))
    page = app.test_client().get(f"/g/{made.game.id}").text
    profile = quote(name_of(referee, ann))
    assert f'<a class="player" href="/p/{profile}"><bdi>Ann at the table</bdi></a>' in page
    assert "<bdi>Nameless one</bdi>" in page
    assert page.count('class="player"') == 1 and DOMAIN not in page.lower()

    mine = browser(app, referee, nameless).get("/me").text
    assert f'<a class="player" href="/p/{profile}"><bdi>Ann at the table</bdi></a>' in mine
    theirs = browser(app, referee, ann).get("/me").text
    assert "<bdi>Nameless one</bdi>" in theirs and "/p/None" not in theirs
    # Open games on /me link their poster too.
    post_seek(referee, ann, NewSeek("subdivision"))
    own = browser(app, referee, ann).get("/me").text
    assert f'by <a class="player" href="/p/{profile}">' in own


def test_the_document_gives_each_games_seek_its_rating_range(app: Flask) -> None:
    schemas = app.test_client().get("/openapi.json").get_json()["components"]["schemas"]
    for game in ("NewManikiSeek", "NewIcePalaceSeek", "NewSubdivisionSeek"):
        bounds = schemas[game]["properties"]["rating"]["properties"]
        assert bounds["min"]["maximum"] == bounds["max"]["maximum"] == 4000
        assert bounds["min"]["nullable"] and bounds["max"]["minimum"] == 0
