"""`/v1/seeks`, `/v1/me/profile`, `/v1/me/blocks` and `/v1/me/standing-seeks` over HTTP,
with player tokens and signed-in browsers: the answers' shapes, every refusal's status and
code (each changing nothing), who may ask (401, 403), what is hidden (404), the per-player
rate limit (429 with Retry-After), and a player noted as seen when it uses a credential.

In-process (the `app` of tests/fixtures.py on a SQLite file). Each test names players
of its own, so that one test's counts (open seeks, the rate limit) are not another's.
"""

from __future__ import annotations

import itertools
import time
from dataclasses import dataclass, replace
from datetime import UTC, datetime, timedelta
from functools import partial
from typing import Any

import pytest
from flask import Flask
from flask.testing import FlaskClient
from sqlalchemy import text
from sqlmodel import select

from referee.service import Referee
from referee.service.creating import NewGame, Player, create_game
from referee.service.players import open_session
from referee.settings import Settings
from referee.store import keys, seek_rows
from referee.store.tables import Address, Seat, Seek, SQLModel
from tests.security.bad_input_cases import CASES, Case, refused

RATE = 8
PER_PLAYER = 3
_numbers = itertools.count()


@pytest.fixture(scope="module")
def app_settings(app_settings: Settings) -> Settings:
    return replace(app_settings, rate_seeks=f"{RATE}/hour", seeks_per_player=PER_PLAYER)


@dataclass
class Who:
    """A player: its address, public name, a browser signed in as it, and its tokens."""

    address: str
    name: str
    browser: FlaskClient
    token: str  # read and play
    reader: str  # read alone

    def headers(self, token: str | None = None) -> dict[str, str]:
        return {"Authorization": f"Bearer {token or self.token}"}


def player(app: Flask, referee: Referee, name: str | None = "Ann") -> Who:
    """A player the referee knows (seated once by a trusted client), named `name`
    (made unique) unless None, signed in, with a play token and a read-only token."""
    number = next(_numbers)
    address = f"p{number}@seeks.test"
    seats = [Player("Me", email=address), Player("Them")]
    create_game(referee, NewGame("subdivision", seats, {}, trusted=True))
    browser = app.test_client()
    browser.set_cookie("player", open_session(referee, address))
    public = None if name is None else f"{name}{number}"
    if public is not None:
        named = browser.put("/v1/me/profile", json={"name": public})
        assert named.status_code == 200, named.get_data(as_text=True)
    tokens = []
    for scopes in (["read", "play"], ["read"]):
        made = browser.post("/v1/me/tokens", json={"name": "+".join(scopes), "scopes": scopes})
        assert made.status_code == 201, made.get_data(as_text=True)
        tokens.append(made.get_json()["token"])
    return Who(address, public or "", browser, *tokens)


def counts(referee: Referee) -> dict[str, int]:
    """Every table's rows but the tokens' (whose last use a request notes)."""
    with referee.db.engine.connect() as connection:
        return {
            table: connection.execute(text(f"SELECT count(*) FROM {table}")).scalar_one()
            for table in SQLModel.metadata.tables
        }


def seek_states(referee: Referee) -> list[tuple[str, str, int, str | None]]:
    with referee.db.reading() as session:
        return [
            (seek.id, seek.status, len(seek_rows.seated(session, seek.id)), seek.game_id)
            for seek in session.exec(select(Seek).order_by(Seek.id))
        ]


def problem(answer: Any, status: int, code: str) -> dict[str, Any]:
    assert answer.status_code == status, answer.get_data(as_text=True)
    assert answer.mimetype == "application/problem+json"
    body: dict[str, Any] = answer.get_json()
    assert body["code"] == code, body
    return body


def post(who: Who, body: dict[str, Any], token: str | None = None) -> Any:
    return who.browser.post("/v1/seeks", json=body, headers=who.headers(token))


