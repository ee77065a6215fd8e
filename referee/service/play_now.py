"""Opening a seat from a mail's play-now link (`referee.delivery.play_links`).

The link's token is checked in constant time against the token of every
seat of the game. Only a seat with a mail address has one: its API token
is derived from the server's secret (`keys.seat_link_token`), so the
referee can hand it to the browser, as the personal link does. Every
refusal is the same, whatever was wrong: a stranger learns nothing from
trying links.
"""

from __future__ import annotations

import hmac
import re
from dataclasses import dataclass
from datetime import UTC, datetime
from typing import TYPE_CHECKING

from referee.delivery.play_links import AFTER_THE_END, works_until
from referee.i18n import N_, _
from referee.service import refusals
from referee.service.submitting import well_formed
from referee.store import keys, reads
from referee.store.tables import Game, Seat

if TYPE_CHECKING:
    from referee.service import Referee

# `keys.play_token`: 18 bytes in URL-safe base64.
_TOKEN = re.compile(r"[A-Za-z0-9_-]{24}")
NOT_VALID = N_(
    "This play-now link is not valid, or no longer: a game's links work while it runs "
    "and for {days} days after it ends."
)


def _not_valid() -> refusals.NotFound:
    return refusals.NotFound(_(NOT_VALID).format(days=AFTER_THE_END.days))


@dataclass(frozen=True, slots=True)
class OpenedSeat:
    """The seat a play-now link opens, with the token its browser is to hold."""

    game_id: str
    seat: int
    name: str
    # The seat's API token, for the browser's seat cookie.
    token: str


def open_seat(referee: Referee, game_id: str, token: str) -> OpenedSeat:
    """The seat whose play-now link this is, refused alike for anything else."""
    if not well_formed(game_id) or _TOKEN.fullmatch(token) is None:
        raise _not_valid()
    with referee.db.reading() as session:
        game = session.get(Game, game_id)
        seats = [] if game is None else reads.seats(session, game.id)
    until = None if game is None else works_until(game)
    if game is None or (until is not None and datetime.now(UTC) > until):
        raise _not_valid()
    secret = referee.secret()
    found = _seat_of(secret, game.id, seats, token)
    if found is None or not found.email:
        raise _not_valid()
    seat_token = keys.seat_link_token(secret, game.id, found.seat)
    # A seat whose API token is not the derived one has none the referee could hand out.
    if not hmac.compare_digest(keys.hash_token(seat_token), found.token_hash):
        raise _not_valid()
    return OpenedSeat(game.id, found.seat, found.name, seat_token)


def _seat_of(secret: bytes, game_id: str, seats: list[Seat], token: str) -> Seat | None:
    """The seat whose play token this is, every seat compared, without stopping early."""
    found = None
    given = token.encode("ascii")
    for seat in seats:
        expected = keys.play_token(secret, game_id, seat.seat).encode("ascii")
        if hmac.compare_digest(expected, given):
            found = seat
    return found
