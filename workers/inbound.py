"""The inbound SMTP listener (`referee mail-in`): replies to turn mails become submissions.

A reply is addressed to `play+<token>@<domain>`; the token (see
`referee.store.mailbox.reply_token`) names the game and the seat and is
checked with the server's secret. What cannot come from the seat is refused
inside the SMTP conversation, so the sending server bounces it to its own
user and the referee never mails a stranger: a forged or unknown token at
RCPT (550), a From that is not the seat's address at DATA (550), a message
over `REFEREE_MAIL_MAX_BYTES` (552). A reply that does come from the seat is
answered by mail: its move is submitted like any REST move (the worker
decides it and mails the answer), `help` and `board` are answered at once,
and a first line that is no move gets a mail saying why. A second copy of
a message (same Message-ID) is taken and does nothing.
"""

from __future__ import annotations

import asyncio
import hashlib
import re
import signal
import threading
from email import policy
from email.message import EmailMessage
from email.parser import BytesParser
from email.utils import getaddresses
from html.parser import HTMLParser

from aiosmtpd.controller import Controller
from aiosmtpd.smtp import SMTP, Envelope, Session
from sqlalchemy.exc import IntegrityError

from referee import settings
from referee.engine import IllegalMove, Resign
from referee.queue import DECIDE, deliver_soon, enqueue
from referee.store import addresses, keys, reads, submissions
from referee.store.clock import now
from referee.store.db import transaction
from referee.store.tables import Game, Inbound, Outbox, OutboxKind, Source

MAX_LINE = 400
_ADDRESS = re.compile(r"^play\+([a-z0-9]+)@", re.IGNORECASE)
# List-Unsubscribe's mailto: a mail to it stops the address its token names.
_STOP = re.compile(r"^stop\+([a-z0-9]+)@", re.IGNORECASE)
_ATTRIBUTION = re.compile(r"(wrote|writes|a écrit|schrieb|escribió)\s*:\s*$", re.IGNORECASE)
_FORWARD = re.compile(r"^-{2,}\s*(original message|forwarded message)", re.IGNORECASE)


# -- reading a reply -------------------------------------------------------------


class _HtmlText(HTMLParser):
    """HTML to text lines, with blockquotes quoted by `>` as a text mail would be."""

    BLOCKS = frozenset({"p", "div", "br", "li", "tr", "h1", "h2", "h3", "pre", "blockquote"})

    def __init__(self) -> None:
        super().__init__(convert_charrefs=True)
        self.lines: list[str] = [""]
        self.depth = 0
        self.skip = 0

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        if tag in ("style", "script", "head", "title"):
            self.skip += 1
        if tag in self.BLOCKS:
            self.lines.append("")
        if tag == "blockquote":
            self.depth += 1

    def handle_endtag(self, tag: str) -> None:
        if tag in ("style", "script", "head", "title"):
            self.skip = max(self.skip - 1, 0)
        if tag == "blockquote":
            self.depth = max(self.depth - 1, 0)
        if tag in self.BLOCKS:
            self.lines.append("")

    def handle_data(self, data: str) -> None:
        if self.skip:
            return
        for number, piece in enumerate(data.split("\n")):
            if number:
                self.lines.append("")
            if not self.lines[-1] and self.depth and piece.strip():
                self.lines[-1] = "> " * self.depth
            self.lines[-1] += piece


def html_text(html: str) -> str:
    parser = _HtmlText()
    parser.feed(html)
    parser.close()
    return "\n".join(line.replace("\xa0", " ") for line in parser.lines)


def body_text(message: EmailMessage) -> str:
    """The reply's own text: its plain part, else its HTML part as text; attachments ignored."""
    part = message.get_body(preferencelist=("plain", "html"))
    if part is None:
        return ""
    try:
        content = part.get_content()
    except (LookupError, ValueError):
        return ""
    if not isinstance(content, str):
        return ""
    return html_text(content) if part.get_content_type() == "text/html" else content


def first_line(text: str) -> str | None:
    """The first line that is not quoted, blank, an attribution or below a signature."""
    lines = text.splitlines()
    for number, raw in enumerate(lines):
        line = raw.strip()
        if raw.rstrip() == "--" or _FORWARD.match(line) or line.startswith("_____"):
            return None
        if not line or line.startswith(">"):
            continue
        if _ATTRIBUTION.search(line) and _quoted_next(lines, number):
            continue
        return line[:MAX_LINE]
    return None


