"""Notices on the embedded default (SQLite): one delivery per channel that reaches the seat.

On SQLite every transaction takes the file's one write lock, so delivery
must close its reading session before it marks a row; otherwise the
sweeper blocks its own thread for the busy timeout and freezes the server.
"""

from __future__ import annotations

from datetime import UTC, datetime
from pathlib import Path

import pytest
from sqlmodel import col, select

from referee.delivery.mail import MAIL
from referee.delivery.webhook import WEBHOOK
from referee.service import Referee, reachability
from referee.service.creating import NewGame, Player, create_game
from referee.service.delivering import deliver_due
from referee.service.notifying import write
from referee.store import delivery, seat_hooks
from referee.store.tables import Delivery, Outbox, OutboxKind


@pytest.fixture
def referee(fresh_referee: Referee) -> Referee:
    """Each test here has a database and a mail folder of its own."""
    return fresh_referee


def test_seats_no_channel_reaches_get_notices_without_deliveries(referee: Referee) -> None:
    mail_dir = Path(referee.settings.mail_dir)
    game_id = _create(referee, [("Ann", None), ("Bob", None)])
    finished = deliver_due(referee, "mail")
    notices, deliveries = _rows(referee, game_id)
    assert {kind for kind, _seat in notices} == {OutboxKind.INVITATION}
    assert deliveries == [] and finished == 0
    assert not mail_dir.exists() or not any(mail_dir.iterdir())


def test_each_notice_gets_a_delivery_per_channel_reaching_its_seat(referee: Referee) -> None:
    game_id = _create(referee, [("Ann", "ann@players.test"), ("Bob", None), ("Cy", None)])
    with referee.db.transaction() as session:
        seat_hooks.set_url(session, game_id, 1, "https://hooks.example/bob")
        seat_hooks.set_url(session, game_id, 0, "https://hooks.example/ann")
        reached = reachability.reach(session, game_id).reachable
        news = [
            {
                "game_id": game_id,
                "kind": OutboxKind.BOARD,
                "seat": seat,
                "payload": {},
                "created_at": "2026-01-01T00:00:00.000000+00:00",
            }
            for seat in range(3)
        ]
        write(session.connection(), None, news)
    _notices, deliveries = _rows(referee, game_id, OutboxKind.BOARD)
    assert reached == {0, 1}
    assert sorted(deliveries) == [(0, "mail"), (0, "webhook"), (1, "webhook")]


def _create(referee: Referee, players: list[tuple[str, str | None]]) -> str:
    seats = [Player(name, email) for name, email in players]
    return create_game(referee, NewGame("subdivision", seats, {}, trusted=True)).game.id


def _rows(
    referee: Referee, game_id: str, kind: str | None = None
) -> tuple[list[tuple[str, int]], list[tuple[int, str]]]:
    """The game's notices (kind, seat), and its deliveries (seat, channel)."""
    with referee.db.reading() as session:
        chosen = [col(Outbox.game_id) == game_id]
        if kind is not None:
            chosen.append(col(Outbox.kind) == kind)
        notices = session.exec(select(Outbox.kind, Outbox.seat).where(*chosen)).all()
        deliveries = session.exec(
            select(Outbox.seat, Delivery.channel)
            .join(Delivery, col(Delivery.notice_id) == col(Outbox.id))
            .where(*chosen)
        ).all()
    return (
        [(found, seat) for found, seat in notices if seat is not None],
        [(seat, channel) for seat, channel in deliveries if seat is not None],
    )


def _statuses(referee: Referee, game_id: str) -> dict[tuple[int, str], str]:
    """{(notice, channel): status} of the game's deliveries."""
    with referee.db.reading() as session:
        found = session.exec(
            select(Delivery.notice_id, Delivery.channel, Delivery.status)
            .join(Outbox, col(Outbox.id) == col(Delivery.notice_id))
            .where(col(Outbox.game_id) == game_id)
        ).all()
    return {(notice, channel): status for notice, channel, status in found}


def _board(referee: Referee, game_id: str, seat: int) -> int:
    row = {
        "game_id": game_id,
        "kind": OutboxKind.BOARD,
        "seat": seat,
        "payload": {},
        "created_at": "2026-01-01T00:00:00.000000+00:00",
    }
    with referee.db.transaction() as session:
        write(session.connection(), None, [row])
        found = session.exec(
            select(Outbox.id).where(col(Outbox.game_id) == game_id).order_by(col(Outbox.id).desc())
        ).first()
    assert found is not None
    return found


def test_each_channel_is_claimed_retried_and_settled_on_its_own(referee: Referee) -> None:
    moment = datetime.now(UTC)
    db = referee.db
    game_id = _create(referee, [("Ann", "ann@players.test"), ("Bob", None)])
    with db.transaction() as session:
        seat_hooks.set_url(session, game_id, 0, "https://hooks.example/ann")
    first, second = _board(referee, game_id, 0), _board(referee, game_id, 0)
    mails = delivery.claim(db, "mail", MAIL.ready, moment, 60)
    posts = delivery.claim(db, "webhook", WEBHOOK.ready, moment, 60, in_order=True, limit=1)
    # The seat's first post is under way: its second waits its turn.
    waiting = delivery.claim(db, "webhook", WEBHOOK.ready, moment, 60, in_order=True)
    mail_of = {row.notice_id: row.id for row in mails.rows}
    hook_of = {row.notice_id: row.id for row in posts.rows}
    delivery.retry_later(db, mail_of[first], "refused", moment, 30, give_up_after=1)
    delivery.sent(db, [hook_of[first]])
    then = delivery.claim(db, "webhook", WEBHOOK.ready, moment, 60, in_order=True)
    after_first = _statuses(referee, game_id)
    with db.transaction() as session:
        seat_hooks.set_url(session, game_id, 0, None)
    after_removal = _statuses(referee, game_id)
    assert {first, second} <= set(mail_of) and set(hook_of) == {first}
    assert waiting.rows == [] and [row.notice_id for row in then.rows] == [second]
    assert after_first[first, "mail"] == "failed" and after_first[first, "webhook"] == "sent"
    assert after_first[second, "mail"] == "sending" == after_first[second, "webhook"]
    # Removing the webhook skips its waiting posts; the mail goes on.
    assert after_removal[second, "webhook"] == "skipped"
    assert after_removal[second, "mail"] == "sending" and after_removal[first, "webhook"] == "sent"
