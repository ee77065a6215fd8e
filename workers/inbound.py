"""The inbound SMTP listener (`referee mail-in`): replies to turn mails become submissions.

A reply is addressed to `play+<token>@<domain>`; the token
(`referee.store.keys.reply_token`) names the game, the seat and the version
the answered mail showed, and is checked with the server's secret. What
cannot come from the seat is refused inside the SMTP conversation, so the
sending server bounces it to its own user and the referee never mails a
stranger: a forged or unknown token at RCPT (550), a From that is not the
seat's address at DATA (550), a message over `REFEREE_MAIL_MAX_BYTES`
(552). Mail from a machine (an auto-reply, a bounce, a list) is taken and
dropped without an answer. A reply that does come from the seat is
answered by mail: its move (`workers.reading`) is submitted like any REST
move, seen at the answered mail's version (the worker decides it and
mails the answer), `help` and `board` are answered at once, and text that
is no move gets a mail saying why. A second copy of a message (same
Message-ID) is taken and does nothing. Each message gets one log line.
"""

from __future__ import annotations

import asyncio
import hashlib
import logging
import re
import signal
import ssl
import threading
from dataclasses import dataclass
from email import policy
from email.message import EmailMessage
from email.parser import BytesParser
from typing import Any

from aiosmtpd.controller import Controller
from aiosmtpd.smtp import SMTP, Envelope, Session
from sqlalchemy.exc import IntegrityError

from referee import settings
from referee.engine import JSON, IllegalMove, Resign
from referee.games import AnyGame
from referee.queue import DECIDE, deliver_soon, enqueue
from referee.store import addresses, keys, reads, submissions
from referee.store.clock import now
from referee.store.db import transaction
from referee.store.notices import insert_notices
from referee.store.tables import Game, Inbound, Outbox, OutboxKind, Source
from workers import reading

_log = logging.getLogger(__name__)
_ADDRESS = re.compile(r"^play\+([a-z0-9]+)@", re.IGNORECASE)
# List-Unsubscribe's mailto: a mail to it stops the address its token names.
_STOP = re.compile(r"^stop\+([a-z0-9]+)@", re.IGNORECASE)


_MESSAGE_ID = re.compile(r"^<[^<>\s]{1,240}>$")


def message_key(message: EmailMessage, raw: bytes) -> str:
    """What names a message across copies: its Message-ID, or its bytes when it has none."""
    found = str(message.get("Message-ID", "")).strip()
    return hashlib.sha256(found.encode() if found else raw).hexdigest()


def message_id(message: EmailMessage) -> str | None:
    """The reply's Message-ID if it is one an answer may refer to, else None."""
    found = str(message.get("Message-ID", "")).strip()
    return found if _MESSAGE_ID.match(found) else None


# -- taking a reply in -------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class Taken:
    """The SMTP answer to one reply, and what the log line says of it."""

    answer: str
    outcome: str
    game_id: str | None = None
    seat: int | None = None


def take(raw: bytes, token: str, envelope_sender: str = "") -> Taken:
    """Take one reply for the seat `token` names."""
    named = keys.read_token(keys.server_secret(), token)
    if named is None:
        return Taken("550 5.1.1 this reply address is not valid", "bad address")
    game_id, seat = named.game_id, named.seat
    message = BytesParser(policy=policy.default).parsebytes(raw)
    assert isinstance(message, EmailMessage)
    robot = reading.automatic(message, envelope_sender)
    if robot is not None:
        # Taken and dropped: a bounce or an answer would only feed a mail loop.
        return Taken("250 2.0.0 automatic mail dropped", f"dropped ({robot})", game_id, seat)
    key = message_key(message, raw)
    found = reading.candidates(reading.body_text(message))
    submission = None
    with transaction() as session:
        game = session.get(Game, game_id)
        seats = reads.seats(session, game_id) if game is not None else []
        if game is None or seat >= len(seats):
            return Taken("550 5.1.1 this reply address is not valid", "bad address")
        address = seats[seat].email or ""
        if settings.active().mail_check_sender and not reading.same_address(
            reading.sender_of(message), address
        ):
            return Taken(
                "550 5.7.1 this address takes replies only from the seat's own mail address",
                "refused (not the seat's From)",
                game_id,
                seat,
            )
        reply_id = message_id(message)
        inbound = Inbound(
            message_key=key,
            game_id=game_id,
            seat=seat,
            received_at=now(),
            outcome="",
            message_id=reply_id,
        )
        session.add(inbound)
        try:
            session.flush()
        except IntegrityError:
            session.rollback()
            return Taken("250 2.0.0 this message was taken already", "duplicate", game_id, seat)
        rules = reads.rules_of(game)
        answered = True
        # The version the answered mail showed: a move is judged against it.
        seen = game.version if named.version is None else min(named.version, game.version)
        reply = Outbox(
            game_id=game.id,
            kind=OutboxKind.REFUSED,
            seat=seat,
            payload={"in_reply_to": reply_id},
            created_at=now(),
        )
        word = found[0].lower() if found else ""
        if word == "accept":
            # The seat's own address (the sender check above) says yes to our mail.
            known = addresses.find(session, address) if address else None
            inbound.outcome = "accepted"
            if known is not None:
                addresses.accept(session, known)
            answered = False
        elif not found:
            reply.payload["reason"] = "no move was found in your reply"
        elif word in (OutboxKind.HELP, OutboxKind.BOARD):
            reply.kind = OutboxKind(word)
            reply.payload["version"] = game.version
        else:
            move = _parse(rules, found, game.options)
            if isinstance(move, IllegalMove):
                reply.payload["reason"] = f"{found[0]!r}: {move.reason}"
            else:
                submission, _fresh = submissions.record(
                    session,
                    game_id,
                    seat,
                    rules.move_to_json(move),
                    source=Source.MAIL,
                    seen_version=seen,
                    idempotency_key=f"mail:{key}",
                )
                inbound.outcome = "submitted"
                inbound.submission_id = submission.id
        if submission is None and answered:
            inbound.outcome = reply.kind
            insert_notices(session.connection(), [reply.model_dump(exclude={"id"})])
        outcome = inbound.outcome
        session.add(inbound)
    # The worker decides the move and mails the answer; other answers go now.
    if submission is not None:
        enqueue(DECIDE, submission.id)
    else:
        deliver_soon()
    return Taken("250 2.0.0 taken", outcome, game_id, seat)


