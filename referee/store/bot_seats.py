"""The seats bots play: their levels, a seat handed to a bot, a seat's latest sources.

Which seat is a bot's, and at which level, is data on the seat
(`seat.bot`); what a bot plays is the service's (`referee.service.bots`).
"""

from __future__ import annotations

from collections.abc import Sequence

import sqlalchemy as sa
from sqlmodel import Session

from referee.automatic import FORCED
from referee.store.tables import BOT_ROWS, RUNNING_ROWS, Game, Move, Seat, Submission, core_table

_SEAT = core_table(Seat)
_GAME = core_table(Game)
_MOVE = core_table(Move)
_SUBMISSION = core_table(Submission)


def levels(session: Session, game_ids: Sequence[str]) -> dict[str, dict[int, str]]:
    """For each of the games that has bot seats, each such seat's bot level."""
    if not game_ids:
        return {}
    rows = session.connection().execute(
        sa.select(_SEAT.c.game_id, _SEAT.c.seat, _SEAT.c.bot).where(
            _SEAT.c.game_id.in_(list(game_ids)), _SEAT.c.bot.is_not(None)
        )
    )
    found: dict[str, dict[int, str]] = {}
    for game_id, seat, level in rows:
        found.setdefault(game_id, {})[seat] = level
    return found


def hand_to_bot(session: Session, game_id: str, seat: int, level: str, version: int) -> None:
    """From now on a bot of `level` plays the seat (which was a person's until `version`)."""
    session.connection().execute(
        sa.update(_SEAT)
        .where(_SEAT.c.game_id == game_id, _SEAT.c.seat == seat)
        .values(bot=level, bot_since=version)
    )


def latest_sources(session: Session, game_id: str, seat: int, count: int) -> list[str]:
    """The sources of the seat's latest `count` logged moves that came from a submission,
    latest first (the moves the referee records by itself are not the seat's)."""
    rows = session.connection().execute(
        sa.select(_MOVE.c.source)
        .where(_MOVE.c.game_id == game_id, _MOVE.c.seat == seat, _MOVE.c.source != FORCED)
        .order_by(_MOVE.c.seq.desc())
        .limit(count)
    )
    return [source for (source,) in rows]


def waiting_for_bots(session: Session, before: str) -> list[tuple[str, int]]:
    """The running games (and their versions) where a bot's seat is to act, unchanged
    since `before`."""
    rows = session.connection().execute(
        sa.select(_GAME.c.id, _GAME.c.version, _GAME.c.to_act, _SEAT.c.seat)
        .select_from(_GAME.join(_SEAT, _SEAT.c.game_id == _GAME.c.id))
        .where(
            RUNNING_ROWS,
            _GAME.c.updated_at < before,
            BOT_ROWS,
        )
    )
    found: dict[str, int] = {}
    for game_id, version, to_act, seat in rows:
        if seat in to_act:
            found[game_id] = version
    return sorted(found.items())
