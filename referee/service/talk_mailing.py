"""The short mail of messages a seat has not seen for an hour.

A seat told of its turns one by one (`turn_mail: each`) sees the others'
messages in its next mail of the game (`referee.delivery.talk_lines`). When
none comes within `UNSEEN_FOR` of a message it has not seen (nor has it read
them on the game's page), it gets one `messages` mail holding them, at most
one per game and seat every `MAIL_EVERY` (`message_mail` keeps when). Run with
the digests, every sweep, handed the time so tests move the clock; a message
older than `LOOK_BACK` is not mailed of any more. Whether the mail goes is
asked again when it is sent (`referee.delivery.wishes`: `turn_mail` still
`each`, the game not muted), like every turn mail.
"""

from __future__ import annotations

from datetime import datetime, timedelta
from typing import TYPE_CHECKING

from sqlalchemy.exc import IntegrityError

from referee.service import notifying
from referee.service.publishing import Published, publish
from referee.store import mail_settings, message_mail_rows
from referee.store.appending import outbox_row
from referee.store.clock import stamp
from referee.store.tables import Game, OutboxKind, TurnMail

if TYPE_CHECKING:
    from referee.service import Referee

UNSEEN_FOR = timedelta(hours=1)
MAIL_EVERY = timedelta(hours=6)
LOOK_BACK = timedelta(days=2)


def sweep_message_mail(referee: Referee, moment: datetime) -> int:
    """Write the mails of messages seats have not seen for `UNSEEN_FOR`; how many."""
    at = stamp(moment)
    with referee.db.reading() as session:
        waiting = message_mail_rows.waiting(
            session, stamp(moment - LOOK_BACK), stamp(moment - UNSEEN_FOR)
        )
        told_each = {
            found.address
            for found in waiting
            if mail_settings.read(session, found.address).turn_mail == TurnMail.EACH
        }
    quiet_since = stamp(moment - MAIL_EVERY)
    written = 0
    for found in waiting:
        if found.address not in told_each:
            continue
        try:
            with referee.db.transaction() as session:
                game = session.get(Game, found.game_id)
                if game is None or not message_mail_rows.claim(
                    session, found.game_id, found.seat, at, quiet_since
                ):
                    continue
                payload = {"version": game.version}
                notice = outbox_row(found.game_id, OutboxKind.MESSAGES, found.seat, payload, at)
                notifying.write(session.connection(), None, [notice])
        except IntegrityError:
            # Another sweep wrote this seat's first mail of messages at the same moment.
            continue
        written += 1
    publish(referee, Published(news=written > 0))
    return written
