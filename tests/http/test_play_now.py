"""The play-now link of every mail to a seat, through the compose path and the game pages.

In-process, on SQLite: a trusted game's notices of every kind are built as
the mail channel builds them (`referee.delivery.compose`) and their link
followed with Flask's test client, each browser its own client with its own
cookies. The links of a finished game work for `AFTER_THE_END`, then not.
The same links over real SMTP and in Chromium: tests/mail/test_play_now_mail.py.
"""

from __future__ import annotations

import logging
import re
from collections.abc import Iterator
from datetime import UTC, datetime, timedelta
from email.message import EmailMessage
from pathlib import Path
from typing import Any

import pytest
from flask import Flask
from flask.testing import FlaskClient
from sqlmodel import select

from api import create_app
from api.pages import kit
from referee.delivery import compose
from referee.delivery.channel import Consent
from referee.delivery.play_links import AFTER_THE_END, play_url
from referee.i18n import when
from referee.service import Referee
from referee.service.creating import Created, NewGame, Player, create_game
from referee.service.submitting import SeatToken, SubmitMove, submit_move
from referee.settings import Settings
from referee.store import clock, keys
from referee.store.tables import Game, Outbox, OutboxKind, Seat

HOST = "http://localhost"
PLAY = re.compile(r"http://localhost/g/([0-9a-f]{32})/play/([A-Za-z0-9_-]+)")
# Every kind of notice that goes to a seat of a game, and what its row names.
RUNNING_KINDS = (
    OutboxKind.INVITATION,
    OutboxKind.YOUR_TURN,
    OutboxKind.REMINDER,
    OutboxKind.ANSWER,
    OutboxKind.ROUND_OVER,
    OutboxKind.HELP,
    OutboxKind.BOARD,
    OutboxKind.REFUSED,
)
FINISHED_KINDS = (OutboxKind.GAME_OVER, OutboxKind.REMATCH, OutboxKind.BOARD)
FULL = Consent(False, "accept-token", "stop-token")


@pytest.fixture
def referee(tmp_path: Path) -> Iterator[Referee]:
    """The service on a SQLite file of the test's own, its pages served from HOST."""
    made = Referee(
        Settings(
            database_url=f"sqlite:///{tmp_path / 'referee.sqlite3'}",
            mail_dir=str(tmp_path / "mail-out"),
            secret="a test secret",
            public_url=HOST,
        )
    )
    made.db.upgrade()
    yield made
    made.close()


@pytest.fixture
def app(referee: Referee) -> Flask:
    return create_app(referee.settings, referee)


def new_game(referee: Referee, game: str = "maniki", emails: bool = True) -> Created:
    players = [
        Player("Ann", "ann@players.test" if emails else None),
        Player("Bob", "bob@players.test"),
    ]
    return create_game(referee, NewGame(game, players, {}, deadline="2h", trusted=True))


def write_notice(
    referee: Referee, game_id: str, kind: OutboxKind, seat: int, **payload: Any
) -> int:
    with referee.db.transaction() as session:
        row = Outbox(game_id=game_id, kind=kind, seat=seat, payload=payload, created_at=clock.now())
        session.add(row)
        session.flush()
        assert row.id is not None
        return row.id


def composed(referee: Referee, notice_id: int) -> compose.Composed:
    site = compose.Site.of(referee.settings)
    with referee.db.reading() as session:
        row = session.get(Outbox, notice_id)
        assert row is not None
        return compose.build(session, row, referee.secret(), site)


def parts(mail: EmailMessage) -> tuple[str, str]:
    text = mail.get_body(preferencelist=("plain",))
    html = mail.get_body(preferencelist=("html",))
    assert text is not None and html is not None
    return str(text.get_content()), str(html.get_content())


def the_play_link(mail: EmailMessage) -> str:
    """The one play-now link of a mail, the same in its text and its HTML."""
    text, html = parts(mail)
    in_text = {m.group(0) for m in PLAY.finditer(text)}
    in_html = {m.group(0) for m in PLAY.finditer(html)}
    assert len(in_text) == 1 and in_text == in_html, (in_text, in_html)
    return in_text.pop()


def open_link(app: Flask, link: str) -> tuple[FlaskClient, Any]:
    """A fresh browser following `link`."""
    client = app.test_client()
    return client, client.get(link.removeprefix(HOST))


def seat_cookie(answer: Any) -> str | None:
    found = [c for c in answer.headers.getlist("Set-Cookie") if c.startswith("seat=")]
    return found[0] if found else None


