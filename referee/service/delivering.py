"""Delivering notices: one job, run once per channel, on the delivery queue.

The job `referee.deliver` with a channel's name (`referee.delivery.CHANNELS`)
sends that channel's due deliveries; without one, it asks for a run of every
channel, each its own task, so a slow channel never holds another back.
Its task runs on the delivery queue (`REFEREE_QUEUE.delivery`), or on the
embedded default's delivery threads, never where moves are decided. Each
run claims due deliveries (`referee.store.delivery`), builds each notice's
content once, has the channel send it, and marks it at once. A channel
that merges (mail) is handed a seat's notices of one game together,
claimed together, and sends them as one message
(`referee.delivery.compose.together`); it may also hold some back a while
(`Later`: a turn mail while its seat's game page is open). A failure puts
the delivery back with exponential backoff (`REFEREE_MAIL_BACKOFF`
seconds, doubling, at most `REFEREE_MAIL_BACKOFF_MAX`) until
`REFEREE_MAIL_ATTEMPTS` attempts; a worker that dies mid-send leaves its
deliveries claimed until their lease (`REFEREE_MAIL_LEASE` seconds) runs
out, when another worker sends them.
"""

from __future__ import annotations

import logging
import threading
import time
from collections import defaultdict
from collections.abc import Callable, Sequence
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from datetime import UTC, datetime
from functools import partial
from typing import TYPE_CHECKING

from sqlalchemy.exc import OperationalError
from sqlmodel import Session

from referee import i18n
from referee.delivery import CHANNELS, compose, digest, seek_mail, speech
from referee.delivery.channel import Channel, Content, Later, Outcome, Sender, Sent, Skipped
from referee.store import addresses, delivery, reads
from referee.store.db import Database
from referee.store.delivery import Claim, Claimed
from referee.store.tables import TOLD_OF_SEEKS, TOLD_TO_PLAYER, Outbox, OutboxKind

if TYPE_CHECKING:
    from referee.service import Referee

_log = logging.getLogger(__name__)
# Tries at marking a sent notice (0.2 s, 0.4 s, ... apart) before it counts as unsent.
_MARK_ATTEMPTS = 5
# How long one delivery task goes on claiming more rows; the next sweep
# carries on. Well inside the tasks' soft time limit (referee.queue).
_TASK_SECONDS = 60.0
# Notices built lately, by database and id: a notice going out on several
# channels (or tried again) from this process is built once.
_BUILT: dict[tuple[str, int], Content] = {}
_BUILT_KEPT = 256
_built_lock = threading.Lock()
_BUILDERS: dict[str, Callable[[Session, Outbox, bytes, compose.Site], Content]] = {
    OutboxKind.DIGEST: digest.build,
    **dict.fromkeys(TOLD_OF_SEEKS, seek_mail.build),
}


# What answers one of the player's replies (or a move played for it): one per mail.
_ANSWERS = frozenset(
    {
        OutboxKind.ANSWER,
        OutboxKind.REFUSED,
        OutboxKind.PASSED_ON,
        OutboxKind.HELP,
        OutboxKind.BOARD,
        OutboxKind.REMATCH,
    }
)


class _Unbuildable(Exception):
    """A notice whose content cannot be built (not the database's fault)."""


def content(referee: Referee, notice_id: int) -> Content:
    """The content of a notice, built once per process while it is kept."""
    key = (referee.db.url, notice_id)
    found = _BUILT.get(key)
    if found is not None:
        return found
    site = compose.Site.of(referee.settings)
    # Closed before anything is written (SQLite: one write lock per file).
    with referee.db.reading() as session:
        notice = session.get(Outbox, notice_id)
        assert notice is not None
        told = _speech(session, notice)
        try:
            # A digest lists several games, the mails of open games their seeks; every
            # other notice tells of one game.
            builder = _BUILDERS.get(notice.kind, compose.build)
            with i18n.speaking(told.language, told.zone):
                built = builder(session, notice, referee.secret(), site)
        except OperationalError:
            raise
        except Exception as error:
            _log.exception("notice %s cannot be built", notice_id)
            raise _Unbuildable(repr(error)) from error
    if told.fix and notice.seat is not None:
        # The seat's first mail fixes the language of all its later ones.
        addresses.fix_language(referee.db, notice.game_id, notice.seat, told.language)
    with _built_lock:
        if len(_BUILT) >= _BUILT_KEPT:
            del _BUILT[next(iter(_BUILT))]
        _BUILT[key] = built
    return built


