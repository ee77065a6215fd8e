"""Signing in against a hostile internet: forged, replayed, raced, huge and malformed input.

In-process on SQLite: hostile bodies and link paths are clear 4xx answers
that hand nothing to the queue, and no other token of the referee's (a
seat's, an address's) opens a session. On PostgreSQL: two clicks on one
link at once sign in once, and requests racing for one address's mail
write one link.
"""

from __future__ import annotations

import threading
from collections.abc import Iterator
from concurrent.futures import ThreadPoolExecutor
from typing import Any

import pytest
from flask import Flask
from sqlmodel import select

from api import create_app
from referee.service import Referee, refusals, signing_in
from referee.service.creating import NewGame, Player, create_game
from referee.settings import Settings
from referee.store import addresses, keys
from referee.store.tables import Outbox, OutboxKind, SignIn

ANN = "ann@hostile.test"
DEEP = "[" * 5000 + "]" * 5000


def _player(referee: Referee) -> str:
    seated = [Player("Ann", ANN), Player("Bob", "bob@hostile.test")]
    return create_game(referee, NewGame("subdivision", seated, {}, trusted=True)).game.id


def _tokens(referee: Referee) -> list[str]:
    """The tokens of every sign-in link written, derived as the mail derives them."""
    with referee.db.reading() as session:
        notices = session.exec(select(Outbox).where(Outbox.kind == OutboxKind.SIGN_IN)).all()
    return [keys.sign_in_token(referee.secret(), notice.payload["nonce"]) for notice in notices]


@pytest.fixture
def app(fresh_referee: Referee) -> Flask:
    return create_app(fresh_referee.settings, fresh_referee)


@pytest.fixture
def handed(fresh_referee: Referee, monkeypatch: pytest.MonkeyPatch) -> Iterator[list[Any]]:
    found: list[Any] = []
    monkeypatch.setattr(fresh_referee.queue, "enqueue_apart", lambda *args: found.append(args))
    yield found


@pytest.mark.parametrize(
    "body",
    [
        '{"email": "' + "a" * 60_000 + '"}',
        '{"email": ' + DEEP + "}",
        '{"email": "ann\\u0000@hostile.test"}',
        '{"email": "\\ud800@hostile.test"}',
        '{"email": "ann@hostile.test", "email": "bob@hostile.test"}',
        '{"email": 1e999}',
        '{"email": {"$ne": null}}',
        "not json",
        "",
    ],
)
def test_hostile_bodies_are_clear_problems_that_enqueue_nothing(
    app: Flask, handed: list[Any], body: str
) -> None:
    response = app.test_client().post(
        "/v1/players/sign-in", data=body, content_type="application/json"
    )
    assert 400 <= response.status_code < 500
    assert response.mimetype == "application/problem+json"
    assert ANN not in response.get_data(as_text=True)
    assert handed == []


@pytest.mark.parametrize(
    "token", ["x" * 3000, "%00", "..%5C..%5Cv1", "%E2%80%AE", "ünïcödé", "a b"]
)
def test_hostile_link_paths_are_the_not_valid_page(app: Flask, token: str) -> None:
    client = app.test_client()
    shown = client.get(f"/me/sign-in/{token}")
    assert shown.status_code == 404 and b"not valid (or no longer)" in shown.data
    page = client.get("/me/sign-in").get_data(as_text=True)
    csrf = page.split('name="csrf" value="', 1)[1].split('"', 1)[0]
    spent = client.post(f"/me/sign-in/{token}", data={"csrf": csrf})
    assert spent.status_code == 404 and b"not valid (or no longer)" in spent.data
    assert not [c for c in spent.headers.getlist("Set-Cookie") if c.startswith("player=")]


def test_no_other_token_of_the_referee_signs_in(fresh_referee: Referee) -> None:
    game_id = _player(fresh_referee)
    secret = fresh_referee.secret()
    with fresh_referee.db.reading() as session:
        known = addresses.find(session, ANN)
    assert known is not None
    others = [
        keys.seat_link_token(secret, game_id, 0),
        keys.play_token(secret, game_id, 0),
        keys.reply_token(secret, game_id, 0, 0),
        known.accept_token,
        known.stop_token,
        keys.hash_token(keys.sign_in_token(secret, "a nonce")),
    ]
    assert signing_in.request_sign_in(fresh_referee, ANN)
    [real] = _tokens(fresh_referee)
    with fresh_referee.db.reading() as session:
        [link] = session.exec(select(SignIn)).all()
    # Not the stored hash either: only the token itself signs in.
    for token in [*others, link.token_hash, real.upper(), real + "=", f" {real}"]:
        with pytest.raises(refusals.SignInLinkNotValid):
            signing_in.redeem(fresh_referee, token)
    signing_in.redeem(fresh_referee, real)


@pytest.fixture
def pg_referee(pg_database: str, tmp_path: Any) -> Iterator[Referee]:
    made = Referee(
        Settings(database_url=pg_database, mail_dir=str(tmp_path / "mail"), secret="a secret")
    )
    made.db.upgrade()
    yield made
    made.close()


def test_on_postgresql_one_link_signs_in_once_however_many_click_at_once(
    pg_referee: Referee,
) -> None:
    _player(pg_referee)
    # Addresses no column could hold, or no player has, are looked up without a fault.
    for strange in ("ü" * 320, "'; DROP TABLE seat; --", "%", "ANN@HOSTILE.TEST\u0130"):
        assert not signing_in.request_sign_in(pg_referee, strange)
    barrier = threading.Barrier(8)

    def ask(_n: int) -> bool:
        barrier.wait()
        return signing_in.request_sign_in(pg_referee, ANN)

    with ThreadPoolExecutor(8) as pool:
        asked = list(pool.map(ask, range(8)))
    assert asked.count(True) == 1
    [token] = _tokens(pg_referee)

    def spend(_n: int) -> str | None:
        barrier.wait()
        try:
            return signing_in.redeem(pg_referee, token)
        except refusals.SignInLinkNotValid:
            return None

    with ThreadPoolExecutor(8) as pool:
        cookies = [cookie for cookie in pool.map(spend, range(8)) if cookie is not None]
    assert len(cookies) == 1
