"""Sending the outbox, and the deadline sweep, as Celery tasks.

`deliver` claims due outbox rows (see `referee.store.mailbox`), builds each
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
import os
import time
from datetime import UTC, datetime

from sqlalchemy.exc import OperationalError
from sqlmodel import Session

from referee.queue import DEADLINES, DELIVER, app
from referee.store import mailbox, ops
from referee.store.db import engine
from referee.store.tables import Outbox
from workers import compose, transport

_log = logging.getLogger(__name__)
# Tries at marking a sent message (0.2 s, 0.4 s, ... apart) before it counts as unsent.
_MARK_ATTEMPTS = 5


def _setting(name: str, default: float) -> float:
    return float(os.environ.get(name, default))


def _backoff(attempts: int) -> float:
    base = _setting("REFEREE_MAIL_BACKOFF", 30)
    return float(min(base * 2 ** max(attempts - 1, 0), _setting("REFEREE_MAIL_BACKOFF_MAX", 3600)))


def deliver_due(moment: datetime | None = None, url: str | None = None) -> int:
    """Send every due row (in batches); returns how many rows were finished."""
    finished = 0
    sender = transport.transport()
    secret = mailbox.server_secret(url)
    try:
        while True:
            moment = datetime.now(UTC) if moment is None else moment
            lease = _setting("REFEREE_MAIL_LEASE", 120)
            claim = mailbox.claim_due(moment, lease, url=url)
            if not claim.ids:
                return finished
            for row_id in claim.ids:
                if mailbox.hold(row_id, claim, lease, url):
                    finished += _deliver_one(row_id, sender, secret, url)
            moment = None
    finally:
        sender.close()


def _deliver_one(row_id: int, sender: transport.Transport, secret: bytes, url: str | None) -> int:
    # The reading session is closed before anything is written: on SQLite
    # every transaction takes the file's one write lock (BEGIN IMMEDIATE), so
    # a write opened while this session is still open would wait on this
    # very thread until the busy timeout, freezing the embedded server.
    notice: compose.Notice | None = None
    failure: tuple[str, float, int] | None = None
    with Session(engine(url)) as session:
        row = session.get(Outbox, row_id)
        assert row is not None and row.id is not None
        seat = None if row.seat is None else ops.seats(session, row.game_id)[row.seat]
        if seat is not None and (seat.email or seat.webhook_url):
            try:
                notice = compose.build(session, row, secret)
            except OperationalError as error:
                # The database went away, not a fault of the row: retry it like a refused send.
                give_up = int(_setting("REFEREE_MAIL_ATTEMPTS", 25))
                failure = (repr(error), _backoff(row.attempts), give_up)
            except Exception:
                _log.exception("outbox row %s cannot be built", row_id)
                failure = ("cannot be built", 3600, 1)
    if failure is not None:
        mailbox.retry_later(row_id, failure[0], datetime.now(UTC), failure[1], failure[2], url)
        return 0
    if seat is None or notice is None:
        # Nowhere to send it: done without building anything.
        mailbox.channel_done(row_id, "mail", "hook", url=url)
        return 1
    try:
        if row.mail_at is None:
            if notice.mail is not None:
                sender.send(notice.mail)
            _mark_done(row_id, "mail", url)
        if row.hook_at is None:
            if seat.webhook_url:
                body = json.dumps(notice.data, sort_keys=True).encode("utf-8")
                key = mailbox.webhook_secret(secret, row.game_id, seat.seat)
                transport.post_webhook(seat.webhook_url, key, compose.message_id(row), body)
            _mark_done(row_id, "hook", url)
    except Exception as error:
        wait = _backoff(row.attempts)
        _log.warning("outbox row %s not delivered (%s); again in %.1fs", row_id, error, wait)
        give_up = int(_setting("REFEREE_MAIL_ATTEMPTS", 25))
        mailbox.retry_later(row_id, repr(error), datetime.now(UTC), wait, give_up, url)
        return 0
    return 1


def _mark_done(row_id: int, channel: str, url: str | None) -> None:
    """Mark a channel sent, trying a few times: once the server took the message,
    failing to write that down (a database connection killed) would send it again."""
    for attempt in range(_MARK_ATTEMPTS):
        try:
            mailbox.channel_done(row_id, channel, url=url)
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
def deadlines(at: str | None = None) -> dict[str, list[str]]:
    """Reminders and timeouts due at `at` (ISO 8601; default: now), then send what they wrote."""
    moment = datetime.fromisoformat(at) if at else datetime.now(UTC)
    swept = mailbox.sweep_deadlines(moment)
    if swept.reminded or swept.timed_out:
        deliver_due()
    return {"reminded": swept.reminded, "timed_out": swept.timed_out}
