"""A seat's game page, seen open: what lets a turn answered there go unmailed.

A game page shown to its seat, and its live stream while it stays
connected, mark the seat seen (`referee.store.page_views`). The mail
channel holds a turn mail of a seat seen within `REFEREE_MAIL_PAGE_HOLD`
seconds for that long, and drops it if the seat moved meanwhile
(`referee.delivery.mail`). The mark is written at most every few seconds
per seat: a stream beats every `REFEREE_EVENTS_KEEPALIVE` seconds.
"""

from __future__ import annotations

from datetime import UTC, datetime, timedelta
from typing import TYPE_CHECKING

from referee.store import page_views
from referee.store.clock import stamp

if TYPE_CHECKING:
    from referee.service import Referee

# A mark younger than this is not written again.
FRESH = timedelta(seconds=5)


def seen(referee: Referee, game_id: str, seat: int, moment: datetime | None = None) -> None:
    """Note that `seat`'s page of the game is open now."""
    moment = moment or datetime.now(UTC)
    fresh_after = stamp(moment - FRESH)
    # Read first: most beats find it fresh, and a read takes no write lock.
    with referee.db.reading() as session:
        last = page_views.seen_at(session, game_id, seat)
    if last is not None and last >= fresh_after:
        return
    with referee.db.transaction() as session:
        page_views.mark(session.connection(), game_id, seat, stamp(moment), fresh_after)