def posted(who: Who, **body: Any) -> dict[str, Any]:
    answer = post(who, {"game": "subdivision", **body})
    assert answer.status_code == 201, answer.get_data(as_text=True)
    found: dict[str, Any] = answer.get_json()
    return found


def settled(referee: Referee, seconds: float = 60) -> None:
    """Wait until no bot thinks in this process: a bot's move is a write of its own."""
    deadline = time.monotonic() + seconds
    while not referee.queue.idle("bots"):
        assert time.monotonic() < deadline, "the bots did not finish"
        time.sleep(0.05)


def refused_unchanged(referee: Referee, request: Any, status: int, code: str) -> dict[str, Any]:
    """Send `request()`; it must be refused with `status` and `code`, writing nothing."""
    settled(referee)
    before, seeks = counts(referee), seek_states(referee)
    body = problem(request(), status, code)
    assert counts(referee) == before and seek_states(referee) == seeks
    return body


def test_a_seek_is_posted_listed_read_and_answered_in_its_shape(
    app: Flask, referee: Referee, client: FlaskClient
) -> None:
    ann = player(app, referee, "Ann")
    answer = post(ann, {"game": "ice_palace", "players": {"min": 3, "max": 4}, "deadline": "2d"})
    assert answer.status_code == 201, answer.get_data(as_text=True)
    seek = answer.get_json()
    assert answer.headers["Location"] == seek["link"] == f"/seeks/{seek['id']}"
    assert {key: seek[key] for key in seek if key not in ("id", "link")} == {
        "game": "ice_palace",
        "players": {"min": 3, "max": 4},
        "options": {},
        "deadline": "172800s",
        "on_timeout": "random",
        "rated": True,
        "bots": None,
        "by": {"name": ann.name, "rating": None, "provisional": True},
        "seated": [{"name": ann.name, "rating": None, "provisional": True}],
        "rating": {"min": None, "max": None},
        "status": "open",
        "private": False,
        "invited": [],
        "open_seats": 3,
        "game_id": None,
        "created_at": seek["created_at"],
        "expires_at": seek["expires_at"],
    }
    assert datetime.fromisoformat(seek["expires_at"]) - datetime.fromisoformat(
        seek["created_at"]
    ) == timedelta(days=referee.settings.seek_days)
    # Anyone reads it and finds it listed; the list filters by game.
    assert client.get(f"/v1/seeks/{seek['id']}").get_json() == seek
    listed = client.get("/v1/seeks?game=ice_palace&limit=100").get_json()
    assert seek in listed["seeks"] and listed["next_cursor"] is None
    assert seek["id"] not in [
        s["id"] for s in client.get("/v1/seeks?game=mandala").get_json()["seeks"]
    ]
    # The defaults: the game's smallest count, min = max.
    assert posted(ann)["players"] == {"min": 2, "max": 2}


def test_joining_the_last_seat_starts_the_game_and_leaving_gives_a_seat_back(
    app: Flask, referee: Referee
) -> None:
    ann, bob, cy = (player(app, referee, name) for name in ("Ann", "Bob", "Cy"))
    seek = posted(ann, game="ice_palace", players={"max": 3})
    joined = bob.browser.post(f"/v1/seeks/{seek['id']}/join", headers=bob.headers())
    assert joined.status_code == 200
    assert [s["name"] for s in joined.get_json()["seated"]] == [ann.name, bob.name]
    # Leaving, by a signed-in browser this time, then joining again.
    left = bob.browser.delete(f"/v1/seeks/{seek['id']}/join")
    assert left.status_code == 200 and left.get_json()["open_seats"] == 2
    bob.browser.post(f"/v1/seeks/{seek['id']}/join", headers=bob.headers())
    started = cy.browser.post(f"/v1/seeks/{seek['id']}/join", headers=cy.headers())
    assert started.status_code == 200
    body = started.get_json()
    assert body["status"] == "started" and body["open_seats"] == 0
    # Each player finds the game among its own.
    for who in (ann, bob, cy):
        mine = who.browser.get("/v1/me/games", headers=who.headers()).get_json()["games"]
        assert body["game_id"] in [game["id"] for game in mine]


