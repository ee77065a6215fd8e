"""How each player is told of its games: its address's turn mail settings and its muted games.

The settings live on the `address` row (`turn_mail`, `digest_hours`,
`reminders`, and `seek_news`: the games whose new public seeks it hears of);
a muted game is a `mute` row. This module keeps and reads
them; what mail follows from them is decided by `referee.delivery.wishes`.
"""

from __future__ import annotations

from dataclasses import dataclass

import sqlalchemy as sa
from sqlalchemy.dialects import postgresql, sqlite
from sqlmodel import Session, col, select

from referee.store.addresses import normal
from referee.store.tables import Address, Game, GameStatus, Mute, Seat, TurnMail, core_table

# The hours of a digest when the player chose none (`digest_hours` is NULL), on the
# clocks of its time zone like any it chooses (`referee.service.digests`).
DEFAULT_DIGEST_HOURS = (7, 19)

_MUTE = core_table(Mute)


@dataclass(frozen=True, slots=True)
class TurnMailSettings:
    """How a player is told: a mail per turn, a digest at some hours, or nothing;
    whether deadline reminders come; and of which games' new open games it hears."""

    turn_mail: TurnMail
    digest_hours: tuple[int, ...]
    reminders: bool
    seek_news: tuple[str, ...] = ()


DEFAULTS = TurnMailSettings(TurnMail.EACH, DEFAULT_DIGEST_HOURS, True)


def settings_of(known: Address | None) -> TurnMailSettings:
    """An address's settings (an address never seen has the defaults)."""
    if known is None:
        return DEFAULTS
    hours = DEFAULT_DIGEST_HOURS if known.digest_hours is None else tuple(known.digest_hours)
    news = tuple(known.seek_news or ())
    return TurnMailSettings(TurnMail(known.turn_mail), hours, known.reminders, news)


def read(session: Session, address: str) -> TurnMailSettings:
    return settings_of(session.get(Address, normal(address)))


def change(session: Session, address: str, chosen: TurnMailSettings) -> bool:
    """Keep `chosen` for the address; False when the referee does not know the address."""
    known = session.get(Address, normal(address))
    if known is None:
        return False
    known.turn_mail = chosen.turn_mail
    # The default hours are kept as NULL, so that a new default reaches them.
    hours = sorted(chosen.digest_hours)
    known.digest_hours = None if tuple(hours) == DEFAULT_DIGEST_HOURS else hours
    known.reminders = chosen.reminders
    known.seek_news = sorted(chosen.seek_news) or None
    session.add(known)
    return True


# Two clicks of "Mute" at once: one row goes in, the other finds it.
_INSERT_MUTE = {
    "postgresql": postgresql.insert(_MUTE).on_conflict_do_nothing(),
    "sqlite": sqlite.insert(_MUTE).on_conflict_do_nothing(),
}


def muted(session: Session, address: str, game_id: str) -> bool:
    """Whether the player at `address` muted the game."""
    return session.get(Mute, (normal(address), game_id)) is not None


def muted_games(session: Session, address: str) -> list[str]:
    """The games the player muted, in the order it muted them."""
    query = (
        select(Mute.game_id)
        .where(col(Mute.address) == normal(address))
        .order_by(col(Mute.created_at), col(Mute.game_id))
    )
    return list(session.exec(query))


def mute(session: Session, address: str, game_id: str, stamp: str) -> None:
    """Mute a game for the player (muting it again changes nothing, even two at once)."""
    insert = _INSERT_MUTE[session.get_bind().dialect.name]
    session.connection().execute(
        insert.values(address=normal(address), game_id=game_id, created_at=stamp)
    )


def unmute(session: Session, address: str, game_id: str) -> None:
    session.connection().execute(
        sa.delete(_MUTE).where(_MUTE.c.address == normal(address), _MUTE.c.game_id == game_id)
    )


def running_seats(session: Session, address: str) -> list[tuple[Game, Seat]]:
    """The player's seats in running games, oldest game first (the settings page lists them)."""
    query = (
        select(Game, Seat)
        .join(Seat, col(Seat.game_id) == col(Game.id))
        .where(
            sa.func.lower(col(Seat.email)) == normal(address),
            col(Game.status) == GameStatus.ACTIVE,
        )
        .order_by(col(Game.created_at), col(Seat.seat))
    )
    return [(game, seat) for game, seat in session.exec(query)]