def _quoted_next(lines: list[str], number: int) -> bool:
    for raw in lines[number + 1 :]:
        if raw.strip():
            return raw.lstrip().startswith(">")
    return False


def message_key(message: EmailMessage, raw: bytes) -> str:
    """What names a message across copies: its Message-ID, or its bytes when it has none."""
    found = str(message.get("Message-ID", "")).strip()
    return hashlib.sha256(found.encode() if found else raw).hexdigest()


def sender_of(message: EmailMessage) -> str:
    found = getaddresses([str(message.get("From", ""))])
    return found[0][1].strip().lower() if len(found) == 1 else ""


# -- taking a reply in -------------------------------------------------------------


def take(raw: bytes, token: str) -> str:
    """Take one reply for the seat `token` names; returns the SMTP answer."""
    named = keys.read_token(keys.server_secret(), token)
    if named is None:
        return "550 5.1.1 this reply address is not valid"
    game_id, seat = named
    message = BytesParser(policy=policy.default).parsebytes(raw)
    assert isinstance(message, EmailMessage)
    key = message_key(message, raw)
    line = first_line(body_text(message))
    submission = None
    with transaction() as session:
        game = session.get(Game, game_id)
        seats = reads.seats(session, game_id) if game is not None else []
        if game is None or seat >= len(seats):
            return "550 5.1.1 this reply address is not valid"
        address = (seats[seat].email or "").lower()
        if settings.active().mail_check_sender and (not address or sender_of(message) != address):
            return "550 5.7.1 this address takes replies only from the seat's own mail address"
        inbound = Inbound(
            message_key=key, game_id=game_id, seat=seat, received_at=now(), outcome=""
        )
        session.add(inbound)
        try:
            session.flush()
        except IntegrityError:
            session.rollback()
            return "250 2.0.0 this message was taken already"
        rules = reads.rules_of(game)
        answered = True
        reply = Outbox(
            game_id=game.id, kind=OutboxKind.REFUSED, seat=seat, payload={}, created_at=now()
        )
        word = (line or "").lower()
        if word == "accept":
            # The seat's own address (the sender check above) says yes to our mail.
            known = addresses.find(session, address) if address else None
            inbound.outcome = "accepted"
            session.add(inbound)
            if known is not None:
                addresses.accept(session, known)
            answered = False
        elif line is None:
            reply.payload = {"reason": "no move was found in your reply"}
        elif word in (OutboxKind.HELP, OutboxKind.BOARD):
            reply.kind, reply.payload = OutboxKind(word), {"version": game.version}
        else:
            try:
                move = Resign() if word == "resign" else rules.parse(line, game.options)
            except IllegalMove as refused:
                reply.payload = {"reason": f"{line!r}: {refused.reason}"}
            else:
                inbound.outcome = "submitted"
                submission, _fresh = submissions.record(
                    session,
                    game_id,
                    seat,
                    rules.move_to_json(move),
                    source=Source.MAIL,
                    seen_version=game.version,
                    idempotency_key=f"mail:{key}",
                )
        if submission is None and answered:
            inbound.outcome = reply.kind
            session.add(inbound)
            session.add(reply)
    # The worker decides the move and mails the answer; other answers go now.
    if submission is not None:
        enqueue(DECIDE, submission.id)
    else:
        deliver_soon()
    return "250 2.0.0 taken"


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
        return await asyncio.get_running_loop().run_in_executor(None, take, raw, found.group(1))


def serve(host: str, port: int, chosen: settings.Settings) -> None:
    """Listen until SIGTERM or SIGINT; `chosen` are this process's settings."""
    controller = Controller(
        Handler(),
        hostname=host,
        port=port,
        data_size_limit=chosen.mail_max_bytes,
        server_hostname=chosen.mail_domain,
        ready_timeout=30,
    )
    stop = threading.Event()
    for number in (signal.SIGTERM, signal.SIGINT):
        signal.signal(number, lambda *_args: stop.set())
    controller.start()
    try:
        stop.wait()
    finally:
        controller.stop()