def test_the_creator_starts_early_or_withdraws(app: Flask, referee: Referee) -> None:
    ann, bob = player(app, referee, "Ann"), player(app, referee, "Bob")
    early = posted(ann, game="ice_palace", players={"min": 3, "max": 4})
    refused_unchanged(
        referee,
        lambda: ann.browser.post(f"/v1/seeks/{early['id']}/start", headers=ann.headers()),
        409,
        "too_few_seated",
    )
    with_bots = posted(ann, players={"max": 2}, bots="random")
    started = ann.browser.post(f"/v1/seeks/{with_bots['id']}/start")
    assert started.status_code == 200
    assert (started.get_json()["status"], started.get_json()["open_seats"]) == ("started", 1)
    withdrawn = ann.browser.delete(f"/v1/seeks/{early['id']}", headers=ann.headers())
    assert withdrawn.status_code == 200 and withdrawn.get_json()["status"] == "withdrawn"
    refused_unchanged(
        referee,
        lambda: bob.browser.post(f"/v1/seeks/{early['id']}/join", headers=bob.headers()),
        409,
        "seek_withdrawn",
    )


def test_every_conflict_has_its_code_and_changes_nothing(app: Flask, referee: Referee) -> None:
    ann, bob, cy, dee = (player(app, referee, name) for name in ("Ann", "Bob", "Cy", "Dee"))
    seek = posted(ann, game="ice_palace", players={"max": 3})
    url = f"/v1/seeks/{seek['id']}"

    def act(who: Who, method: str, path: str) -> Any:
        return lambda: who.browser.open(url + path, method=method, headers=who.headers())

    refused_unchanged(referee, act(ann, "POST", "/join"), 409, "already_joined")
    refused_unchanged(referee, act(bob, "DELETE", "/join"), 409, "not_joined")
    refused_unchanged(referee, act(ann, "DELETE", "/join"), 409, "creator_stays")
    refused_unchanged(referee, act(bob, "DELETE", ""), 409, "not_your_seek")
    refused_unchanged(referee, act(bob, "POST", "/start"), 409, "not_your_seek")
    # Bob sits at it; Cy blocked Bob: Cy sees the seek (Ann posted it) but cannot join.
    assert act(bob, "POST", "/join")().status_code == 200
    assert cy.browser.put(f"/v1/me/blocks/{bob.name}").status_code == 200
    refused_unchanged(referee, act(cy, "POST", "/join"), 409, "blocked")
    refused_unchanged(referee, act(bob, "POST", "/join"), 409, "already_joined")
    # Full but not started (its start failed, say): one more is refused as full.
    with referee.db.transaction() as session:
        seek_rows.seat(session, seek["id"], cy.address, datetime.now(UTC).isoformat())
    refused_unchanged(referee, act(dee, "POST", "/join"), 409, "seek_full")
    with referee.db.transaction() as session:
        seek_rows.unseat(session, seek["id"], cy.address)
    assert act(dee, "POST", "/join")().get_json()["status"] == "started"
    eve = player(app, referee, "Eve")
    refused_unchanged(referee, act(eve, "POST", "/join"), 409, "seek_started")
    refused_unchanged(referee, act(bob, "DELETE", "/join"), 409, "seek_started")
    refused_unchanged(referee, act(ann, "DELETE", ""), 409, "seek_started")
    refused_unchanged(referee, act(ann, "POST", "/start"), 409, "seek_started")


