"""The inbound SMTP server (`referee mail-in`): replies to turn mails become submissions.

A reply is addressed to `play+<token>@<domain>`; the token
(`referee.store.keys.reply_token`) names the game, the seat and the version
the answered mail showed, and is checked with the server's secret. What
cannot come from the seat is refused inside the SMTP conversation, so the
sending server bounces it to its own user and the referee never mails a
stranger: a forged or unknown token at RCPT (550), a From that is not the
seat's address at DATA (550), a message over `REFEREE_MAIL_MAX_BYTES`
(552). Mail from a machine (an auto-reply, a bounce, a list) is taken and
dropped without an answer. This server reads the message (`mailin.reading`)
and hands what it found to the service (`referee.service.replies`), whose
refusals it answers with SMTP codes. Each message gets one log line.
"""

from __future__ import annotations

import asyncio
import hashlib
import logging
import re
import signal
import ssl
import threading
from dataclasses import dataclass, replace
from email import policy
from email.message import EmailMessage
from email.parser import BytesParser

from aiosmtpd.controller import Controller
from aiosmtpd.smtp import SMTP, Envelope, Session

from mailin import bounces, bounds, reading
from referee.service import Referee, consent, refusals
from referee.service.replies import DUPLICATE, Reply, reply_seat, screen_reply, take_reply
from referee.service.replies import Taken as TakenReply
from referee.settings import Settings

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


# What went wrong was the referee's, not the message's: the sending server tries again later.
_FAILED = "451 4.3.0 the referee could not take this message now; try again later"

# The service's refusals of a reply, as SMTP answers.
_REFUSED = {
    refusals.NotFound: ("550 5.1.1", "bad address"),
    refusals.Unauthorized: ("550 5.7.1", "refused (not the seat's From)"),
}


def take(referee: Referee, raw: bytes, token: str, envelope_sender: str = "") -> Taken:
    """Take one reply for the seat `token` names.

    What needs only the headers comes first (machine mail, the sender, a
    second copy), then the message's size in parts, nesting and lines
    (`mailin.bounds`), and only then is its text parsed and read.
    """
    head = bounds.head_of(raw)
    reply = Reply(
        token=token,
        message_key=message_key(head, raw),
        message_id=message_id(head),
        sender=reading.sender_of(head),
        automatic=reading.automatic(head, envelope_sender),
    )
    try:
        if reply.automatic is None:
            screened = screen_reply(referee, reply)
            if screened.outcome == DUPLICATE:
                return Taken("250 2.0.0 this message was taken already", *_logged(screened))
            problem = bounds.beyond_bounds(raw)
            if problem is not None:
                answer = f"554 5.6.0 this message cannot be read: {problem}"
                return Taken(answer, "unreadable", screened.game_id, screened.seat)
            reply = _read(reply, raw)
        taken = take_reply(referee, reply)
    except (refusals.NotFound, refusals.Unauthorized) as refused:
        code, outcome = _REFUSED[type(refused)]
        extra = refused.extra
        return Taken(f"{code} {refused.reason}", outcome, extra.get("game_id"), extra.get("seat"))
    if taken.outcome == DUPLICATE:
        answer = "250 2.0.0 this message was taken already"
    elif taken.outcome.startswith("dropped"):
        answer = "250 2.0.0 automatic mail dropped"
    else:
        answer = "250 2.0.0 taken"
    return Taken(answer, *_logged(taken))


def _logged(taken: TakenReply) -> tuple[str, str, int]:
    return taken.outcome, taken.game_id, taken.seat


def _read(reply: Reply, raw: bytes) -> Reply:
    """The reply with the player's own text read from the whole message."""
    message = BytesParser(policy=policy.default).parsebytes(raw)
    assert isinstance(message, EmailMessage)
    return replace(
        reply,
        paragraphs=reading.reply_paragraphs(message),
        subject=reading.subject_words(message),
    )


