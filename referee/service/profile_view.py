"""A player as anyone may see it (`/v1/players/{name}`, `/p/<name>`): its public name,
since when it plays here, its ratings, how it plays, its last finished games.

Found by public name, compared as names are (`referee.names.public_key`); a
player without one has no profile. Nothing here holds its address.

- `since`: when its address first reached the referee (`Address.created_at`: the
  first game that seated it), which says how long it has played here.
- `ratings`: per game, the skill the ratings keep (`referee.ratings.shown`), with
  its history for the page's chart (the last `HISTORY_MOST` changes).
- `stats`: games finished and in play (counted once however many seats it holds in
  one); `timeouts`, the moves the referee played for its seats when time ran out;
  `resigned`, the games it resigned itself (a forfeit on timeout is a timeout);
  `median_response_hours`, the median over its last `ANSWERS_MOST` moves of the time
  between the turn being asked of it (the game's move before, or the game's making
  for its first move) and its move. A timeout counts as the move it stood for (the
  others waited that long); a bot's move for its seat counts not at all. None until
  it has moved.
- `recent`: its last `RECENT_MOST` finished games: the game, how it went for the
  player (`won`, `lost`, `draw` for a win shared) and its place.
"""

from __future__ import annotations

import statistics
from collections.abc import Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from referee.i18n import _
from referee.names import public_key
from referee.ratings import Skill, finishing_ranks, shown
from referee.service import refusals
from referee.service.tallying import (
    ANSWERS_MOST,
    fresh_totals,
    latest_answers,
    latest_games,
)
from referee.store import player_rows, player_totals, rating_rows, seat_stats
from referee.store.addresses import normal
from referee.store.clock import parse_stamp
from referee.store.tables import Address, GameStatus, PlayerTotals, Rating, Seat

if TYPE_CHECKING:
    from sqlmodel import Session

    from referee.service import Referee

# A chart's points: the last 60 rated games (a page reads and draws them for each game).
HISTORY_MOST = 60
_HOUR = 3600.0


@dataclass(frozen=True, slots=True)
class RatingPoint:
    """A player's rating after one counted game."""

    at: str
    rating: int
    deviation: int
    provisional: bool


@dataclass(frozen=True, slots=True)
class GameRating:
    game: str
    rating: int
    deviation: int
    games: int
    wins: int
    provisional: bool
    # Oldest first; empty unless asked for.
    history: tuple[RatingPoint, ...]


@dataclass(frozen=True, slots=True)
class Stats:
    games_finished: int
    games_active: int
    timeouts: int
    resigned: int
    median_response_hours: float | None


@dataclass(frozen=True, slots=True)
class RecentGame:
    id: str
    game: str
    # `won`, `lost`, or `draw` (a win shared with others).
    result: str
    # Its place (1 is first, tied seats share one) among `players`.
    place: int
    players: int
    finished_at: str


@dataclass(frozen=True, slots=True)
class PlayerProfile:
    name: str
    since: str
    ratings: tuple[GameRating, ...]
    stats: Stats
    recent: tuple[RecentGame, ...]


def player_profile(referee: Referee, name: str, history: bool = False) -> PlayerProfile:
    """The profile of the player called `name`; with `history`, each rating's changes."""
    with referee.db.reading() as session:
        # No public name is longer or holds a control character (which PostgreSQL refuses).
        lookable = len(name) <= 100 and name.isprintable()
        address = player_rows.address_named(session, public_key(name)) if lookable else None
        known = None if address is None else session.get(Address, address)
        if known is None or known.public_name is None:
            raise refusals.NotFound(_("no player is called {name}").format(name=repr(name)))
        ratings = tuple(
            _rating(rating, rating_rows.history(session, known.address, rating.game, HISTORY_MOST))
            if history
            else _rating(rating, [])
            for rating in rating_rows.of_player(session, known.address)
        )
        totals = player_totals.of_address(session, known.address) or fresh_totals(known.address)
        live = seat_stats.untallied_seats(session, known.address)
        counts = seat_stats.games_by_status(live)
        tally = seat_stats.tally(session, live)
        answers = [
            [answer.asked_at, answer.moved_at]
            for answer in seat_stats.answers(session, live, ANSWERS_MOST)
        ]
        finished = seat_stats.finished_games(session, _last_finished(totals, live))
    stats = Stats(
        games_finished=totals.games_finished + counts.get(GameStatus.OVER, 0),
        games_active=counts.get(GameStatus.ACTIVE, 0),
        timeouts=totals.timeouts + tally.timeouts,
        resigned=totals.resigned + tally.resigned,
        median_response_hours=median_hours(latest_answers([*totals.answers, *answers])),
    )
    recent = tuple(_recent(game) for game in finished)
    return PlayerProfile(known.public_name, known.created_at, ratings, stats, recent)


def _last_finished(totals: PlayerTotals, live: list[seat_stats.HeldSeat]) -> dict[str, list[int]]:
    """The player's last finished games, latest first, with the seats it held in each:
    from its totals and the finished games they do not hold yet."""
    untallied: dict[str, list[Any]] = {}
    for seat in live:
        if seat.status == GameStatus.OVER:
            untallied.setdefault(seat.game_id, [seat.updated_at, seat.game_id, []])[2].append(
                seat.seat
            )
    return {
        game_id: list(seats)
        for _, game_id, seats in latest_games([*totals.recent, *untallied.values()])
    }


def median_hours(answers: list[list[str]]) -> float | None:
    """The median time from a turn asked to its move, in hours (two decimals), of
    `[asked_at, moved_at]` pairs."""
    if not answers:
        return None
    waits = [
        max(0.0, (parse_stamp(moved) - parse_stamp(asked)).total_seconds())
        for asked, moved in answers
    ]
    return round(statistics.median(waits) / _HOUR, 2)


def _rating(rating: Rating, changes: list[rating_rows.Moved]) -> GameRating:
    now = shown(Skill(rating.mu, rating.sigma))
    points = []
    for change in changes:
        after = shown(Skill(change.mu, change.sigma))
        points.append(RatingPoint(change.at, after.rating, after.deviation, after.provisional))
    return GameRating(
        game=rating.game,
        rating=now.rating,
        deviation=now.deviation,
        games=rating.games,
        wins=rating.wins,
        provisional=now.provisional,
        history=tuple(points),
    )


def _recent(game: seat_stats.Finished) -> RecentGame:
    result = game.result or {}
    scores = list(result.get("scores", []))
    winners = set(result.get("winners", []))
    ranks = finishing_ranks(scores, winners) if scores else []
    mine = [seat for seat in game.seats if seat < len(ranks)]
    place = min((ranks[seat] for seat in mine), default=0)
    won = not winners.isdisjoint(game.seats)
    outcome = ("won" if len(winners) == 1 else "draw") if won else "lost"
    return RecentGame(game.id, game.game, outcome, place, len(scores), game.finished_at)


def seat_profiles(session: Session, seats: Sequence[Seat]) -> dict[int, str]:
    """The public names of the players holding `seats` (a game's), by seat number: a
    seat a bot holds, or whose player chose no public name, has none (pages show its
    name unlinked, never its address)."""
    people = {seat.seat: normal(seat.email) for seat in seats if seat.email and seat.bot is None}
    names = player_rows.names_of(session, set(people.values()))
    return {seat: names[address] for seat, address in people.items() if address in names}