def _speech(session: Session, notice: Outbox) -> speech.Speech:
    """What a notice speaks: a seat's mail its seat's language, what is told to a
    player its player's (`referee.delivery.speech`)."""
    if notice.seat is None:
        return speech.Speech()
    seats = reads.seats(session, notice.game_id)
    email = seats[notice.seat].email if notice.seat < len(seats) else None
    if notice.kind in TOLD_TO_PLAYER:
        return speech.of_address(session, email)
    return speech.of_seat(session, notice.game_id, notice.seat)


@dataclass(frozen=True, slots=True)
class _Pass:
    """One run of a channel: its sender, its claim, and when it started."""

    referee: Referee
    channel: Channel
    sender: Sender
    claim: Claim
    started: float

    @property
    def db(self) -> Database:
        return self.referee.db


def deliver_due(referee: Referee, name: str, moment: datetime | None = None) -> int:
    """Send `name`'s due deliveries (in batches); returns how many were finished."""
    channel = CHANNELS[name]
    chosen = referee.settings
    sender = channel.sender(referee.db, chosen, referee.secret())
    started = time.monotonic()
    finished = 0
    try:
        with ThreadPoolExecutor(channel.threads, thread_name_prefix=f"referee-{name}") as pool:
            while time.monotonic() - started < _TASK_SECONDS:
                at = datetime.now(UTC) if moment is None else moment
                moment = None
                claim = delivery.claim(
                    referee.db,
                    name,
                    channel.ready,
                    at,
                    chosen.mail_lease,
                    in_order=channel.threads > 1,
                    whole_seats=channel.merges,
                )
                if not claim.rows:
                    break
                run = _Pass(referee, channel, sender, claim, started)
                finished += sum(pool.map(partial(_send_rows, run), _groups(run)))
    finally:
        sender.close()
    return finished


def _groups(run: _Pass) -> list[list[Claimed]]:
    """What one thread sends, in order: a seat's rows, or (one thread) every row."""
    if run.channel.threads == 1:
        return [run.claim.rows]
    seats: dict[tuple[str, int], list[Claimed]] = defaultdict(list)
    for row in run.claim.rows:
        seats[row.game_id, row.seat].append(row)
    return list(seats.values())


def _messages(run: _Pass, rows: list[Claimed]) -> list[list[Claimed]]:
    """The rows as the channel sends them, in order of their first notice: where it
    merges, a seat's notices of one game together (what is told to a player, a
    digest or a sign-in link, alone); otherwise one by one.

    A mail answers at most one of the player's replies (its `In-Reply-To`):
    a second answer starts the next mail. A seat taken over from a bot ends
    its mail: that mail lists every move so far, which a later notice's mail
    (the last moves) would not.
    """
    if not run.channel.merges:
        return [[row] for row in rows]
    together: dict[tuple[str, int], list[Claimed]] = {}
    messages: list[list[Claimed]] = []
    for row in rows:
        if row.kind in TOLD_TO_PLAYER:
            messages.append([row])
            continue
        seat = (row.game_id, row.seat)
        found = together.get(seat)
        answered = found is not None and any(told.kind in _ANSWERS for told in found)
        if found is None or (answered and row.kind in _ANSWERS):
            found = together[seat] = []
            messages.append(found)
        found.append(row)
        if row.kind == OutboxKind.SEAT_TAKEN:
            del together[seat]
    return messages


