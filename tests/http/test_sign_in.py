"""Signing in by a mailed one-time link, in-process on SQLite: who gets a link, what the
mail holds, spending it once, and the pages and REST answer that tell nothing."""

from __future__ import annotations

import re
import threading
from collections.abc import Iterator
from dataclasses import replace
from datetime import UTC, datetime, timedelta
from email import policy
from email.message import EmailMessage
from email.parser import BytesParser
from pathlib import Path
from typing import Any

import pytest
import sqlalchemy as sa
from flask import Flask
from flask.testing import FlaskClient
from sqlmodel import col, select

from api import create_app
from api.http.player_auth import PLAYER_COOKIE
from api.pages.kit import redact
from referee import games
from referee.queue import SIGN_IN, Queue
from referee.service import Referee, game_states, players, refusals, signing_in
from referee.service.creating import NewGame, Player, create_game
from referee.service.delivering import deliver_due
from referee.service.submitting import KnownSeat, SubmitMove, submit_move
from referee.store import addresses, keys, seat_hooks
from referee.store.clock import stamp
from referee.store.tables import (
    Address,
    AddressState,
    Delivery,
    DeliveryStatus,
    Game,
    Outbox,
    OutboxKind,
    SignIn,
    core_table,
)

ANN = "ann@players.test"
BOB = "bob@players.test"
LINK = re.compile(r"https?://[^\s\"<>]+/me/sign-in/([A-Za-z0-9_-]+)")


@pytest.fixture
def referee(fresh_referee: Referee) -> Referee:
    """Each test has a database and a mail folder of its own."""
    return fresh_referee


def _game(referee: Referee, *emails: str | None, trusted: bool = True) -> str:
    seated = [Player(name, email) for name, email in zip(("Ann", "Bob"), emails, strict=True)]
    return create_game(referee, NewGame("subdivision", seated, {}, trusted=trusted)).game.id


def _mails(referee: Referee) -> list[EmailMessage]:
    """Every mail written to the mail folder, sending what is due first."""
    deliver_due(referee, "mail")
    folder = Path(referee.settings.mail_dir)
    found = []
    for path in sorted(folder.glob("*.eml")) if folder.exists() else []:
        mail = BytesParser(policy=policy.default).parsebytes(path.read_bytes())
        assert isinstance(mail, EmailMessage)
        found.append(mail)
    return found


def _sign_in_mails(referee: Referee, to: str) -> list[EmailMessage]:
    return [
        mail
        for mail in _mails(referee)
        if mail["X-Referee-Kind"] == OutboxKind.SIGN_IN and to in str(mail["To"])
    ]


def _text(mail: EmailMessage) -> str:
    part = mail.get_body(("plain",))
    assert part is not None
    return str(part.get_content())  # type: ignore[attr-defined]


def _token(mail: EmailMessage) -> str:
    found = LINK.search(_text(mail))
    assert found is not None, _text(mail)
    return found.group(1)


def _count(referee: Referee, table: Any, *where: Any) -> int:
    with referee.db.reading() as session:
        return int(session.exec(select(sa.func.count()).select_from(table).where(*where)).one())


def test_a_player_gets_one_mail_whose_link_signs_in_once(referee: Referee) -> None:
    game_id = _game(referee, ANN, BOB)
    assert signing_in.request_sign_in(referee, "  Ann@Players.test ")
    [mail] = _sign_in_mails(referee, ANN)
    text = _text(mail)
    assert mail["Subject"] == "Sign in to the referee"
    assert "30 minutes" in text and "once" in text and "did not ask" in text
    assert mail["Auto-Submitted"] == "auto-generated"
    assert mail["List-Unsubscribe-Post"] == "List-Unsubscribe=One-Click"
    assert "/unsubscribe/" in str(mail["List-Unsubscribe"])
    # Its own thread, and nothing of the game whose seat carried it; no reply goes to a game.
    assert mail["In-Reply-To"] is None and mail["References"] is None
    assert mail["Reply-To"] is None and "play+" not in str(mail)
    assert game_id not in str(mail) and game_id[:8] not in str(mail)
    assert "/seat/" not in str(mail)
    token = _token(mail)
    # The store keeps neither the token nor anything that gives it without the secret.
    with referee.db.reading() as session:
        [link] = session.exec(select(SignIn)).all()
        [notice] = session.exec(select(Outbox).where(Outbox.kind == OutboxKind.SIGN_IN)).all()
    assert link.token_hash == keys.hash_token(token) and link.address == ANN
    assert token not in str(notice.payload)
    cookie = signing_in.redeem(referee, token)
    assert players.player_of_session(referee, cookie).address == ANN
    with pytest.raises(refusals.SignInLinkNotValid):
        signing_in.redeem(referee, token)


