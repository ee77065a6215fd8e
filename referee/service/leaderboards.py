"""A game's players by rating (`/v1/ratings/{game}`, `/ratings/<game>`), highest first.

Ordered by the skill's estimate (`mu`, which the shown rating grows with), so
a player still provisional ranks where its estimate puts it, flagged as such.
Players with equal estimates share a place and are listed by name. A page
ends with a cursor naming its last row by estimate and name key, never by
address; a player's place is counted once per page (the players above the
page's first row, two counts on the index), so a page far down the list costs
little more than the first.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import TYPE_CHECKING

from referee.i18n import _
from referee.ratings import Skill, shown
from referee.service import refusals
from referee.service.creating import rules_named
from referee.store import rating_rows

if TYPE_CHECKING:
    from referee.service import Referee

PAGE = 50
PAGE_MOST = 100


@dataclass(frozen=True, slots=True)
class Ranked:
    place: int
    name: str
    rating: int
    deviation: int
    games: int
    wins: int
    provisional: bool


@dataclass(frozen=True, slots=True)
class Leaderboard:
    game: str
    players: tuple[Ranked, ...]
    next_cursor: str | None


def leaderboard(
    referee: Referee, game: str, cursor: str | None = None, limit: int = PAGE
) -> Leaderboard:
    """A page of `game`'s players by rating; pass `next_cursor` back as `cursor`."""
    name = rules_named(game).name
    after = _read(cursor) if cursor is not None else None
    limit = max(1, min(limit, PAGE_MOST))
    with referee.db.reading() as session:
        rows = rating_rows.ranked(session, name, after, limit)
        higher, tied = (
            rating_rows.above(session, name, rows[0].rating.mu, rows[0].key) if rows else (0, 0)
        )
    players = []
    place = higher + 1
    for n, row in enumerate(rows):
        if n > 0 and row.rating.mu < rows[n - 1].rating.mu:
            # Every player before it, on this page and the pages before, is above it.
            place = higher + tied + n + 1
        seen = shown(Skill(row.rating.mu, row.rating.sigma))
        players.append(
            Ranked(
                place=place,
                name=row.name,
                rating=seen.rating,
                deviation=seen.deviation,
                games=row.rating.games,
                wins=row.rating.wins,
                provisional=seen.provisional,
            )
        )
    more = len(rows) == limit
    last = rows[-1] if rows else None
    return Leaderboard(name, tuple(players), _written(last) if more and last else None)


# A cursor: the last row's estimate, `:`, its name key. Every string of this form
# names a place in the order (the API's document publishes the form), so any is
# taken: one no page gave starts a page wherever it falls.
CURSOR_FORM = (
    r"^-?[0-9]{1,20}(\.[0-9]{1,20})?([eE][+-]?[0-9]{1,3})?:[^\x00-\x1f\x7f-\x9f\u2028\u2029]*$"
)


def _written(row: rating_rows.Ranked) -> str:
    return f"{float(row.rating.mu)!r}:{row.key}"


def _read(cursor: str) -> tuple[float, str]:
    """The place a cursor names; refused when it is not of the cursors' form."""
    if re.fullmatch(CURSOR_FORM, cursor) is None:
        raise refusals.BadRequest(_("this cursor is not one a page of the list gave"))
    mu, _colon, key = cursor.partition(":")
    return float(mu), key