def test_an_expired_seek_is_refused_as_expired(app: Flask, referee: Referee) -> None:
    ann, bob = player(app, referee, "Ann"), player(app, referee, "Bob")
    seek = posted(ann)
    with referee.db.transaction() as session:
        found = session.get(Seek, seek["id"])
        assert found is not None
        found.expires_at = (datetime.now(UTC) - timedelta(seconds=1)).isoformat()
        session.add(found)
    for who, method, path in ((bob, "POST", "/join"), (ann, "POST", "/start")):
        refused_unchanged(
            referee,
            lambda who=who, method=method, path=path: who.browser.open(
                f"/v1/seeks/{seek['id']}{path}", method=method, headers=who.headers()
            ),
            409,
            "seek_expired",
        )


def test_posting_needs_a_name_and_room(app: Flask, referee: Referee) -> None:
    nameless, ann = player(app, referee, None), player(app, referee, "Ann")
    refused_unchanged(referee, lambda: post(nameless, {"game": "subdivision"}), 409, "needs_name")
    seek = posted(ann)
    refused_unchanged(
        referee,
        lambda: nameless.browser.post(f"/v1/seeks/{seek['id']}/join", headers=nameless.headers()),
        409,
        "needs_name",
    )
    for _ in range(PER_PLAYER - 1):
        posted(ann)
    refused_unchanged(referee, lambda: post(ann, {"game": "subdivision"}), 409, "too_many_seeks")


@pytest.mark.parametrize(
    ("body", "code", "field"),
    [
        ({"game": "chess"}, "unknown_game", None),
        ({"game": "subdivision", "players": {"min": 2, "max": 5}}, "bad_players", "players"),
        ({"game": "ice_palace", "players": {"min": 4, "max": 3}}, "bad_players", "players"),
        ({"game": "subdivision", "players": {"min": 0}}, "bad_request", "players"),
        ({"game": "subdivision", "players": [2, 3]}, "bad_request", "players"),
        ({"game": "subdivision", "players": {"most": 3}}, "bad_request", "players"),
        ({"game": "subdivision", "options": {"no_such_option": 1}}, "bad_options", None),
        ({"game": "subdivision", "deadline": "soon"}, "bad_request", "deadline"),
        ({"game": "subdivision", "bots": "grandmaster"}, "bad_players", None),
        ({"game": "subdivision", "invite": ["Nobody at all"]}, "bad_request", "invite"),
        ({"game": "subdivision", "invite": ["a\nb"]}, "bad_request", "invite"),
        ({"game": "subdivision", "invite": [""]}, "bad_request", "invite"),
        ({"game": "subdivision", "invite": "Bob"}, "bad_request", "invite"),
        ({"game": "subdivision", "invite": [f"N{n}" for n in range(6)]}, "bad_request", "invite"),
        ({"game": "subdivision", "rated": "yes please"}, "bad_request", "rated"),
        ({"game": "subdivision", "colour": "red"}, "bad_request", "colour"),
        ({}, "bad_request", "game"),
    ],
)
def test_a_body_of_the_wrong_shape_is_a_422_and_writes_nothing(
    app: Flask, referee: Referee, body: dict[str, Any], code: str, field: str | None
) -> None:
    ann = player(app, referee, "Ann")
    found = refused_unchanged(referee, lambda: post(ann, body), 422, code)
    if field is not None:
        assert field in str(found.get("errors")), found


def test_one_invites_oneself_or_a_player_who_blocks_one_not(app: Flask, referee: Referee) -> None:
    ann, bob = player(app, referee, "Ann"), player(app, referee, "Bob")
    refused_unchanged(
        referee,
        lambda: post(ann, {"game": "subdivision", "invite": [ann.name.upper()]}),
        422,
        "bad_request",
    )
    assert bob.browser.put(f"/v1/me/blocks/{ann.name}").status_code == 200
    refused_unchanged(
        referee, lambda: post(ann, {"game": "subdivision", "invite": [bob.name]}), 409, "blocked"
    )