def test_no_webhook_gets_a_sign_in_link(referee: Referee) -> None:
    game_id = _game(referee, ANN, BOB)
    with referee.db.transaction() as session:
        for seat in (0, 1):
            seat_hooks.set_url(session, game_id, seat, f"https://hooks.example/{seat}")
    assert signing_in.request_sign_in(referee, ANN)
    deliver_due(referee, "webhook")
    with referee.db.reading() as session:
        rows = session.exec(
            select(Delivery.status, Delivery.error)
            .join(Outbox, col(Outbox.id) == col(Delivery.notice_id))
            .where(Outbox.kind == OutboxKind.SIGN_IN, Delivery.channel == "webhook")
        ).all()
    # The webhook channel does not carry it: no delivery is even written.
    assert rows == []


def test_addresses_that_are_no_players_get_nothing(referee: Referee) -> None:
    _game(referee, ANN, BOB)
    # Only invited, by a game of an untrusted client, never accepted.
    _game(referee, "cy@players.test", "dee@players.test", trusted=False)
    with referee.db.transaction() as session:
        known = addresses.find(session, BOB)
        assert known is not None
        addresses.stop(session, known)
    for email in ("nobody@players.test", "cy@players.test", BOB, "not an address", ""):
        assert not signing_in.request_sign_in(referee, email)
    assert _count(referee, SignIn) == 0
    assert _count(referee, Outbox, col(Outbox.kind) == OutboxKind.SIGN_IN) == 0
    assert _sign_in_mails(referee, "players.test") == []


def test_an_invited_address_that_accepted_is_a_player(referee: Referee) -> None:
    _game(referee, "cy@players.test", "dee@players.test", trusted=False)
    with referee.db.transaction() as session:
        known = addresses.find(session, "cy@players.test")
        assert known is not None and known.state == AddressState.INVITED
        addresses.accept(session, known)
    assert signing_in.request_sign_in(referee, "cy@players.test")
    assert len(_sign_in_mails(referee, "cy@players.test")) == 1


def test_one_mail_per_address_every_five_minutes(referee: Referee) -> None:
    _game(referee, ANN, BOB)
    moment = datetime.now(UTC)
    assert signing_in.request_sign_in(referee, ANN, moment)
    assert not signing_in.request_sign_in(referee, ANN, moment + timedelta(minutes=4))
    assert not signing_in.request_sign_in(referee, ANN.upper(), moment + timedelta(minutes=4))
    # Another address is counted apart.
    assert signing_in.request_sign_in(referee, BOB, moment + timedelta(minutes=4))
    assert len(_sign_in_mails(referee, ANN)) == 1
    assert signing_in.request_sign_in(referee, ANN, moment + timedelta(minutes=5, seconds=1))
    assert len(_sign_in_mails(referee, ANN)) == 2


