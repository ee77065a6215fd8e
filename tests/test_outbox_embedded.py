"""Notices on the embedded default (SQLite): one delivery per channel that reaches the seat.

On SQLite every transaction takes the file's one write lock, so delivery
must close its reading session before it marks a row; otherwise the
sweeper blocks its own thread for the busy timeout and freezes the server.
"""

from __future__ import annotations

from datetime import UTC, datetime
from pathlib import Path

from sqlmodel import col, select

from referee import games, settings
from referee.delivery.mail import MAIL
from referee.delivery.webhook import WEBHOOK
from referee.store import creation, db, delivery, webhooks
from referee.store.db import transaction
from referee.store.notices import insert_notices, reachable_seats
from referee.store.tables import Delivery, Outbox, OutboxKind
from tests.configured import settings_with
from workers import delivering


def test_seats_no_channel_reaches_get_notices_without_deliveries(tmp_path: Path) -> None:
    url = f"sqlite:///{tmp_path / 'referee.sqlite3'}"
    mail_dir = tmp_path / "mail-out"
    with settings_with(database_url=url, mail_dir=str(mail_dir), smtp_url=None):
        db.upgrade()
        try:
            game_id = _create([("Ann", None), ("Bob", None)])
            finished = delivering.deliver_due("mail", settings.active())
            notices, deliveries = _rows(game_id)
        finally:
            db.dispose()
    assert {kind for kind, _seat in notices} == {OutboxKind.INVITATION}
    assert deliveries == [] and finished == 0
    assert not mail_dir.exists() or not any(mail_dir.iterdir())


def test_each_notice_gets_a_delivery_per_channel_reaching_its_seat(tmp_path: Path) -> None:
    url = f"sqlite:///{tmp_path / 'referee.sqlite3'}"
    with settings_with(database_url=url, mail_dir=str(tmp_path / "mail-out"), smtp_url=None):
        db.upgrade()
        try:
            game_id = _create([("Ann", "ann@players.test"), ("Bob", None), ("Cy", None)])
            with transaction() as session:
                webhooks.set_url(session, game_id, 1, "https://hooks.example/bob")
                webhooks.set_url(session, game_id, 0, "https://hooks.example/ann")
                reached = reachable_seats(session.connection(), game_id)
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
                insert_notices(session.connection(), news)
            _notices, deliveries = _rows(game_id, OutboxKind.BOARD)
        finally:
            db.dispose()
    assert reached == {0, 1}
    assert sorted(deliveries) == [(0, "mail"), (0, "webhook"), (1, "webhook")]


def _create(players: list[tuple[str, str | None]]) -> str:
    rules = games.get("subdivision")
    with transaction() as session:
        options = rules.load_options({}, len(players))
        created = creation.create_game(session, rules, players, options, trusted=True)
        return created.game.id


def _rows(
    game_id: str, kind: str | None = None
) -> tuple[list[tuple[str, int]], list[tuple[int, str]]]:
    """The game's notices (kind, seat), and its deliveries (seat, channel)."""
    with transaction() as session:
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


def _statuses(game_id: str) -> dict[tuple[int, str], str]:
    """{(notice, channel): status} of the game's deliveries."""
    with transaction() as session:
        found = session.exec(
            select(Delivery.notice_id, Delivery.channel, Delivery.status)
            .join(Outbox, col(Outbox.id) == col(Delivery.notice_id))
            .where(col(Outbox.game_id) == game_id)
        ).all()
    return {(notice, channel): status for notice, channel, status in found}


def _board(game_id: str, seat: int) -> int:
    row = {
        "game_id": game_id,
        "kind": OutboxKind.BOARD,
        "seat": seat,
        "payload": {},
        "created_at": "2026-01-01T00:00:00.000000+00:00",
    }
    with transaction() as session:
        insert_notices(session.connection(), [row])
        found = session.exec(
            select(Outbox.id).where(col(Outbox.game_id) == game_id).order_by(col(Outbox.id).desc())
        ).first()
    assert found is not None
    return found


def test_each_channel_is_claimed_retried_and_settled_on_its_own(tmp_path: Path) -> None:
    url = f"sqlite:///{tmp_path / 'referee.sqlite3'}"
    moment = datetime.now(UTC)
    with settings_with(database_url=url, mail_dir=str(tmp_path / "mail-out"), smtp_url=None):
        db.upgrade()
        try:
            game_id = _create([("Ann", "ann@players.test"), ("Bob", None)])
            with transaction() as session:
                webhooks.set_url(session, game_id, 0, "https://hooks.example/ann")
            first, second = _board(game_id, 0), _board(game_id, 0)
            mails = delivery.claim("mail", MAIL.ready, moment, 60)
            posts = delivery.claim("webhook", WEBHOOK.ready, moment, 60, in_order=True, limit=1)
            # The seat's first post is under way: its second waits its turn.
            waiting = delivery.claim("webhook", WEBHOOK.ready, moment, 60, in_order=True)
            mail_of = {row.notice_id: row.id for row in mails.rows}
            hook_of = {row.notice_id: row.id for row in posts.rows}
            delivery.retry_later(mail_of[first], "refused", moment, 30, give_up_after=1)
            delivery.sent(hook_of[first])
            then = delivery.claim("webhook", WEBHOOK.ready, moment, 60, in_order=True)
            after_first = _statuses(game_id)
            with transaction() as session:
                webhooks.set_url(session, game_id, 0, None)
            after_removal = _statuses(game_id)
        finally:
            db.dispose()
    assert {first, second} <= set(mail_of) and set(hook_of) == {first}
    assert waiting.rows == [] and [row.notice_id for row in then.rows] == [second]
    assert after_first[first, "mail"] == "failed" and after_first[first, "webhook"] == "sent"
    assert after_first[second, "mail"] == "sending" == after_first[second, "webhook"]
    # Removing the webhook skips its waiting posts; the mail goes on.
    assert after_removal[second, "webhook"] == "skipped"
    assert after_removal[second, "mail"] == "sending" and after_removal[first, "webhook"] == "sent"