def test_who_may_ask_what(app: Flask, referee: Referee, client: FlaskClient) -> None:
    ann, bob = player(app, referee, "Ann"), player(app, referee, "Bob")
    seek = posted(ann)
    url = f"/v1/seeks/{seek['id']}"
    acting = [
        ("POST", "/v1/seeks", {"game": "subdivision"}),
        ("POST", f"{url}/join", None),
        ("DELETE", f"{url}/join", None),
        ("DELETE", url, None),
        ("POST", f"{url}/start", None),
        ("PUT", "/v1/me/profile", {"name": "Someone"}),
        ("PUT", f"/v1/me/blocks/{ann.name}", None),
        ("DELETE", f"/v1/me/blocks/{ann.name}", None),
        ("PUT", "/v1/me/standing-seeks", [{"game": "subdivision", "count": 1}]),
    ]
    reading = ["/v1/me/profile", "/v1/me/blocks", "/v1/me/standing-seeks"]
    for method, path, body in acting:
        anyone = partial(client.open, path, method=method, json=body)
        refused_unchanged(referee, anyone, 401, "unauthorized")
        reader = partial(anyone, headers=bob.headers(bob.reader))
        refused_unchanged(referee, reader, 403, "forbidden")
    # A seat token is no player's.
    seat = create_game(referee, NewGame("subdivision", [Player("A"), Player("B")], {})).tokens[0]
    refused_unchanged(
        referee,
        lambda: client.post(f"{url}/join", headers={"Authorization": f"Bearer {seat}"}),
        401,
        "unauthorized",
    )
    for path in reading:
        problem(client.get(path), 401, "unauthorized")
        assert client.get(path, headers=bob.headers(bob.reader)).status_code == 200


def test_what_one_may_not_see_is_not_found(
    app: Flask, referee: Referee, client: FlaskClient
) -> None:
    ann, bob, cy = (player(app, referee, name) for name in ("Ann", "Bob", "Cy"))
    private = posted(ann, invite=[bob.name.lower()])
    assert private["private"] and private["invited"] == [bob.name]
    url = f"/v1/seeks/{private['id']}"
    for asked in (url, "/v1/seeks/no-such-seek", "/v1/seeks/" + "x" * 40):
        problem(client.get(asked), 404, "not_found")
        problem(cy.browser.get(asked, headers=cy.headers()), 404, "not_found")
    for asked in ("/v1/seeks/no-such-seek", "/v1/seeks/" + "x" * 40):
        refused_unchanged(
            referee, lambda asked=asked: cy.browser.post(f"{asked}/join"), 404, "not_found"
        )
    # Joining by its id, one it does not invite is told it is private.
    refused_unchanged(referee, lambda: cy.browser.post(f"{url}/join"), 409, "not_invited")
    assert private["id"] not in [s["id"] for s in client.get("/v1/seeks").get_json()["seeks"]]
    # The invitee sees it, without the list of whom it invites; and joins it.
    seen = bob.browser.get(url, headers=bob.headers()).get_json()
    assert seen["private"] and seen["invited"] == []
    assert bob.browser.post(f"{url}/join").get_json()["status"] == "started"
    # A player blocked by the creator sees none of its seeks, listed or by id.
    public = posted(ann)
    ann.browser.put(f"/v1/me/blocks/{cy.name}")
    listed = cy.browser.get("/v1/seeks", headers=cy.headers()).get_json()["seeks"]
    assert public["id"] not in [s["id"] for s in listed]
    problem(cy.browser.get(f"/v1/seeks/{public['id']}"), 404, "not_found")
    refused_unchanged(
        referee, lambda: cy.browser.post(f"/v1/seeks/{public['id']}/join"), 404, "not_found"
    )