def take_stop(referee: Referee, token: str) -> str:
    """A mail to the `mailto:` of a List-Unsubscribe header: stop that address."""
    try:
        consent.stop_address(referee, token)
    except refusals.NotFound:
        return "550 5.1.1 this address is not valid"
    return "250 2.0.0 no more mail to this address"


def _stop_known(referee: Referee, token: str) -> bool:
    try:
        consent.check_link(referee, consent.STOP, token)
    except refusals.NotFound:
        return False
    return True


# -- the listener ---------------------------------------------------------------


class Handler:
    """aiosmtpd's handler: checks addresses at RCPT, takes the reply at DATA."""

    def __init__(self, referee: Referee) -> None:
        self.referee = referee

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
            if not await loop.run_in_executor(None, _stop_known, self.referee, stopping.group(1)):
                return "550 5.1.1 this address is not valid"
            envelope.rcpt_tos.append(address)
            return "250 2.1.5 OK"
        bouncing = bounces.ADDRESS.match(address)
        if bouncing is not None and not envelope.rcpt_tos:
            sender, token = envelope.mail_from or "", bouncing.group(1)
            answer = await loop.run_in_executor(
                None, bounces.check_recipient, self.referee, sender, token
            )
            if answer.startswith("250"):
                envelope.rcpt_tos.append(address)
            return answer
        found = _ADDRESS.match(address)
        if found is None or len(envelope.rcpt_tos) >= 1:
            return "550 5.1.1 send one reply to one play+ address"
        try:
            await loop.run_in_executor(None, reply_seat, self.referee, found.group(1))
        except refusals.NotFound:
            _log.info("refused at RCPT: from=%s (not a valid reply address)", envelope.mail_from)
            return "550 5.1.1 this reply address is not valid"
        envelope.rcpt_tos.append(address)
        return "250 2.1.5 OK"

    async def handle_DATA(self, server: SMTP, session: Session, envelope: Envelope) -> str:
        loop = asyncio.get_running_loop()
        stopping = _STOP.match(envelope.rcpt_tos[0])
        if stopping is not None:
            return await loop.run_in_executor(None, take_stop, self.referee, stopping.group(1))
        bouncing = bounces.ADDRESS.match(envelope.rcpt_tos[0])
        if bouncing is not None:
            report = envelope.original_content or b""
            return await loop.run_in_executor(
                None, bounces.take, self.referee, report, bouncing.group(1)
            )
        found = _ADDRESS.match(envelope.rcpt_tos[0])
        assert found is not None
        raw = envelope.original_content or b""
        sender = envelope.mail_from or ""
        token = found.group(1)
        try:
            taken = await loop.run_in_executor(None, take, self.referee, raw, token, sender)
        except Exception as error:
            # The sender gets an SMTP answer, never Python's words; the log gets the error's kind.
            taken = Taken(_FAILED, f"failed ({type(error).__name__})")
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

    async def handle_exception(self, error: Exception) -> str:
        """Any other command that failed: a temporary SMTP answer, and one log line."""
        _log.warning("mail in: failed (%s)", type(error).__name__)
        return _FAILED


def tls_context(chosen: Settings) -> ssl.SSLContext | None:
    """The STARTTLS context of `REFEREE_MAIL_TLS_CERT` and `_KEY`, or None without them."""
    if chosen.mail_tls_cert is None or chosen.mail_tls_key is None:
        return None
    context = ssl.create_default_context(ssl.Purpose.CLIENT_AUTH)
    context.load_cert_chain(chosen.mail_tls_cert, chosen.mail_tls_key)
    return context


def serve(referee: Referee, host: str, port: int) -> None:
    """Listen until SIGTERM or SIGINT, taking replies for `referee`."""
    logging.basicConfig(level=logging.INFO, format="%(asctime)s %(name)s %(message)s")
    # aiosmtpd logs each command, a reply address's token with it: our line per message is enough.
    logging.getLogger("mail.log").setLevel(logging.WARNING)
    chosen = referee.settings
    controller = Controller(
        Handler(referee),
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
