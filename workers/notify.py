"""Sending the outbox, and the deadline sweep, as Celery tasks.

Two tasks send the outbox, each for one channel, on the delivery queue
(`REFEREE_QUEUE.delivery`), never where moves are decided: `deliver` sends
mail, `deliver_hooks` posts webhooks. Each claims due rows (see
`referee.store.delivery`), builds each message for its seat, sends it and
marks its channel done at once. A refused or unreachable mail server puts
the row back with exponential backoff (`REFEREE_MAIL_BACKOFF` seconds,
doubling, at most `REFEREE_MAIL_BACKOFF_MAX`); a failing webhook puts its
seat into the same backoff and is switched off after
`REFEREE_WEBHOOK_MAX_FAILURES` failures in a row. A worker that dies
mid-send leaves its rows claimed until their lease (`REFEREE_MAIL_LEASE`
seconds) runs out, when another worker sends them.

Webhooks are posted from a few threads, one seat's in order, each post
bounded by `REFEREE_WEBHOOK_DEADLINE` in all: a slow receiver holds one
thread for at most that long and then waits out its backoff.

At most once, honestly: SMTP has no idempotency. If a worker dies after
the server said 250 but before the row was marked, the message goes out
again after the lease, with the same Message-ID (mail clients and many
servers drop such a copy). Nothing else sends a message twice.
"""

from __future__ import annotations

import json
import logging
import time
from collections import defaultdict
from concurrent.futures import ThreadPoolExecutor
from dataclasses import replace
from datetime import UTC, datetime

from sqlalchemy.exc import OperationalError
from sqlmodel import Session

from referee import settings
from referee.queue import DEADLINES, DELIVER, DELIVER_HOOKS, announce_changed, app, deliver_soon
from referee.store import addresses, deadlines, delivery, keys, reads
from referee.store.db import engine, transaction
from referee.store.tables import Game, Outbox, Seat
from workers import compose, transport

_log = logging.getLogger(__name__)
# Tries at marking a sent message (0.2 s, 0.4 s, ... apart) before it counts as unsent.
_MARK_ATTEMPTS = 5
# How long one delivery task goes on claiming more rows; the next sweep
# carries on. Well inside the tasks' soft time limit (referee.queue).
_TASK_SECONDS = 60.0
# Seats whose webhooks one task posts to at the same time.
_HOOK_THREADS = 8


def _backoff(attempts: int) -> float:
    chosen = settings.active()
    return float(min(chosen.mail_backoff * 2 ** max(attempts - 1, 0), chosen.mail_backoff_max))


def deliver_due(moment: datetime | None = None) -> int:
    """Send every due row (in batches); returns how many rows were finished."""
    finished = 0
    sender = transport.transport()
    secret = keys.server_secret()
    started = time.monotonic()
    try:
        while time.monotonic() - started < _TASK_SECONDS:
            moment = datetime.now(UTC) if moment is None else moment
            lease = settings.active().mail_lease
            claim = delivery.claim_due(moment, lease)
            if not claim.ids:
                break
            for row_id in claim.ids:
                if delivery.hold(row_id, claim, lease):
                    finished += _deliver_one(row_id, sender, secret)
            moment = None
    finally:
        sender.close()
    return finished


def _hook_open(seat: Seat | None) -> bool:
    return seat is not None and seat.webhook_url is not None and seat.webhook_off_at is None


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
    """Send one row's mail where its address may be mailed; its webhook is left to
    `deliver_hooks` (or settled, if none)."""
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
        attempts = row.attempts
        game = session.get(Game, row.game_id)
        trusted = game is not None and game.trusted
    consent = None
    if seat is not None and row.mail_at is None:
        consent = _consent(row, seat.email, trusted, secret)
    if consent is not None and not consent.ask and seat is not None and seat.linked_at is None:
        link_token = keys.seat_link_token(secret, row.game_id, seat.seat)
        consent = replace(consent, link=f"{compose.public_url()}/g/{row.game_id}/seat/{link_token}")
    if consent is not None:
        with Session(engine()) as session:
            built = session.get(Outbox, row_id)
            assert built is not None
            try:
                notice = compose.build(session, built, secret, consent)
            except OperationalError as error:
                # The database went away, not a fault of the row: retry it like a refused send.
                give_up = settings.active().mail_attempts
                failure = (repr(error), _backoff(attempts), give_up)
            except Exception:
                _log.exception("outbox row %s cannot be built", row_id)
                failure = ("cannot be built", 3600, 1)
    if failure is not None:
        delivery.retry_later(row_id, failure[0], datetime.now(UTC), failure[1], failure[2])
        return 0
    # With no active webhook the row's webhook channel is settled with its mail.
    channels = ("mail",) if _hook_open(seat) else ("mail", "hook")
    try:
        if notice is not None and notice.mail is not None:
            sender.send(notice.mail)
            if consent is not None and consent.link is not None and seat is not None:
                addresses.linked(row.game_id, seat.seat)
        _mark_done(row_id, *channels)
    except Exception as error:
        wait = _backoff(attempts)
        _log.warning("outbox row %s not mailed (%s); again in %.1fs", row_id, error, wait)
        give_up = settings.active().mail_attempts
        delivery.retry_later(row_id, repr(error), datetime.now(UTC), wait, give_up)
        return 0
    return 1