def assert_opens(app: Flask, link: str, game_id: str, seat: int, name: str) -> None:
    """`link` hands a fresh browser the seat, by a hop page that shows no token."""
    client, hop = open_link(app, link)
    page = hop.get_data(as_text=True)
    assert hop.status_code == 200, page
    assert hop.headers["Referrer-Policy"] == "no-referrer"
    assert f'content="0;url=/g/{game_id}"' in page
    token = link.rsplit("/", 1)[1]
    referee: Referee = app.extensions["referee"]
    seat_token = keys.seat_link_token(referee.secret(), game_id, seat)
    assert token not in page and seat_token not in page
    cookie = seat_cookie(hop)
    assert cookie is not None
    assert cookie.startswith(f"seat={seat_token};")
    for part in ("HttpOnly", "SameSite=Strict", f"Path=/g/{game_id}"):
        assert part in cookie
    shown = client.get(f"/g/{game_id}").get_data(as_text=True)
    assert f"You are <strong><bdi>{name}</bdi></strong>" in shown
    assert token not in shown and seat_token not in shown


def assert_refused(app: Flask, path: str) -> None:
    client = app.test_client()
    answer = client.get(path)
    page = answer.get_data(as_text=True)
    assert answer.status_code == 404 and answer.mimetype == "text/html", page
    assert "This play-now link is not valid, or no longer" in page
    assert not answer.headers.getlist("Set-Cookie")
    assert answer.headers["Referrer-Policy"] == "no-referrer"


def move_once(referee: Referee, game_id: str, token: str, notation: str) -> str:
    submission = submit_move(referee, SubmitMove(game_id, SeatToken(token), notation), wait=10)
    assert submission.status == "accepted", submission.reason
    return submission.id


def test_every_kind_of_seat_mail_carries_its_seats_working_play_link(
    app: Flask, referee: Referee
) -> None:
    created = new_game(referee)
    game_id = created.game.id
    answered = move_once(referee, game_id, created.tokens[0], "KI")
    due = (datetime.now(UTC) + timedelta(hours=1)).isoformat()
    extra: dict[OutboxKind, dict[str, Any]] = {
        OutboxKind.ANSWER: {"submission": answered, "version": 1},
        OutboxKind.REFUSED: {"reason": "no move found", "version": 1},
        OutboxKind.REMINDER: {"due_at": due, "version": 1},
        OutboxKind.REMATCH: {"waiting_for": [1]},
    }
    links: dict[int, set[str]] = {0: set(), 1: set()}

    def check(kinds: tuple[OutboxKind, ...]) -> None:
        for kind in kinds:
            for seat, (address, name) in enumerate(
                [("ann@players.test", "Ann"), ("bob@players.test", "Bob")]
            ):
                notice = composed(
                    referee, write_notice(referee, game_id, kind, seat, **extra.get(kind, {}))
                )
                mail = notice.mail(address, FULL, None)
                link = the_play_link(mail)
                assert link == play_url(HOST, referee.secret(), game_id, seat), kind
                links[seat].add(link)
                # The webhook's JSON, which may go to a third party's server, has none.
                assert "/play/" not in notice.json().decode()
                assert_opens(app, link, game_id, seat, name)

    check(RUNNING_KINDS)
    move_once(referee, game_id, created.tokens[1], "resign")
    check(FINISHED_KINDS)
    # One link per seat, the same in every mail, and another for the other seat.
    assert all(len(found) == 1 for found in links.values())
    assert links[0] != links[1]


def test_a_running_games_mail_links_to_play_not_to_the_bare_page(referee: Referee) -> None:
    created = new_game(referee)
    notice = composed(referee, write_notice(referee, created.game.id, OutboxKind.YOUR_TURN, 0))
    text, html = parts(notice.mail("ann@players.test", FULL, None))
    assert "Play now, in your browser (keep this link to yourself):" in text
    assert ">Play now</strong></a>" in html
    bare = f"{HOST}/g/{created.game.id}"
    assert f"{bare}\n" not in text and f'"{bare}"' not in html


def test_the_invitation_asking_to_accept_carries_no_link_of_the_game(referee: Referee) -> None:
    created = new_game(referee)
    notice = composed(referee, write_notice(referee, created.game.id, OutboxKind.INVITATION, 1))
    asking = notice.mail("bob@players.test", Consent(True, "accept-token", "stop-token"), None)
    text, html = parts(asking)
    assert "/play/" not in text + html and f"/g/{created.game.id}" not in text + html
    assert keys.play_token(referee.secret(), created.game.id, 1) not in bytes(asking).decode()


