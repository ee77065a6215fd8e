"""The mail channel: seats with a mail address, sent over SMTP (`SMTP_URL`) or as files.

`SMTP_URL` is `smtp://[user:password@]host[:port]` (`smtps://` for TLS from
the start, `smtp+starttls://` to upgrade); without it every message is
written as a `.eml` file to `REFEREE_MAIL_DIR` (default `./mail-out`),
which is the embedded default. Files are named by Message-ID, so writing a
message again replaces it instead of making a second one.

Whether an address may be mailed is asked at send time
(`referee.store.addresses`): an address that has not accepted gets its one
invitation asking it to, and nothing else; a stopped address gets
nothing, nor does one whose mail bounced too often (`referee.store.bounce_reports`:
such a seat is not reached at all). Nor is what the player's own settings
withhold (`referee.delivery.wishes`: turn mail, reminders, muted games), asked
at send time as well. The seat's personal link rides on its first full mail.
Every mail's envelope sender is `bounce+<token>@<domain>`, the token naming
its recipient's address, so that `referee mail-in` can read delivery reports
and know whose they are.

At most once, honestly: SMTP has no idempotency. If a worker dies after
the server said 250 but before the delivery was marked, the message goes
out again after the lease, with the same Message-ID (mail clients and many
servers drop such a copy). A live worker never lets that happen: handing
one message over (connecting included) has a deadline in all, half the
lease (`send_deadline`), beside the timeout of each read and write. A relay
that answers a byte at a time meets no read timeout, and would otherwise
hold the send past the lease, when another worker claims the row and
sends it too; at the deadline the connection is shut and the send failed,
to be tried again after its backoff.
"""

from __future__ import annotations

import contextlib
import hashlib
import smtplib
import socket
import threading
from abc import ABC, abstractmethod
from collections.abc import Sequence
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from email.message import EmailMessage
from functools import partial
from pathlib import Path
from urllib.parse import unquote, urlsplit

import sqlalchemy as sa

from referee.delivery import mail_consent, talk_lines, wishes
from referee.delivery.channel import Build, Consent, Later, Outcome, Sent, Skipped, backoff
from referee.settings import Settings
from referee.store import (
    addresses,
    bounce_reports,
    delivery,
    keys,
    mail_settings,
    page_views,
    reads,
)
from referee.store.db import Database
from referee.store.delivery import Claimed
from referee.store.tables import TOLD_TO_PLAYER, Address, AddressState, Game, OutboxKind

NAME = "mail"
TIMEOUT = 20.0
# What a seat's game page shows as well as its mail: held back while the page is open.
_PAGE_SHOWS = frozenset({OutboxKind.YOUR_TURN, OutboxKind.ROUND_OVER})
PAGE_OPEN = "held: the seat's game page is open"
ANSWERED_ON_PAGE = "the seat answered on its game page, which was open"


class Transport(ABC):
    """Sends mail; may keep one SMTP connection across several messages."""

    @abstractmethod
    def send(self, mail: EmailMessage, envelope_sender: str | None = None) -> None:
        """Hand one message over for delivery, from `envelope_sender` (where reports of
        its delivery go back; None: its `From`); raises when it was not taken."""

    def close(self) -> None:  # noqa: B027 (most transports hold no connection)
        """Let go of any connection."""


class FileTransport(Transport):
    def __init__(self, folder: Path) -> None:
        self.folder = folder

    def send(self, mail: EmailMessage, envelope_sender: str | None = None) -> None:
        self.folder.mkdir(parents=True, exist_ok=True)
        name = hashlib.sha256(str(mail["Message-ID"]).encode()).hexdigest()[:32] + ".eml"
        partial = self.folder / (name + ".part")
        partial.write_bytes(bytes(mail))
        partial.replace(self.folder / name)


def send_deadline(settings: Settings) -> float:
    """How long handing one message to the SMTP server may take in all: half the
    lease, the other half left for building it and marking it sent."""
    return settings.mail_lease / 2