def _parse(rules: AnyGame, found: list[str], options: JSON) -> Any:
    """The move the first candidate that parses gives, else the first one's refusal."""
    refusal: IllegalMove | None = None
    for text in found:
        if text.lower() == "resign":
            return Resign()
        try:
            return rules.parse(text, options)
        except IllegalMove as refused:
            refusal = refusal or refused
    assert refusal is not None
    return refusal


def take_stop(token: str) -> str:
    """A mail to the `mailto:` of a List-Unsubscribe header: stop that address."""
    with transaction() as session:
        known = addresses.by_token(session, "stop", token)
        if known is None:
            return "550 5.1.1 this address is not valid"
        addresses.stop(session, known)
    return "250 2.0.0 no more mail to this address"


def _stop_known(token: str) -> bool:
    with transaction() as session:
        return addresses.by_token(session, "stop", token) is not None


# -- the listener ---------------------------------------------------------------


class Handler:
    """aiosmtpd's handler: checks addresses at RCPT, takes the reply at DATA."""

    async def handle_RCPT(
        self,
        server: SMTP,
        session: Session,
        envelope: Envelope,
        address: str,
        rcpt_options: list[str],
    ) -> str:
        loop = asyncio.get_running_loop()
        stopping = _STOP.match(address)
        if stopping is not None and not envelope.rcpt_tos:
            if not await loop.run_in_executor(None, _stop_known, stopping.group(1)):
                return "550 5.1.1 this address is not valid"
            envelope.rcpt_tos.append(address)
            return "250 2.1.5 OK"
        found = _ADDRESS.match(address)
        if found is None or len(envelope.rcpt_tos) >= 1:
            return "550 5.1.1 send one reply to one play+ address"
        secret = await asyncio.get_running_loop().run_in_executor(None, keys.server_secret)
        if keys.read_token(secret, found.group(1)) is None:
            _log.info("refused at RCPT: from=%s (not a valid reply address)", envelope.mail_from)
            return "550 5.1.1 this reply address is not valid"
        envelope.rcpt_tos.append(address)
        return "250 2.1.5 OK"

    async def handle_DATA(self, server: SMTP, session: Session, envelope: Envelope) -> str:
        loop = asyncio.get_running_loop()
        stopping = _STOP.match(envelope.rcpt_tos[0])
        if stopping is not None:
            return await loop.run_in_executor(None, take_stop, stopping.group(1))
        found = _ADDRESS.match(envelope.rcpt_tos[0])
        assert found is not None
        raw = envelope.original_content or b""
        sender = envelope.mail_from or ""
        taken = await asyncio.get_running_loop().run_in_executor(
            None, take, raw, found.group(1), sender
        )
        # One line per message, never the token: who, which game and seat, what became of it.
        _log.info(
            "mail in: from=%s game=%s seat=%s outcome=%s answer=%s",
            sender or "<>",
            taken.game_id or "-",
            "-" if taken.seat is None else taken.seat,
            taken.outcome,
            taken.answer[:3],
        )
        return taken.answer


def tls_context(chosen: settings.Settings) -> ssl.SSLContext | None:
    """The STARTTLS context of `REFEREE_MAIL_TLS_CERT` and `_KEY`, or None without them."""
    if chosen.mail_tls_cert is None or chosen.mail_tls_key is None:
        return None
    context = ssl.create_default_context(ssl.Purpose.CLIENT_AUTH)
    context.load_cert_chain(chosen.mail_tls_cert, chosen.mail_tls_key)
    return context


def serve(host: str, port: int, chosen: settings.Settings) -> None:
    """Listen until SIGTERM or SIGINT; `chosen` are this process's settings."""
    logging.basicConfig(level=logging.INFO, format="%(asctime)s %(name)s %(message)s")
    controller = Controller(
        Handler(),
        hostname=host,
        port=port,
        data_size_limit=chosen.mail_max_bytes,
        server_hostname=chosen.mail_domain,
        ready_timeout=30,
        tls_context=tls_context(chosen),
    )
    stop = threading.Event()
    for number in (signal.SIGTERM, signal.SIGINT):
        signal.signal(number, lambda *_args: stop.set())
    controller.start()
    try:
        stop.wait()
    finally:
        controller.stop()