def test_tampered_and_forged_links_are_refused_alike(app: Flask, referee: Referee) -> None:
    first, other = new_game(referee), new_game(referee)
    secret = referee.secret()
    ann = keys.play_token(secret, first.game.id, 0)
    assert_opens(app, f"/g/{first.game.id}/play/{ann}", first.game.id, 0, "Ann")
    flipped = ann[:-1] + ("A" if ann[-1] != "A" else "B")
    for path in (
        f"/g/{first.game.id}/play/{flipped}",
        # Ann's token of one game on another game.
        f"/g/{other.game.id}/play/{ann}",
        # The token of the other seat's reply address, personal link or webhook key.
        f"/g/{first.game.id}/play/{keys.reply_token(secret, first.game.id, 0)}",
        f"/g/{first.game.id}/play/{keys.seat_link_token(secret, first.game.id, 0)}",
        f"/g/{first.game.id}/play/{keys.webhook_secret(secret, first.game.id, 0)}",
        # Malformed: short, long, other letters, padding, another game id.
        f"/g/{first.game.id}/play/abc",
        f"/g/{first.game.id}/play/{'A' * 400}",
        f"/g/{first.game.id}/play/{ann[:-1]}%C3%A9",
        f"/g/{first.game.id}/play/{ann[:-2]}==",
        f"/g/{'0' * 32}/play/{ann}",
        f"/g/not-a-game/play/{ann}",
    ):
        assert_refused(app, path)
    # Another seat's valid link reaches that seat, never this one.
    bob = keys.play_token(secret, first.game.id, 1)
    assert_opens(app, f"/g/{first.game.id}/play/{bob}", first.game.id, 1, "Bob")


def test_a_seat_without_a_mail_address_has_no_play_link(app: Flask, referee: Referee) -> None:
    created = new_game(referee, emails=False)
    token = keys.play_token(referee.secret(), created.game.id, 0)
    assert_refused(app, f"/g/{created.game.id}/play/{token}")


def test_a_finished_games_links_work_for_a_while_then_not(app: Flask, referee: Referee) -> None:
    created = new_game(referee)
    game_id = created.game.id
    move_once(referee, game_id, created.tokens[1], "resign")
    link = f"/g/{game_id}/play/{keys.play_token(referee.secret(), game_id, 1)}"
    assert_opens(app, link, game_id, 1, "Bob")
    with referee.db.reading() as session:
        game = session.get(Game, game_id)
        assert game is not None and game.status == "over"
        ended = clock.parse_stamp(game.updated_at)
    # The game-over mail says until when; the page it opens offers the rematch.
    notice = composed(referee, write_notice(referee, game_id, OutboxKind.GAME_OVER, 1))
    text, _ = parts(notice.mail("bob@players.test", FULL, None))
    until = ended + AFTER_THE_END
    assert f"it works until {' '.join(when(until).split())}" in " ".join(text.split())
    assert f"The game's public page: {HOST}/g/{game_id}\n" in text
    client, _ = open_link(app, HOST + link)
    assert "rematch" in client.get(f"/g/{game_id}").get_data(as_text=True).lower()
    # Moved back to just past the end of its time.
    with referee.db.transaction() as session:
        game = session.get(Game, game_id)
        assert game is not None
        game.updated_at = clock.stamp(datetime.now(UTC) - AFTER_THE_END - timedelta(minutes=1))
        session.add(game)
    assert_refused(app, link)


def test_a_seats_token_that_is_not_the_derived_one_is_not_handed_out(
    app: Flask, referee: Referee
) -> None:
    created = new_game(referee)
    with referee.db.transaction() as session:
        seat = session.exec(
            select(Seat).where(Seat.game_id == created.game.id, Seat.seat == 0)
        ).one()
        seat.token_hash = keys.hash_token(keys.new_token())
        session.add(seat)
    token = keys.play_token(referee.secret(), created.game.id, 0)
    assert_refused(app, f"/g/{created.game.id}/play/{token}")


def test_access_logs_show_play_links_without_their_token() -> None:
    line = '127.0.0.1 - - "GET /g/abcd/play/Zm9vYmFyLWJhei1xdXV4LTEy HTTP/1.1" 200 -'
    assert kit.redact(line) == '127.0.0.1 - - "GET /g/abcd/play/<token> HTTP/1.1" 200 -'
    record = logging.LogRecord("werkzeug", logging.INFO, __file__, 1, "%s", (line,), None)
    kit.RedactSeatLinks().filter(record)
    assert "Zm9vYmFy" not in record.getMessage()
