"""Which language and time zone a mail speaks to its reader.

A seat's mails keep one language for the whole game: the seat's own
(`Seat.language`), fixed the first time the seat is mailed from its player's
chosen language, else the game's, else English, so that a thread never
changes language midway. A mail told to a player rather than of a game (a
sign-in link, the digest, news of open games) speaks the player's chosen
language, else English. Times are said in the player's chosen zone, else UTC.
Replies to a seat's mail are answered in the seat's language too
(`referee.service.replies`).
"""

from __future__ import annotations

from dataclasses import dataclass

from sqlmodel import Session

from referee.i18n import SOURCE_LANGUAGE, UTC_ZONE, known_language, known_zone
from referee.store import addresses, reads
from referee.store.tables import Game


@dataclass(frozen=True, slots=True)
class Speech:
    """The language and zone of a mail; `fix` says the seat's language is to be stored."""

    language: str = SOURCE_LANGUAGE
    zone: str = UTC_ZONE
    fix: bool = False


def of_address(session: Session, email: str | None) -> Speech:
    """What a mail told to the player at `email` speaks: its choices, else English and UTC."""
    known = addresses.find(session, email) if email else None
    if known is None:
        return Speech()
    zone = known.time_zone if known.time_zone and known_zone(known.time_zone) else UTC_ZONE
    return Speech(known_language(known.language) or SOURCE_LANGUAGE, zone)


def of_seat(session: Session, game_id: str, seat: int) -> Speech:
    """What a mail to `seat` of `game_id` speaks: the seat's language once fixed, else the
    one to fix (the player's, else the game's, else English); the player's zone."""
    seats = reads.seats(session, game_id)
    found = seats[seat] if 0 <= seat < len(seats) else None
    player = of_address(session, found.email if found else None)
    fixed = known_language(found.language) if found else None
    if fixed is not None:
        return Speech(fixed, player.zone)
    known = addresses.find(session, found.email) if found and found.email else None
    chosen = known_language(known.language) if known is not None else None
    game = session.get(Game, game_id)
    chosen = chosen or known_language(game.language if game else None) or SOURCE_LANGUAGE
    return Speech(chosen, player.zone, fix=found is not None)