def test_an_expired_or_forged_link_is_refused_in_the_same_words(referee: Referee) -> None:
    _game(referee, ANN, BOB)
    assert signing_in.request_sign_in(referee, ANN)
    token = _token(_sign_in_mails(referee, ANN)[0])
    with referee.db.transaction() as session:
        link = session.get(SignIn, keys.hash_token(token))
        assert link is not None
        link.expires_at = stamp(datetime.now(UTC) - timedelta(seconds=1))
        session.add(link)
    forged = keys.sign_in_token(b"another secret", "a nonce")
    for bad in (token, forged, "", "x" * 5000, token[:-1]):
        with pytest.raises(refusals.SignInLinkNotValid) as refused:
            signing_in.redeem(referee, bad)
        assert refused.value.reason == signing_in.NOT_VALID
        with pytest.raises(refusals.SignInLinkNotValid):
            signing_in.check_link(referee, bad)


def test_a_link_of_an_address_that_stopped_since_signs_in_no_one(referee: Referee) -> None:
    _game(referee, ANN, BOB)
    assert signing_in.request_sign_in(referee, ANN)
    token = _token(_sign_in_mails(referee, ANN)[0])
    with referee.db.transaction() as session:
        known = addresses.find(session, ANN)
        assert known is not None
        addresses.stop(session, known)
    with pytest.raises(refusals.SignInLinkNotValid):
        signing_in.redeem(referee, token)


def test_sign_in_mail_neither_joins_nor_starts_the_games_thread(referee: Referee) -> None:
    game_id = _game(referee, ANN, BOB)
    # The game's first mails do not go out (as if the server had refused them) ...
    with referee.db.transaction() as session:
        session.execute(
            sa.update(core_table(Delivery)).values(status=DeliveryStatus.SKIPPED, error="test")
        )
    # ... so the sign-in link is the first mail Bob's seat carries.
    assert signing_in.request_sign_in(referee, BOB)
    [sign_in] = _sign_in_mails(referee, BOB)
    assert sign_in["References"] is None
    # Ann moves: Bob is told it is his turn, in a mail that starts the game's thread.
    move = _legal_move(referee, game_id, 0)
    submit_move(referee, SubmitMove(game_id, KnownSeat(0), move), wait=1)
    [turn] = [m for m in _mails(referee) if m["X-Referee-Kind"] == OutboxKind.YOUR_TURN]
    assert BOB in str(turn["To"])
    assert turn["References"] is None and turn["In-Reply-To"] is None
    # The game's next mail to Bob refers to that one, not to the sign-in link.
    move = _legal_move(referee, game_id, 1)
    submit_move(referee, SubmitMove(game_id, KnownSeat(1), move), wait=1)
    move = _legal_move(referee, game_id, 0)
    submit_move(referee, SubmitMove(game_id, KnownSeat(0), move), wait=1)
    turns = [m for m in _mails(referee) if m["X-Referee-Kind"] == OutboxKind.YOUR_TURN]
    [then] = [m for m in turns if BOB in str(m["To"]) and m["Message-ID"] != turn["Message-ID"]]
    assert then["References"] == turn["Message-ID"]


def _legal_move(referee: Referee, game_id: str, seat: int) -> str:
    rules = games.get("subdivision")
    with referee.db.reading() as session:
        game = session.get(Game, game_id)
        assert game is not None
        state = game_states.state_at(session, game, game.version)
    return rules.notate(rules.legal_moves(state, seat)[0])


# -- over HTTP, in-process ----------------------------------------------------------


@pytest.fixture
def app(referee: Referee) -> Flask:
    return create_app(referee.settings, referee)


@pytest.fixture
def asked(referee: Referee, monkeypatch: pytest.MonkeyPatch) -> Iterator[list[tuple[str, Any]]]:
    """What requests hand to the queue, instead of it: the job then runs when the test says."""
    handed: list[tuple[str, Any]] = []
    monkeypatch.setattr(
        referee.queue, "enqueue_apart", lambda name, *args: handed.append((name, args))
    )
    yield handed


def _answer(client: FlaskClient, body: Any) -> tuple[int, bytes, dict[str, str]]:
    response = client.post("/v1/players/sign-in", json=body)
    headers = {k: v for k, v in response.headers.items() if k != "Date"}
    return response.status_code, response.data, headers