def test_profile_and_blocks(app: Flask, referee: Referee) -> None:
    ann, bob = player(app, referee, "Ann"), player(app, referee, None)
    assert bob.browser.get("/v1/me/profile").get_json() == {
        "name": None,
        "language": "en",
        "time_zone": "UTC",
    }
    reader = ann.browser.get("/v1/me/profile", headers=ann.headers(ann.reader))
    assert reader.get_json() == {"name": ann.name, "language": "en", "time_zone": "UTC"}
    for taken in (ann.name.lower(), ann.name.upper()):
        refused_unchanged(
            referee,
            lambda taken=taken: bob.browser.put("/v1/me/profile", json={"name": taken}),
            409,
            "name_taken",
        )
    for bad in ("ab", "a.b.c", "x@y.test", "Ann\u200b"):
        refused_unchanged(
            referee,
            lambda bad=bad: bob.browser.put("/v1/me/profile", json={"name": bad}),
            422,
            "bad_request",
        )
    for body in (
        {"name": 3},
        {"name": "Bobby", "colour": "red"},
        ["Bobby"],
        {"language": "de"},
        {"time_zone": "Mars/Olympus_Mons"},
        {"time_zone": "../../etc/passwd"},
        {"language": "fr", "time_zone": "Europe/Nowhere"},
    ):
        refused_unchanged(
            referee,
            lambda body=body: bob.browser.put("/v1/me/profile", json=body),
            422,
            "bad_request",
        )
    # A name and blocks are the player's own to change: a signed-in browser's, no token's.
    refused_unchanged(
        referee,
        lambda: bob.browser.put("/v1/me/profile", json={"name": "Bobby"}, headers=bob.headers()),
        403,
        "forbidden",
    )
    made = bob.browser.put("/v1/me/profile", json={"name": "Bobby"})
    assert made.status_code == 200
    assert made.get_json() == {"name": "Bobby", "language": "en", "time_zone": "UTC"}
    # The language and zone are changed alone; the name stays.
    spoken = bob.browser.put(
        "/v1/me/profile", json={"language": "fr", "time_zone": "America/New_York"}
    )
    assert spoken.get_json() == {"name": "Bobby", "language": "fr", "time_zone": "America/New_York"}
    assert bob.browser.get("/v1/me/profile").get_json() == spoken.get_json()
    # Blocks: by public name, in any case; one's own or an unknown name is not found.
    assert ann.browser.get("/v1/me/blocks").get_json() == {"blocks": []}
    refused_unchanged(
        referee,
        lambda: ann.browser.put("/v1/me/blocks/bobby", headers=ann.headers()),
        403,
        "forbidden",
    )
    blocked = ann.browser.put("/v1/me/blocks/bobby")
    assert blocked.status_code == 200 and blocked.get_json() == {"blocks": ["Bobby"]}
    assert ann.browser.put("/v1/me/blocks/BOBBY").get_json() == {"blocks": ["Bobby"]}
    assert ann.browser.get("/v1/me/blocks", headers=ann.headers(ann.reader)).get_json() == {
        "blocks": ["Bobby"]
    }
    for name in (ann.name, "Nobody", "x" * 200):
        refused_unchanged(
            referee, lambda name=name: ann.browser.put(f"/v1/me/blocks/{name}"), 404, "not_found"
        )
        refused_unchanged(
            referee,
            lambda name=name: ann.browser.delete(f"/v1/me/blocks/{name}"),
            404,
            "not_found",
        )
    assert ann.browser.delete("/v1/me/blocks/Bobby").get_json() == {"blocks": []}


def test_standing_seeks_are_put_and_read_back(app: Flask, referee: Referee) -> None:
    ann = player(app, referee, "Ann")
    assert ann.browser.get("/v1/me/standing-seeks").get_json() == []
    wanted = [
        {"game": "subdivision", "count": 2},
        {"game": "ice_palace", "players": {"min": 3, "max": 4}, "deadline": "3d", "count": 1},
    ]
    put = ann.browser.put("/v1/me/standing-seeks", json=wanted, headers=ann.headers())
    assert put.status_code == 200, put.get_data(as_text=True)
    expected = [
        {
            "game": "subdivision",
            "players": {"min": 2, "max": 2},
            "options": {},
            "deadline": None,
            "count": 2,
        },
        {
            "game": "ice_palace",
            "players": {"min": 3, "max": 4},
            "options": {},
            "deadline": "259200s",
            "count": 1,
        },
    ]
    assert put.get_json() == expected
    got = ann.browser.get("/v1/me/standing-seeks", headers=ann.headers(ann.reader))
    assert got.get_json() == expected
    assert ann.browser.put("/v1/me/standing-seeks", json=[]).get_json() == []


