"""Delivery reports (bounces): counting an address's hard bounces, and its signs of life.

`referee mail-in` takes reports sent to the envelope sender of the
referee's mail (`bounce+<token>@<domain>`, `referee.store.bounce_reports`) and
hands over what it read. A hard bounce (a report of `Action: failed` with a
`5.x.x` status) counts against the address; a delay or a `4.x.x` status is
a passing fault and does not. At `REFEREE_MAIL_BOUNCES` hard bounces the
address is no longer mailed: its seats are unreachable (shown so to the
other players, and told them by an `unreached` notice in each running
game), and their turns run out on the game's deadline like those of any
seat without a channel. `referee addresses --bounced` lists such
addresses. Each report counts once (by its Message-ID). A sign of life
clears the count: a reply from the address (`referee.service.replies`),
or its accepting the referee's mail again (`referee.service.consent`). A
mail the referee's SMTP server took is not one: a relay's 250 says
nothing of the mailbox behind it.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING

from sqlalchemy.exc import IntegrityError

from referee.i18n import _
from referee.service import notifying, refusals
from referee.service.publishing import Published, publish
from referee.store import bounce_reports, reads
from referee.store.appending import outbox_row
from referee.store.clock import now
from referee.store.tables import Inbound, OutboxKind

if TYPE_CHECKING:
    from sqlmodel import Session

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
            raise refusals.NotFound(_("this bounce address is not valid"))


def take_report(referee: Referee, report: Report) -> str:
    """Count one delivery report against the address its token names; returns the outcome."""
    threshold = referee.settings.mail_bounces
    with referee.db.transaction() as session:
        known = bounce_reports.by_token(session, report.token)
        if known is None:
            raise refusals.NotFound(_("this bounce address is not valid"))
        told = False
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
            told = _tell_the_others(session, known.address)
        else:
            outcome = f"hard bounce {known.bounces}/{threshold} ({report.status})"
        inbound.outcome = outcome[:40]
        session.add(inbound)
    if told:
        publish(referee, Published(news=True))
    return outcome


def _tell_the_others(session: Session, address: str) -> bool:
    """Tell the other seats of each running game that the address's seats there are
    no longer reached by mail (`unreached`); whether any notice was written."""
    notices = []
    stamp = now()
    for game_id, held in bounce_reports.running_seats(session, address).items():
        others = [seat.seat for seat in reads.seats(session, game_id) if seat.seat not in held]
        notices += [
            outbox_row(game_id, OutboxKind.UNREACHED, other, {"seat": seat}, stamp)
            for seat in held
            for other in others
        ]
    notifying.write(session.connection(), None, notices)
    return bool(notices)


@dataclass(frozen=True, slots=True)
class Bounced:
    """An address the referee no longer mails: when it bounced out, after how many."""

    address: str
    bounced_at: str
    bounces: int


def bounced_addresses(referee: Referee) -> list[Bounced]:
    """Every address that bounced out and showed no sign of life since, the latest first."""
    with referee.db.reading() as session:
        return [
            Bounced(row.address, row.bounced_at or "", row.bounces)
            for row in bounce_reports.bounced(session)
        ]
