"""Sending the outbox, and the deadline sweep, as Celery tasks.

`deliver` claims due outbox rows (see `referee.store.delivery`), builds each
message for its seat, sends it and marks each channel done at once. A
refused or unreachable server puts the row back with exponential backoff
(`REFEREE_MAIL_BACKOFF` seconds, doubling, at most `REFEREE_MAIL_BACKOFF_MAX`);
a worker that dies mid-send leaves its rows claimed until their lease
(`REFEREE_MAIL_LEASE` seconds) runs out, when another worker sends them.

At most once, honestly: SMTP has no idempotency. If a worker dies after
the server said 250 but before the row was marked, the message goes out
again after the lease, with the same Message-ID (mail clients and many
servers drop such a copy). Nothing else sends a message twice.
"""

from __future__ import annotations

import json
import logging
import time
from dataclasses import replace
from datetime import UTC, datetime

from sqlalchemy.exc import OperationalError
from sqlmodel import Session

from referee import settings
from referee.queue import DEADLINES, DELIVER, app
from referee.store import addresses, deadlines, delivery, keys, reads
from referee.store.db import engine, transaction
from referee.store.tables import Game, Outbox
from workers import compose, transport

_log = logging.getLogger(__name__)
# Tries at marking a sent message (0.2 s, 0.4 s, ... apart) before it counts as unsent.
_MARK_ATTEMPTS = 5


def _backoff(attempts: int) -> float:
    chosen = settings.active()
    return float(min(chosen.mail_backoff * 2 ** max(attempts - 1, 0), chosen.mail_backoff_max))


def deliver_due(moment: datetime | None = None) -> int:
    """Send every due row (in batches); returns how many rows were finished."""
    finished = 0
    sender = transport.transport()
    secret = keys.server_secret()
    try:
        while True:
            moment = datetime.now(UTC) if moment is None else moment
            lease = settings.active().mail_lease
            claim = delivery.claim_due(moment, lease)
            if not claim.ids:
                return finished
            for row_id in claim.ids:
                if delivery.hold(row_id, claim, lease):
                    finished += _deliver_one(row_id, sender, secret)
            moment = None
    finally:
        sender.close()


def _consent(
    row: Outbox, email: str | None, trusted: bool, secret: bytes
) -> compose.Consent | None:
    """How this row may mail its seat's address (None: not at all), asked at send time.

    An address that has not accepted gets its one invitation asking it to
    (when no other game invited it within `REFEREE_INVITE_EVERY`) and
    nothing else; a stopped address gets nothing. The seat's personal link
    rides on its first full mail.
    """
    if not email:
        return None
    assert row.id is not None and row.seat is not None
    with Session(engine()) as session:
        known = addresses.find(session, email)
    if known is None:
        # A game made before addresses were kept.
        with transaction() as session:
            addresses.ensure(session, secret, email)
        with Session(engine()) as session:
            known = addresses.find(session, email)
        assert known is not None
    mode = addresses.mail_mode(known, trusted, row.kind)
    if mode == addresses.NONE:
        return None
    if mode == addresses.ASK:
        moment = datetime.now(UTC)
        if not addresses.claim_invitation(email, row.id, moment, settings.active().invite_every):
            return None
        return compose.Consent(True, known.accept_token, known.stop_token)
    return compose.Consent(False, known.accept_token, known.stop_token)


def _deliver_one(row_id: int, sender: transport.Transport, secret: bytes) -> int:
    # Each reading session is closed before anything is written: on SQLite
    # every transaction takes the file's one write lock (BEGIN IMMEDIATE), so
    # a write opened while this session is still open would wait on this
    # very thread until the busy timeout, freezing the embedded server.
    notice: compose.Notice | None = None
    failure: tuple[str, float, int] | None = None
    with Session(engine()) as session:
        row = session.get(Outbox, row_id)
        assert row is not None and row.id is not None
        seat = None if row.seat is None else reads.seats(session, row.game_id)[row.seat]
        game = session.get(Game, row.game_id)
        trusted = game is not None and game.trusted
    consent = None if seat is None else _consent(row, seat.email, trusted, secret)
    if consent is not None and not consent.ask and seat is not None and seat.linked_at is None:
        link_token = keys.seat_link_token(secret, row.game_id, seat.seat)
        consent = replace(consent, link=f"{compose.public_url()}/g/{row.game_id}/seat/{link_token}")
    if seat is not None and (consent is not None or seat.webhook_url):
        with Session(engine()) as session:
            try:
                notice = compose.build(session, row, secret, consent)
            except OperationalError as error:
                # The database went away, not a fault of the row: retry it like a refused send.
                give_up = settings.active().mail_attempts
                failure = (repr(error), _backoff(row.attempts), give_up)
            except Exception:
                _log.exception("outbox row %s cannot be built", row_id)
                failure = ("cannot be built", 3600, 1)
    if failure is not None:
        delivery.retry_later(row_id, failure[0], datetime.now(UTC), failure[1], failure[2])
        return 0
    if seat is None or notice is None:
        # Nowhere to send it (or nobody may be mailed): done without building anything.
        delivery.channel_done(row_id, "mail", "hook")
        return 1
    try:
        if row.mail_at is None:
            if notice.mail is not None:
                sender.send(notice.mail)
                if consent is not None and consent.link is not None:
                    addresses.linked(row.game_id, seat.seat)
            _mark_done(row_id, "mail")
        if row.hook_at is None:
            if seat.webhook_url:
                body = json.dumps(notice.data, sort_keys=True).encode("utf-8")
                key = keys.webhook_secret(secret, row.game_id, seat.seat)
                transport.post_webhook(seat.webhook_url, key, compose.message_id(row), body)
            _mark_done(row_id, "hook")
    except Exception as error:
        wait = _backoff(row.attempts)
        _log.warning("outbox row %s not delivered (%s); again in %.1fs", row_id, error, wait)
        give_up = settings.active().mail_attempts
        delivery.retry_later(row_id, repr(error), datetime.now(UTC), wait, give_up)
        return 0
    return 1


def _mark_done(row_id: int, channel: str) -> None:
    """Mark a channel sent, trying a few times: once the server took the message,
    failing to write that down (a database connection killed) would send it again."""
    for attempt in range(_MARK_ATTEMPTS):
        try:
            delivery.channel_done(row_id, channel)
            return
        except OperationalError:
            if attempt == _MARK_ATTEMPTS - 1:
                raise
            _log.warning("outbox row %s sent but not marked yet; trying again", row_id)
            time.sleep(0.2 * (attempt + 1))


@app.task(name=DELIVER)
def deliver() -> int:
    return deliver_due()


@app.task(name=DEADLINES)
def sweep_deadlines(at: str | None = None) -> dict[str, list[str]]:
    """Reminders and timeouts due at `at` (ISO 8601; default: now), then send what they wrote."""
    moment = datetime.fromisoformat(at) if at else datetime.now(UTC)
    swept = deadlines.sweep_deadlines(moment)
    if swept.reminded or swept.timed_out:
        deliver_due()
    return {"reminded": swept.reminded, "timed_out": swept.timed_out}