def deliver_hooks_due(moment: datetime | None = None) -> int:
    """Post every due webhook (in batches, seats in parallel); returns how many went."""
    finished = 0
    secret = keys.server_secret()
    started = time.monotonic()
    with ThreadPoolExecutor(_HOOK_THREADS, thread_name_prefix="referee-hook") as pool:
        while time.monotonic() - started < _TASK_SECONDS:
            moment = datetime.now(UTC) if moment is None else moment
            claim = delivery.claim_hooks(moment, settings.active().mail_lease)
            if not claim.ids:
                break
            seats: dict[tuple[str, int], list[int]] = defaultdict(list)
            for row_id in claim.ids:
                seats[claim.owners[row_id]].append(row_id)
            groups = list(seats.values())
            posted = pool.map(
                _post_seat,
                groups,
                [claim] * len(groups),
                [secret] * len(groups),
                [started] * len(groups),
            )
            finished += sum(posted)
            moment = None
    return finished


def _post_seat(ids: list[int], claim: delivery.Claim, secret: bytes, started: float) -> int:
    """Post one seat's rows in order; after a failure the rest wait for its backoff."""
    finished = 0
    for index, row_id in enumerate(ids):
        if time.monotonic() - started >= _TASK_SECONDS:
            rest = ids[index:]
        else:
            outcome = _post_one(row_id, claim, secret)
            if outcome is not None:
                finished += outcome
                continue
            rest = ids[index + 1 :]
        for other in rest:
            delivery.release_hook(other)
        return finished
    return finished


def _post_one(row_id: int, claim: delivery.Claim, secret: bytes) -> int | None:
    """Post one row's webhook: 1 done, 0 not ours or not now, None failed (seat backs off)."""
    chosen = settings.active()
    if not delivery.hold_hook(row_id, claim, chosen.mail_lease):
        return 0
    body: bytes | None = None
    database_gone = False
    with Session(engine()) as session:
        row = session.get(Outbox, row_id)
        assert row is not None and row.seat is not None
        game_id, seat_number = row.game_id, row.seat
        seat = reads.seats(session, game_id)[seat_number]
        url, failures = seat.webhook_url, seat.webhook_failures
        key = keys.webhook_secret(secret, game_id, seat_number, seat.webhook_generation)
        delivery_id = compose.message_id(row)
        if _hook_open(seat):
            try:
                notice = compose.build(session, row, secret, None)
                body = json.dumps(notice.data, sort_keys=True).encode("utf-8")
            except OperationalError:
                database_gone = True
            except Exception:
                _log.exception("outbox row %s cannot be built for its webhook", row_id)
    if database_gone:
        # Not the webhook's fault: the row goes back untried.
        delivery.release_hook(row_id)
        return 0
    if url is None or body is None:
        # Dropped or switched off meanwhile, or nothing to post: settled.
        delivery.channel_done(row_id, "hook")
        return 1
    try:
        transport.post_webhook(url, key, delivery_id, body)
    except Exception as error:
        reason = str(error) or type(error).__name__
        wait = _backoff(failures + 1)
        off = delivery.hook_failed(
            row_id,
            reason,
            datetime.now(UTC),
            wait,
            chosen.webhook_max_failures,
            chosen.mail_attempts,
        )
        _log.warning(
            "webhook of game %s seat %s failed (%s); %s",
            game_id,
            seat_number,
            reason,
            "switched off" if off else f"again in {wait:.1f}s",
        )
        return None
    _mark_done(row_id, "hook")
    return 1


def _mark_done(row_id: int, *channels: str) -> None:
    """Mark channels sent, trying a few times: once the server took the message,
    failing to write that down (a database connection killed) would send it again."""
    for attempt in range(_MARK_ATTEMPTS):
        try:
            if channels == ("hook",):
                delivery.hook_done(row_id)
            else:
                delivery.channel_done(row_id, *channels)
            return
        except OperationalError:
            if attempt == _MARK_ATTEMPTS - 1:
                raise
            _log.warning("outbox row %s sent but not marked yet; trying again", row_id)
            time.sleep(0.2 * (attempt + 1))


@app.task(name=DELIVER)
def deliver() -> int:
    return deliver_due()


@app.task(name=DELIVER_HOOKS)
def deliver_hooks() -> int:
    return deliver_hooks_due()


@app.task(name=DEADLINES)
def sweep_deadlines(at: str | None = None) -> dict[str, list[str]]:
    """Reminders and timeouts due at `at` (ISO 8601; default: now), then send what they wrote."""
    moment = datetime.fromisoformat(at) if at else datetime.now(UTC)
    swept = deadlines.sweep_deadlines(moment)
    for game_id in swept.timed_out:
        announce_changed(game_id)
    if swept.reminded or swept.timed_out:
        deliver_soon()
    return {"reminded": swept.reminded, "timed_out": swept.timed_out}