@pytest.mark.parametrize(
    ("body", "status", "code"),
    [
        ([{"game": "subdivision", "count": 0}], 422, "bad_request"),
        ([{"game": "subdivision", "count": 11}], 422, "bad_request"),
        ([{"game": "subdivision"}], 422, "bad_request"),
        ([{"game": "subdivision", "count": 1, "on_timeout": "bot"}], 422, "bad_request"),
        ([{"game": "chess", "count": 1}], 422, "unknown_game"),
        ([{"game": "subdivision", "players": {"max": 5}, "count": 1}], 422, "bad_players"),
        ([{"game": "subdivision", "deadline": "soon", "count": 1}], 422, "bad_request"),
        ([{"game": "subdivision", "count": 1}] * 2, 422, "bad_request"),
        (
            [{"game": "subdivision", "deadline": f"{n + 1}h", "count": 1} for n in range(11)],
            422,
            "bad_request",
        ),
        ({"game": "subdivision", "count": 1}, 422, "bad_request"),
        ("subdivision", 422, "bad_request"),
    ],
)
def test_a_refused_standing_seek_list_changes_nothing(
    app: Flask, referee: Referee, body: Any, status: int, code: str
) -> None:
    ann = player(app, referee, "Ann")
    ann.browser.put("/v1/me/standing-seeks", json=[{"game": "mandala", "count": 1}])
    refused_unchanged(
        referee,
        lambda: ann.browser.put("/v1/me/standing-seeks", json=body, headers=ann.headers()),
        status,
        code,
    )
    assert [s["game"] for s in ann.browser.get("/v1/me/standing-seeks").get_json()] == ["mandala"]


def test_a_nameless_player_keeps_no_standing_seeks(app: Flask, referee: Referee) -> None:
    nameless = player(app, referee, None)
    refused_unchanged(
        referee,
        lambda: nameless.browser.put(
            "/v1/me/standing-seeks", json=[{"game": "subdivision", "count": 1}]
        ),
        409,
        "needs_name",
    )


def test_the_per_player_rate_limit_is_a_429_with_retry_after(app: Flask, referee: Referee) -> None:
    ann, bob = player(app, referee, "Ann"), player(app, referee, "Bob")
    seek = posted(ann, game="ice_palace", players={"max": 3})
    # Join and leave, by token and by browser: each counts for Bob.
    for n in range(RATE):
        path = f"/v1/seeks/{seek['id']}/join"
        answer = bob.browser.open(path, method="DELETE" if n % 2 else "POST")
        assert answer.status_code == 200, answer.get_data(as_text=True)
    limited = refused_unchanged(
        referee,
        lambda: bob.browser.post(f"/v1/seeks/{seek['id']}/join", headers=bob.headers()),
        429,
        "too_many_requests",
    )
    assert "open games" in limited["detail"]
    answer = bob.browser.post(f"/v1/seeks/{seek['id']}/join")
    assert 0 < int(answer.headers["Retry-After"]) <= 3600
    # Another player is counted apart.
    assert posted(player(app, referee, "Cy"))["status"] == "open"


def seen_at(referee: Referee, address: str) -> str | None:
    with referee.db.reading() as session:
        found = session.get(Address, address)
        assert found is not None
        return found.seen_at


def forget_seen(referee: Referee, address: str) -> None:
    with referee.db.transaction() as session:
        found = session.get(Address, address)
        assert found is not None
        found.seen_at = None
        session.add(found)


