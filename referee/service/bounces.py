"""Delivery reports (bounces): counting an address's hard bounces, and its signs of life.

`referee mail-in` takes reports sent to the envelope sender of the
referee's mail (`bounce+<token>@<domain>`, `referee.store.bounce_reports`) and
hands over what it read. A hard bounce (a report of `Action: failed` with a
`5.x.x` status) counts against the address; a delay or a `4.x.x` status is
a passing fault and does not. At `REFEREE_MAIL_BOUNCES` hard bounces the
address is no longer mailed: its seats are unreachable (shown so to the
other players), and their turns run out on the game's deadline like those
of any seat without a channel. Each report counts once (by its
Message-ID). A sign of life clears the count: a reply from the address
(`referee.service.replies`), or its accepting the referee's mail again
(`referee.service.consent`). A mail the referee's SMTP server took is not
one: a relay's 250 says nothing of the mailbox behind it.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING

from sqlalchemy.exc import IntegrityError

from referee.service import refusals
from referee.store import bounce_reports
from referee.store.clock import now
from referee.store.tables import Inbound

if TYPE_CHECKING:
    from referee.service import Referee


@dataclass(frozen=True, slots=True)
class Report:
    """A delivery report as the mail-in server read it."""

    # The token of its `bounce+<token>@` address.
    token: str
    # What names the message across copies.
    message_key: str
    # Whether it reports a permanent failure, and the status it gave (`5.1.1`), or
    # why it is not one.
    hard: bool
    status: str


def check_token(referee: Referee, token: str) -> None:
    """Refuse a bounce address whose token names no address (forged, or unknown)."""
    with referee.db.reading() as session:
        if bounce_reports.by_token(session, token) is None:
            raise refusals.NotFound("this bounce address is not valid")


def take_report(referee: Referee, report: Report) -> str:
    """Count one delivery report against the address its token names; returns the outcome."""
    threshold = referee.settings.mail_bounces
    with referee.db.transaction() as session:
        known = bounce_reports.by_token(session, report.token)
        if known is None:
            raise refusals.NotFound("this bounce address is not valid")
        inbound = Inbound(message_key=report.message_key, received_at=now(), outcome="")
        session.add(inbound)
        try:
            session.flush()
        except IntegrityError:
            session.rollback()
            return "duplicate"
        if not report.hard:
            outcome = f"report not counted ({report.status})"
        elif bounce_reports.hard_bounce(session, known, threshold):
            outcome = f"bounced out ({report.status}): no more mail"
        else:
            outcome = f"hard bounce {known.bounces}/{threshold} ({report.status})"
        inbound.outcome = outcome[:40]
        session.add(inbound)
    return outcome