def test_the_rest_answer_is_the_same_whatever_the_address(
    referee: Referee, app: Flask, asked: list[tuple[str, Any]]
) -> None:
    _game(referee, ANN, BOB)
    with referee.db.transaction() as session:
        known = addresses.find(session, BOB)
        assert known is not None
        addresses.stop(session, known)
    client = app.test_client()
    answers = [
        _answer(client, {"email": email})
        for email in (ANN, ANN, "nobody@players.test", BOB, "no address at all")
    ]
    assert answers[0][0] == 202
    assert all(answer == answers[0] for answer in answers)
    # The request only hands the address to the queue: no lookup, nothing written.
    assert [name for name, _args in asked] == [SIGN_IN] * 5
    assert _count(referee, SignIn) == 0
    with referee.db.reading() as session:
        assert all(a.sign_in_at is None for a in session.exec(select(Address)))
    # The job the queue runs is the use case.
    for _name, args in asked:
        referee.run_job(SIGN_IN, args)
    assert len(_sign_in_mails(referee, ANN)) == 1
    assert _sign_in_mails(referee, BOB) == []


@pytest.mark.parametrize(
    "body",
    [
        {},
        {"email": 5},
        {"email": None},
        {"email": ""},
        {"email": "a" * 321},
        {"email": "ann\n@players.test"},
        {"email": ANN, "more": 1},
        ["ann@players.test"],
    ],
)
def test_a_body_that_is_not_an_email_is_a_problem(
    app: Flask, asked: list[tuple[str, Any]], body: Any
) -> None:
    response = app.test_client().post("/v1/players/sign-in", json=body)
    assert response.status_code == 422
    assert response.mimetype == "application/problem+json"
    assert asked == []


def test_in_the_embedded_default_the_job_runs_apart_from_the_request(referee: Referee) -> None:
    ran: list[tuple[str, str, tuple[Any, ...]]] = []
    done = threading.Event()

    def run(name: str, args: tuple[Any, ...]) -> None:
        ran.append((threading.current_thread().name, name, args))
        done.set()

    queue = Queue(referee.settings, run)
    assert queue.eager
    queue.enqueue_apart(SIGN_IN, ANN)
    assert done.wait(30)
    assert ran == [("referee-background", SIGN_IN, (ANN,))]


def _csrf(client: FlaskClient, path: str) -> str:
    page = client.get(path).get_data(as_text=True)
    found = re.search(r'name="csrf" value="([^"]+)"', page)
    assert found is not None, page
    return found.group(1)


def test_the_pages_sign_in_with_a_button_and_sign_out(
    referee: Referee, app: Flask, asked: list[tuple[str, Any]]
) -> None:
    _game(referee, ANN, BOB)
    client = app.test_client()
    csrf = _csrf(client, "/me/sign-in")
    known = client.post("/me/sign-in", data={"email": ANN, "csrf": csrf})
    unknown = client.post("/me/sign-in", data={"email": "nobody@x.test", "csrf": csrf})
    assert known.status_code == unknown.status_code == 200
    assert known.data == unknown.data and b"Check your mail" in known.data
    assert asked == [(SIGN_IN, (ANN,)), (SIGN_IN, ("nobody@x.test",))]
    referee.run_job(SIGN_IN, (ANN,))
    token = _token(_sign_in_mails(referee, ANN)[0])
    path = f"/me/sign-in/{token}"

    # Opening the link (as a mail scanner would) spends nothing.
    for _ in range(2):
        shown = client.get(path)
        assert shown.status_code == 200 and b'id="sign-in"' in shown.data
        assert shown.headers["Referrer-Policy"] == "no-referrer"
    csrf = _csrf(client, path)
    # A browser posts from a no-referrer page with Origin "null".
    spent = client.post(path, data={"csrf": csrf}, headers={"Origin": "null"})
    assert spent.status_code == 303 and spent.headers["Location"] == "/me"
    cookie = _player_cookie(spent.headers.getlist("Set-Cookie"))
    assert "HttpOnly" in cookie and "SameSite=Lax" in cookie and "Path=/" in cookie
    assert "Secure" not in cookie and "Max-Age=2592000" in cookie
    assert b"signed in as" in client.get("/me/sign-in").data

    again = client.post(path, data={"csrf": csrf})
    assert again.status_code == 404 and b"not valid (or no longer)" in again.data
    assert b'href="/me/sign-in"' in again.data
    assert client.get(path).status_code == 404

    csrf = _csrf(client, "/me/sign-in")
    value = cookie.split(";", 1)[0].split("=", 1)[1]
    out = client.post("/me/sign-out", data={"csrf": csrf})
    assert out.status_code == 303
    assert _player_cookie(out.headers.getlist("Set-Cookie")).startswith(f"{PLAYER_COOKIE}=;")
    with pytest.raises(refusals.Unauthorized):
        players.player_of_session(referee, value)
    client.set_cookie(PLAYER_COOKIE, value)
    assert b"signed in as" not in client.get("/me/sign-in").data


