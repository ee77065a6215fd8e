"""A seat's play-now link `<public_url>/g/<id>/play/<token>`, in every full mail to the seat.

Its token is `keys.play_token`, an HMAC of game and seat: derived, never
stored, the same in every mail of the seat, and never the seat's API token
(the link's page hands the browser that token in an HttpOnly cookie,
`api/pages/seat_links.py`). The link works while the game runs and for `AFTER_THE_END`
after it ends, so that a game-over mail still opens the seat's page where
the rematch is offered; then it is refused (`referee.service.play_now`).
"""

from __future__ import annotations

from datetime import datetime, timedelta
from typing import Protocol

from referee.store import keys
from referee.store.clock import parse_stamp
from referee.store.tables import Game, GameStatus

AFTER_THE_END = timedelta(days=7)


def play_url(public_url: str, secret: bytes, game_id: str, seat: int) -> str:
    """The play-now link of `seat` in game `game_id`."""
    return f"{public_url}/g/{game_id}/play/{keys.play_token(secret, game_id, seat)}"


class Ended(Protocol):
    """What tells when a game's links stop working (a game row, a player's list's row)."""

    @property
    def status(self) -> str: ...
    @property
    def updated_at(self) -> str: ...


def works_until(game: Game | Ended) -> datetime | None:
    """When the game's play-now links stop working; None while it runs."""
    if game.status != GameStatus.OVER:
        return None
    # A finished game's row changes no more: its last change is its end.
    return parse_stamp(game.updated_at) + AFTER_THE_END
