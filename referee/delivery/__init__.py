"""The channels notices go out on, registered once: adding one is a module and a line here.

`reachable` is the one rule for whom the referee can tell anything: a
seat some channel reaches. News for any other seat is not written.
"""

from __future__ import annotations

import sqlalchemy as sa

from referee.delivery.channel import Channel
from referee.delivery.mail import MAIL
from referee.delivery.webhook import WEBHOOK

CHANNELS: dict[str, Channel] = {channel.name: channel for channel in (MAIL, WEBHOOK)}


def reachable(seat: sa.Table) -> sa.ColumnElement[bool]:
    """Whether some channel reaches a row of the `seat` table."""
    return sa.or_(*(channel.reaches(seat) for channel in CHANNELS.values()))
