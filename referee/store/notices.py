"""Writing notices: what a seat is to be told, and a delivery for each channel reaching it.

Every notice is written here, in its caller's transaction, with one
`delivery` row per channel it is given (the service gives the registered
ones, `referee.delivery.CHANNELS`) that reaches the notice's seat as the
seat stands now and carries its kind; a channel added later needs no
change here. Two statements whatever the number of notices: deciding
writes news for every move.
"""

from __future__ import annotations

from collections.abc import Sequence
from functools import cache
from typing import Any, Protocol

import sqlalchemy as sa

from referee.store.columns import Stamp
from referee.store.tables import DUE_AT_ONCE, Delivery, DeliveryStatus, Outbox, Seat, core_table

_NOTICE = core_table(Outbox)
_DELIVERY = core_table(Delivery)
_SEAT = core_table(Seat)

_INSERT_NOTICES = sa.insert(_NOTICE).returning(_NOTICE.c.id)
_NOTICE_IDS: sa.BindParameter[list[int]] = sa.bindparam("notice_ids", expanding=True)


class Route(Protocol):
    """A channel as writing a notice's deliveries needs it (`referee.delivery.channel.Channel`)."""

    @property
    def name(self) -> str:
        """The name its `delivery` rows carry."""

    def reaches(self, seat: sa.Table) -> sa.ColumnElement[bool]:
        """Whom it can reach: a condition on a row of the `seat` table."""

    def carries(self, kind: sa.ColumnElement[str]) -> sa.ColumnElement[bool]:
        """Which notices it carries at all: a condition on a notice's kind."""


# The channels a notice may go out on, in the order their deliveries are written.
Routes = tuple[Route, ...]


@cache
def _insert_deliveries(routes: Routes) -> sa.Insert:
    """For each new notice and each channel reaching its seat, one pending delivery."""
    return sa.insert(_DELIVERY).from_select(
        ["notice_id", "channel", "status", "attempts", "next_attempt_at"],
        sa.union_all(
            *(
                sa.select(
                    _NOTICE.c.id,
                    sa.literal(channel.name, sa.String),
                    sa.literal(DeliveryStatus.PENDING.value, sa.String),
                    sa.literal(0, sa.Integer),
                    sa.literal(DUE_AT_ONCE, Stamp),
                )
                .select_from(
                    _NOTICE.join(
                        _SEAT,
                        (_SEAT.c.game_id == _NOTICE.c.game_id) & (_SEAT.c.seat == _NOTICE.c.seat),
                    )
                )
                .where(
                    _NOTICE.c.id.in_(_NOTICE_IDS),
                    channel.reaches(_SEAT),
                    channel.carries(_NOTICE.c.kind),
                )
                for channel in routes
            )
        ),
    )


def insert_notices(
    connection: sa.Connection, rows: Sequence[dict[str, Any]], routes: Routes
) -> None:
    """Insert notices (`game_id`, `kind`, `seat`, `payload`, `created_at`) and their
    deliveries, one on each of `routes` that reaches the notice's seat and carries its kind.

    The seats must be written already: a notice whose seat no channel
    reaches is kept, with no delivery.
    """
    if not rows:
        return
    ids = connection.execute(_INSERT_NOTICES, list(rows)).scalars().all()
    connection.execute(_insert_deliveries(routes), {"notice_ids": list(ids)})