class SendTooSlow(OSError):
    """The SMTP server did not take the message within the send's deadline."""


class SmtpTransport(Transport):
    def __init__(self, url: str, deadline: float = TIMEOUT) -> None:
        self.deadline = deadline
        # The connection being made or used, for the deadline to shut.
        self._socket: socket.socket | None = None
        self._late = threading.Event()
        parts = urlsplit(url)
        self.tls = parts.scheme == "smtps"
        self.starttls = parts.scheme == "smtp+starttls"
        self.host = parts.hostname or "127.0.0.1"
        self.port = parts.port or (465 if self.tls else 25)
        self.user = unquote(parts.username) if parts.username else None
        self.password = unquote(parts.password) if parts.password else None
        self.connection: smtplib.SMTP | None = None

    def _connect(self) -> smtplib.SMTP:
        if self.connection is None:
            kind = smtplib.SMTP_SSL if self.tls else smtplib.SMTP
            # Not connected yet: the deadline can shut it while the greeting trickles in.
            connection = kind(timeout=TIMEOUT)
            self.connection = connection
            connection.connect(self.host, self.port)
            self._made(connection)
            if self.starttls:
                connection.starttls()
                self._made(connection)
            if self.user is not None:
                connection.login(self.user, self.password or "")
        return self.connection

    def _made(self, connection: smtplib.SMTP) -> None:
        self._socket = connection.sock
        if self._late.is_set():
            self._shut()

    def _shut(self) -> None:
        """Cut the exchange short: whatever the SMTP client waits on fails at once."""
        self._late.set()
        if self._socket is not None:
            with contextlib.suppress(OSError):
                self._socket.shutdown(socket.SHUT_RDWR)

    def send(self, mail: EmailMessage, envelope_sender: str | None = None) -> None:
        self._late.clear()
        watchdog = threading.Timer(self.deadline, self._shut)
        watchdog.daemon = True
        watchdog.start()
        error: Exception | None = None
        try:
            refused = self._connect().send_message(mail, from_addr=envelope_sender)
        except (smtplib.SMTPException, OSError) as failed:
            error = failed
        finally:
            watchdog.cancel()
        if self._late.is_set():
            # Even an answer read whole: smtplib takes the part of a line read before
            # the shutdown for the line, so a `250` cut short looks like one.
            self.close()
            raise SendTooSlow(
                f"the SMTP server took more than {self.deadline:g} s to take the message"
            ) from error
        if error is not None:
            self.close()
            raise error
        if refused:
            raise smtplib.SMTPRecipientsRefused(refused)

    def close(self) -> None:
        if self.connection is None:
            return
        # Saying goodbye has its own deadline: a trickling relay holds no worker here.
        watchdog = threading.Timer(TIMEOUT, self._shut)
        watchdog.daemon = True
        watchdog.start()
        try:
            if not self._late.is_set():
                self.connection.quit()
        except (smtplib.SMTPException, OSError):
            pass
        finally:
            watchdog.cancel()
            self.connection.close()
            self.connection = None
            self._socket = None


def transport(settings: Settings) -> Transport:
    if settings.smtp_url:
        return SmtpTransport(settings.smtp_url, send_deadline(settings))
    return FileTransport(Path(settings.mail_dir))


@dataclass(frozen=True, slots=True)
class _Recipient:
    """A seat's address as sending finds it."""

    email: str | None
    linked: bool
    trusted: bool


def _recipient(db: Database, job: Claimed) -> _Recipient:
    # A reading session, closed before anything is written: on SQLite every
    # write takes the file's one lock, and a write opened while this session
    # is open would wait on this very thread.
    with db.reading() as session:
        seat = reads.seats(session, job.game_id)[job.seat]
        game = session.get(Game, job.game_id)
        return _Recipient(seat.email, seat.linked_at is not None, bool(game and game.trusted))