def test_a_player_using_a_token_or_a_session_is_seen(
    app: Flask, referee: Referee, client: FlaskClient
) -> None:
    ann = player(app, referee, "Ann")
    start = datetime.now(UTC)
    for request in (
        lambda: client.get("/v1/me/games", headers=ann.headers(ann.reader)),
        lambda: client.get("/v1/seeks", headers=ann.headers()),
        lambda: ann.browser.get("/v1/me/blocks"),
        lambda: ann.browser.get("/me"),
    ):
        forget_seen(referee, ann.address)
        assert request().status_code == 200
        found = seen_at(referee, ann.address)
        assert found is not None and datetime.fromisoformat(found) >= start - timedelta(seconds=1)
    # A credential that signs in no one notes no one.
    forget_seen(referee, ann.address)
    client.get("/v1/me/games", headers={"Authorization": "Bearer rp_forged"})
    assert seen_at(referee, ann.address) is None


PLAYER_CASES = [
    case for case in CASES if case.path.startswith(("/v1/seeks", "/v1/me/")) and not case.seat
]


@pytest.mark.parametrize("case", PLAYER_CASES, ids=[case.name for case in PLAYER_CASES])
def test_the_nasty_list_with_a_players_token_is_a_4xx_and_writes_nothing(
    app: Flask, referee: Referee, case: Case
) -> None:
    ann = player(app, referee, "Ann")
    headers = ann.headers()
    if case.body is not None:
        headers["Content-Type"] = "application/json"

    def send() -> Any:
        body = None if case.body is None else case.body.encode()
        return ann.browser.open(case.path, method=case.method, data=body, headers=headers)

    before = counts(referee)
    answer = send()
    refused(case, (answer.status_code, answer.mimetype or "", answer.get_data(as_text=True)))
    assert counts(referee) == before


def test_no_address_is_shown_to_the_other_player_of_a_seeks_game(
    app: Flask, referee: Referee
) -> None:
    ann, bob = player(app, referee, "Ann"), player(app, referee, "Bob")
    seek = posted(ann, deadline="2d")
    game_id = bob.browser.post(f"/v1/seeks/{seek['id']}/join").get_json()["game_id"]
    with referee.db.reading() as session:
        held = session.exec(select(Seat).where(Seat.game_id == game_id))
        seats = {seat.email: seat.seat for seat in held}
    # A move, so that the log and the moves hold something.
    to_act = ann.browser.get(f"/v1/games/{game_id}").get_json()["to_act"][0]
    mover = ann if seats[ann.address] == to_act else bob
    legal = mover.browser.get(f"/v1/games/{game_id}/legal-moves", headers=mover.headers())
    notation = legal.get_json()["moves"][0]["notation"]
    played = mover.browser.post(
        f"/v1/games/{game_id}/moves?wait=10", json={"notation": notation}, headers=mover.headers()
    )
    assert played.status_code == 201, played.get_data(as_text=True)
    for me, other in ((ann, bob), (bob, ann)):
        answers = [
            me.browser.get(path, headers=me.headers())
            for path in (
                "/v1/seeks",
                f"/v1/seeks/{seek['id']}",
                f"/v1/games/{game_id}",
                f"/v1/games/{game_id}/state",
                f"/v1/games/{game_id}/moves",
                f"/v1/games/{game_id}/log.jsonl",
                f"/v1/games/{game_id}/verify",
                f"/v1/games/{game_id}/board.svg",
                "/v1/me/games",
            )
        ]
        # The game's page, as my seat's link opens it.
        page = app.test_client()
        token = keys.seat_link_token(referee.secret(), game_id, seats[me.address])
        assert page.get(f"/g/{game_id}/seat/{token}").status_code == 200
        answers.append(page.get(f"/g/{game_id}"))
        shown = answers[-1].get_data(as_text=True)
        assert f"You are <strong><bdi>{me.name}</bdi></strong>" in shown
        assert other.name in shown
        for answer in answers:
            assert answer.status_code == 200, (answer.request.path, answer.status_code)
            assert other.address not in answer.get_data(as_text=True), answer.request.path