def _player_cookie(cookies: list[str]) -> str:
    [found] = [c for c in cookies if c.startswith(f"{PLAYER_COOKIE}=")]
    return found


def test_the_forms_refuse_other_sites(
    referee: Referee, app: Flask, asked: list[tuple[str, Any]]
) -> None:
    _game(referee, ANN, BOB)
    referee.run_job(SIGN_IN, (ANN,))
    token = _token(_sign_in_mails(referee, ANN)[0])
    client = app.test_client()
    csrf = _csrf(client, f"/me/sign-in/{token}")
    evil = {"Origin": "https://evil.example"}
    for path in ("/me/sign-in", f"/me/sign-in/{token}", "/me/sign-out"):
        assert client.post(path, data={"csrf": csrf, "email": ANN}, headers=evil).status_code == 403
        # Without the form token (another site's form: no SameSite=Strict cookie).
        assert app.test_client().post(path, data={"email": ANN}).status_code == 403
    assert asked == []
    # The link was not spent by any of them.
    signing_in.check_link(referee, token)


def test_a_bad_form_is_a_page_that_tells_nothing(app: Flask, asked: list[tuple[str, Any]]) -> None:
    client = app.test_client()
    csrf = _csrf(client, "/me/sign-in")
    for email in ("", "a" * 400, "ann\x00@x.test"):
        response = client.post("/me/sign-in", data={"email": email, "csrf": csrf})
        assert response.status_code == 422 and response.mimetype == "text/html"
    assert asked == []


def test_the_session_cookie_is_secure_behind_https(referee: Referee) -> None:
    settings = replace(referee.settings, public_url="https://play.example.org")
    secure = Referee(settings, referee.db)
    app = create_app(settings, secure)
    _game(secure, ANN, BOB)
    assert signing_in.request_sign_in(secure, ANN)
    token = _token(_sign_in_mails(secure, ANN)[0])
    client = app.test_client()
    path = f"/me/sign-in/{token}"
    csrf = _csrf(client, path)
    spent = client.post(path, data={"csrf": csrf}, headers={"Origin": "https://play.example.org"})
    assert spent.status_code == 303
    assert "Secure" in _player_cookie(spent.headers.getlist("Set-Cookie"))


def test_access_logs_never_show_the_token() -> None:
    line = '127.0.0.1 - - "POST /me/sign-in/AbC-d_9 HTTP/1.1" 303 -'
    assert "AbC-d_9" not in redact(line) and "/me/sign-in/<token>" in redact(line)
    assert redact('"GET /me/sign-in HTTP/1.1"') == '"GET /me/sign-in HTTP/1.1"'


def test_the_document_describes_the_endpoint(app: Flask) -> None:
    document = app.test_client().get("/openapi.json").get_json()
    operation = document["paths"]["/v1/players/sign-in"]["post"]
    assert operation["operationId"] == "askSignIn"
    assert "202" in operation["responses"] and "422" in operation["responses"]
