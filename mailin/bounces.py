"""Delivery reports sent to the referee's envelope sender, `bounce+<token>@<domain>`.

Mail servers report a failed delivery to the envelope sender of the mail,
from the null sender (`MAIL FROM:<>`, RFC 5321 4.5.5), as a
`multipart/report; report-type=delivery-status` (RFC 3464) whose
`message/delivery-status` part has one block of fields per recipient:
`Action: failed` and a `Status: 5.x.x` is a hard bounce; `delayed`, or a
`4.x.x`, is not. Postfix, Gmail and Exchange all send this shape. A
forged or unknown token is refused at RCPT, as is a report from a sender
other than the null one; what comes to a valid bounce address is always
taken (a bounce is never bounced), and what is no such report (a
plain-text bounce, an autoresponder answering the envelope sender) is
taken and not counted. The service counts (`referee.service.bounces`).
"""

from __future__ import annotations

import hashlib
import logging
import re
from email import policy
from email.message import EmailMessage, Message
from email.parser import BytesParser, HeaderParser

from mailin import bounds
from referee.service import Referee, refusals
from referee.service.bounces import Report, check_token, take_report

_log = logging.getLogger(__name__)
ADDRESS = re.compile(r"^bounce\+([a-z0-9]+)@", re.IGNORECASE)
_STATUS = re.compile(r"^\s*([245])\.\d{1,3}\.\d{1,3}")
# A report's parts worth looking through: the notice, its alternatives, the
# report, the returned message; nothing real has more.
_MAX_PARTS = 50


def check_recipient(referee: Referee, envelope_sender: str, token: str) -> str:
    """The SMTP answer to `RCPT TO:<bounce+token@...>`."""
    if envelope_sender.strip() not in ("", "<>"):
        return "550 5.7.1 this address takes only delivery reports (from the null sender)"
    try:
        check_token(referee, token)
    except refusals.NotFound:
        _log.info("refused at RCPT: a bounce address that is not valid")
        return "550 5.1.1 this bounce address is not valid"
    return "250 2.1.5 OK"


def _blocks(part: Message) -> list[Message]:
    """The blocks of fields of a `message/delivery-status` part (the first is per message)."""
    payload = part.get_payload()
    if isinstance(payload, list):
        return [block for block in payload if isinstance(block, Message)]
    # Sent with a transfer encoding, the part is left as text: read it block by block.
    raw = part.get_payload(decode=True)
    text = raw.decode("ascii", "replace") if isinstance(raw, bytes) else str(payload)
    chunks = re.split(r"\r?\n[ \t]*\r?\n", text.strip())
    return [HeaderParser().parsestr(chunk) for chunk in chunks if chunk.strip()]


def verdict(message: EmailMessage) -> tuple[bool, str]:
    """Whether the report is of a hard bounce, and its status (or why it is no report)."""
    for number, part in enumerate(message.walk()):
        if number >= _MAX_PARTS:
            break
        if part.get_content_type() != "message/delivery-status":
            continue
        statuses = []
        for block in _blocks(part)[1:]:
            action = str(block.get("Action", "")).strip().lower()
            found = _STATUS.match(str(block.get("Status", "")))
            status = found.group(0).strip() if found else "no status"
            if action == "failed" and found is not None and found.group(1) == "5":
                return True, status
            statuses.append(f"{action or 'no action'} {status}")
        return False, ", ".join(statuses)[:24] or "no recipient"
    return False, "not a delivery report"


def _report_key(message: EmailMessage | None, raw: bytes) -> str:
    """What names a report across copies: its Message-ID, or its bytes (apart from replies')."""
    found = str(message.get("Message-ID", "")).strip() if message is not None else ""
    return hashlib.sha256(b"report:" + (found.encode() if found else raw)).hexdigest()


def read_report(raw: bytes) -> tuple[EmailMessage | None, bool, str]:
    """The message, whether it reports a hard bounce, and its status (or why not).

    A report is read within the same bounds as a reply, so its cost stays linear.
    """
    if bounds.beyond_bounds(raw) is not None:
        return None, False, "unreadable"
    try:
        message = BytesParser(policy=policy.default).parsebytes(raw)
        assert isinstance(message, EmailMessage)
        return message, *verdict(message)
    except (RecursionError, ValueError, LookupError):
        return None, False, "unreadable"


def take(referee: Referee, raw: bytes, token: str) -> str:
    """Take one message sent to a bounce address; the SMTP answer (always 250)."""
    message, hard, status = read_report(raw)
    try:
        outcome = take_report(referee, Report(token, _report_key(message, raw), hard, status))
    except refusals.NotFound:
        outcome = "bounce address no longer known"
    # One line per message, never the token.
    _log.info("mail in: from=<> bounce outcome=%s answer=250", outcome)
    return "250 2.0.0 report taken"