def _known(db: Database, secret: bytes, email: str) -> Address:
    with db.reading() as session:
        found = addresses.find(session, email)
    if found is None:
        # A game made before addresses were kept.
        with db.transaction() as session:
            addresses.ensure(session, secret, email)
        with db.reading() as session:
            found = addresses.find(session, email)
    assert found is not None
    return found


class MailSender:
    """Sends one pass's mail over one transport (one SMTP connection)."""

    def __init__(self, db: Database, settings: Settings, secret: bytes) -> None:
        self.db = db
        self.settings = settings
        self.secret = secret
        self.transport = transport(settings)

    def consent(self, job: Claimed, known: Address, recipient: _Recipient) -> Consent | str:
        """How this notice may mail its seat's address, or why it may not, asked now."""
        email = known.address
        if known.bounced_at is not None:
            return f"mail to the address bounced {known.bounces} times"
        mode = mail_consent.mail_mode(known, recipient.trusted, job.kind)
        if mode == mail_consent.NONE:
            if known.state == AddressState.STOPPED:
                return "the address stopped the referee's mail"
            return "the address has not accepted the referee's mail"
        if mode == mail_consent.ASK:
            moment = datetime.now(UTC)
            every = self.settings.invite_every
            if not addresses.claim_invitation(self.db, email, job.notice_id, moment, every):
                return "the address was invited by another game lately"
            return Consent(True, known.accept_token, known.stop_token)
        link = None
        # A sign-in link or a digest says nothing of the game whose seat carries it.
        if not recipient.linked and job.kind not in TOLD_TO_PLAYER:
            token = keys.seat_link_token(self.secret, job.game_id, job.seat)
            link = f"{self.settings.public_url}/g/{job.game_id}/seat/{token}"
        return Consent(False, known.accept_token, known.stop_token, link)

    def withheld(self, job: Claimed, known: Address) -> str | None:
        """Why the player's own settings (`referee.delivery.wishes`) keep this notice back."""
        with self.db.reading() as session:
            muted = mail_settings.muted(session, known.address, job.game_id)
        return wishes.withheld(job.kind, mail_settings.settings_of(known), muted)

    def send(self, jobs: Sequence[Claimed], build: Build, moment: datetime) -> list[Outcome]:
        """Send a seat's notices of one game (or one told to its player) as one mail."""
        first = jobs[0]
        recipient = _recipient(self.db, first)
        if not recipient.email:
            return [Skipped("the seat has no mail address")] * len(jobs)
        held = self._held(jobs, moment)
        if held is not None:
            return [held] * len(jobs)
        known = _known(self.db, self.secret, recipient.email)
        answered = self._answered_on_page(jobs)
        outcomes: dict[int, Outcome] = {}
        full: list[tuple[Claimed, Consent]] = []
        for job in jobs:
            why = answered if job.kind in _PAGE_SHOWS and answered else self.withheld(job, known)
            consent = self.consent(job, known, recipient) if why is None else why
            if isinstance(consent, str):
                outcomes[job.id] = Skipped(consent)
            elif consent.ask:
                # The one invitation asking to accept goes alone: nothing else does.
                outcomes[job.id] = self._mail([job], build, recipient.email, known, consent)
            else:
                full.append((job, consent))
        if full:
            together = [job for job, _consent in full]
            # The seat's link rides once, on the mail carrying its first notice.
            consent = full[0][1]
            sent = self._mail(together, build, recipient.email, known, consent)
            for job in together:
                outcomes[job.id] = sent if job is together[0] else Sent()
        return [outcomes[job.id] for job in jobs]

    def _held(self, jobs: Sequence[Claimed], moment: datetime) -> Later | None:
        """Hold a turn mail back while its seat's page is open (seen within the hold),
        until the hold has passed since its latest notice: answered there, it is not sent."""
        hold = timedelta(seconds=self.settings.mail_page_hold)
        if not hold or not any(job.kind in _PAGE_SHOWS for job in jobs):
            return None
        latest = max(datetime.fromisoformat(job.created_at) for job in jobs)
        if moment >= latest + hold:
            return None
        with self.db.reading() as session:
            seen = page_views.seen_at(session, jobs[0].game_id, jobs[0].seat)
        if seen is None or datetime.fromisoformat(seen) < moment - hold:
            return None
        return Later(latest + hold, PAGE_OPEN)

    def _answered_on_page(self, jobs: Sequence[Claimed]) -> str | None:
        """Why the turn of these notices is not mailed: its seat, whose page was open,
        moved since (the page showed it all). None: it goes."""
        turns = [job for job in jobs if job.kind in _PAGE_SHOWS]
        if not turns or not self.settings.mail_page_hold:
            return None
        first = turns[0]
        hold = timedelta(seconds=self.settings.mail_page_hold)
        with self.db.reading() as session:
            seen = page_views.seen_at(session, first.game_id, first.seat)
            since = datetime.fromisoformat(min(job.created_at for job in turns)) - hold
            if seen is None or datetime.fromisoformat(seen) < since:
                return None
            versions = page_views.versions(session, [job.notice_id for job in turns])
            if not versions:
                return None
            version = max(versions.values())
            if page_views.moved_after(session, first.game_id, first.seat, version):
                return ANSWERED_ON_PAGE
        return None

    def _mail(
        self, jobs: list[Claimed], build: Build, email: str, known: Address, consent: Consent
    ) -> Sent:
        """Mail the notices of `jobs` as one message to `email`."""
        first = jobs[0]
        root = None
        # What is told to the player is threaded apart from the game of the seat carrying it.
        if first.kind not in TOLD_TO_PLAYER:
            found = delivery.first_sent(self.db, NAME, first.game_id, first.seat, first.notice_id)
            if found is not None:
                root = message_id(self.settings.mail_domain, found, first.game_id)
        # Reports of this mail's delivery come back to an address naming its recipient (VERP).
        token = bounce_reports.token_of(self.db, self.secret, known)
        bounce_to = f"bounce+{token}@{self.settings.mail_domain}"
        content = build(jobs)
        self.transport.send(content.mail(email, consent, root), bounce_to)
        # The one invitation asking to accept shows nothing of the game: no message seen.
        seen = () if consent.ask else content.talk_seen
        if consent.link is None and not seen:
            return Sent()
        return Sent(partial(self._followed, first, consent.link is not None, seen))

    def _followed(self, job: Claimed, linked: bool, seen: tuple[tuple[str, int, int], ...]) -> None:
        """What follows from a mail that went out: its link sent, its messages seen."""
        if linked:
            addresses.linked(self.db, job.game_id, job.seat)
        talk_lines.mark_seen(self.db, seen)

    def failed(self, job: Claimed, error: str, moment: datetime) -> float:
        return backoff(self.settings, job.attempts)

    def close(self) -> None:
        self.transport.close()


def message_id(domain: str, notice_id: int, game_id: str) -> str:
    """The Message-ID of a notice's mail (stable: every attempt carries the same)."""
    return f"<referee.{notice_id}.{game_id}@{domain}>"


class Mail:
    """Seats with a mail address."""

    name = NAME
    threads = 1
    # A seat's notices of one game waiting together go as one mail.
    merges = True

    def reaches(self, seat: sa.Table) -> sa.ColumnElement[bool]:
        # Not an address whose mail bounced too often (until it shows a sign of life).
        has_address = seat.c.email.is_not(None) & (seat.c.email != "")
        return has_address & ~addresses.bounced_out(seat.c.email)

    def carries(self, kind: sa.ColumnElement[str]) -> sa.ColumnElement[bool]:
        return sa.true()

    def ready(self, seat: sa.Table, at: str) -> sa.ColumnElement[bool]:
        return sa.true()

    def sender(self, db: Database, settings: Settings, secret: bytes) -> MailSender:
        return MailSender(db, settings, secret)


MAIL = Mail()