def _send_rows(run: _Pass, rows: list[Claimed]) -> int:
    """Send rows in order. With threads, a seat's rows after a failure are given back:
    they wait for its backoff."""
    finished = 0
    messages = _messages(run, rows)
    for index, message in enumerate(messages):
        if time.monotonic() - run.started >= _TASK_SECONDS:
            _release(run, [row for rest in messages[index:] for row in rest])
            break
        outcome = _send_message(run, message)
        if outcome is None and run.channel.threads > 1:
            _release(run, [row for rest in messages[index + 1 :] for row in rest])
            break
        finished += outcome or 0
    return finished


def _release(run: _Pass, rows: list[Claimed]) -> None:
    for row in rows:
        delivery.release(run.db, row.id)


def _send_message(run: _Pass, rows: list[Claimed]) -> int | None:
    """Send one message of rows: how many were finished (0: none ours or none now),
    None when it failed (each row is tried again later)."""
    lease = run.referee.settings.mail_lease
    ours = [row for row in rows if delivery.hold(run.db, row.id, run.claim, lease)]
    if not ours:
        return 0
    moment = run.claim.moment or datetime.now(UTC)
    try:
        outcomes = run.sender.send(ours, partial(_built, run.referee), moment)
    except OperationalError:
        # The database went away, not a fault of the rows: they go back untried.
        _release(run, ours)
        return 0
    except _Unbuildable as error:
        for row in ours:
            delivery.failed(run.db, row.id, f"cannot be built: {error}")
        return len(ours)
    except Exception as error:
        for row in ours:
            _failed(run, row, str(error) or type(error).__name__)
        return None
    return _settle_message(run.db, ours, outcomes)


def _settle_message(db: Database, rows: list[Claimed], outcomes: Sequence[Outcome]) -> int:
    """Write down what became of a message's rows: how many were finished."""
    went: list[tuple[Claimed, Sent]] = []
    for row, outcome in zip(rows, outcomes, strict=True):
        if isinstance(outcome, Later):
            delivery.later(db, row.id, outcome.until, outcome.reason)
        elif isinstance(outcome, Skipped):
            _mark(partial(delivery.skipped, db, row.id, outcome.reason), row)
        else:
            went.append((row, outcome))
    if went:
        _mark(partial(_sent, db, went), went[0][0])
    return sum(not isinstance(outcome, Later) for outcome in outcomes)


def _built(referee: Referee, rows: Sequence[Claimed]) -> Content:
    """The content of one notice, or of a seat's notices of one game as one mail."""
    if len(rows) == 1:
        return content(referee, rows[0].notice_id)
    parts = [content(referee, row.notice_id) for row in rows]
    composed = [part for part in parts if isinstance(part, compose.Composed)]
    if len(composed) != len(parts):
        raise _Unbuildable("only notices of a game are told together")
    return compose.together(composed)


def _failed(run: _Pass, row: Claimed, error: str) -> None:
    moment = datetime.now(UTC)
    wait = run.sender.failed(row, error, moment)
    if wait is None:
        return
    name = run.channel.name
    _log.warning("%s of notice %s failed (%s); again in %.1fs", name, row.notice_id, error, wait)
    delivery.retry_later(run.db, row.id, error, moment, wait, run.referee.settings.mail_attempts)


def _sent(db: Database, went: list[tuple[Claimed, Sent]]) -> None:
    for _row, outcome in went:
        if outcome.follow_up is not None:
            outcome.follow_up()
    delivery.sent(db, [row.id for row, _outcome in went])


def _mark(marking: Callable[[], None], row: Claimed) -> None:
    """Write down what became of a message, trying a few times: once a message was
    taken, failing to write that down (a database connection killed) would send it
    again."""
    for attempt in range(_MARK_ATTEMPTS):
        try:
            marking()
            return
        except OperationalError:
            if attempt == _MARK_ATTEMPTS - 1:
                raise
            _log.warning("notice %s sent but not marked yet; trying again", row.notice_id)
            time.sleep(0.2 * (attempt + 1))


def deliver(referee: Referee, channel: str | None = None) -> int:
    """Send one channel's due deliveries; without a channel, have every channel's sent."""
    if channel is None:
        referee.queue.deliver_soon()
        return 0
    return deliver_due(referee, channel)
