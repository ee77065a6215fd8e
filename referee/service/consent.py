"""An address says yes to the referee's mail, or stops it, by a link's token or a mail.

Each mail carries an address's `accept` and `stop` tokens (HMACs of the
address, `keys.address_token`); a token that names no address is refused
as not found, so a stranger learns nothing about which addresses are known.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from sqlmodel import Session

from referee.i18n import _
from referee.service import refusals
from referee.service.notifying import write
from referee.service.publishing import Published, publish
from referee.store import addresses, bounce_reports
from referee.store.appending import outbox_row
from referee.store.clock import now
from referee.store.tables import Address, OutboxKind

if TYPE_CHECKING:
    from referee.service import Referee

ACCEPT = "accept"
STOP = "stop"


def _named(session: Session, purpose: str, token: str) -> Address:
    found = addresses.by_token(session, purpose, token)
    if found is None:
        raise refusals.NotFound(_("This link is not valid (or no longer)."))
    return found


def check_link(referee: Referee, purpose: str, token: str) -> None:
    """Refuse a link whose token names no address (`purpose`: ACCEPT or STOP)."""
    with referee.db.reading() as session:
        _named(session, purpose, token)


def accept(session: Session, known: Address) -> bool:
    """`known` accepts the referee's mail; False if it had already.

    Its seats in running games that never got their personal link are
    invited again, now with it. Accepting is a sign of life: whatever bounced
    before is forgotten.
    """
    bounce_reports.alive(session.connection(), known.address)
    if not addresses.accept(session, known):
        return False
    stamp = now()
    invitations = [
        outbox_row(seat.game_id, OutboxKind.INVITATION, seat.seat, {"accepted": True}, stamp)
        for seat in addresses.unlinked_seats(session, known.address)
    ]
    write(session.connection(), None, invitations)
    return True


def accept_address(referee: Referee, token: str) -> bool:
    """The address the token names accepts the referee's mail; False if it had already."""
    with referee.db.transaction() as session:
        fresh = accept(session, _named(session, ACCEPT, token))
    # The delivery sweep sends the invitations if the broker cannot be reached now.
    publish(referee, Published(news=fresh))
    return fresh


def stop_address(referee: Referee, token: str) -> None:
    """No more mail to the address the token names, from any game, until it accepts again."""
    with referee.db.transaction() as session:
        addresses.stop(session, _named(session, STOP, token))
