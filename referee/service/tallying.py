"""Each player's finished games summed up once, for its profile (`PlayerTotals`).

A profile counts a player's games, timeouts and resignations and takes the
median of its last moves. Read from every seat the player ever held, that
costs what its history weighs (a hundred milliseconds and more for a player
of thousands of games), so each finished game is added to its players'
totals once, when the ratings' job takes it in (`referee.service.rating`),
and a profile reads the totals and only the games they do not hold yet
(`referee.service.profile_view`).

The totals keep counts and the latest `ANSWERS_MOST` moves and `RECENT_MOST`
games, each chosen by time, so the order games are added in does not
change them: games taken in before the totals existed are added by the same
job later (`tally_untallied`), and `referee ratings rebuild` works them out
again from the games.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from sqlmodel import Session

from referee.store import player_totals, rated_games, seat_stats
from referee.store.tables import Game, PlayerTotals

if TYPE_CHECKING:
    from referee.service import Referee

ANSWERS_MOST = 100
RECENT_MOST = 10
# Games tallied per transaction.
BATCH = 100


@dataclass(frozen=True, slots=True)
class Share:
    """What one finished game adds to one player's totals."""

    timeouts: int
    resigned: int
    # Its moves in the game, latest first, as [asked_at, moved_at].
    answers: tuple[tuple[str, str], ...]
    # The game among its last ones: [finished_at, game_id, [seats]].
    recent: tuple[str, str, tuple[int, ...]]


def shares(session: Session, game: Game) -> dict[str, Share]:
    """What a finished game adds to each of its players' totals, by address."""
    found = {}
    for address, held in seat_stats.seats_of_game(session, game).items():
        tally = seat_stats.tally(session, held)
        answers = seat_stats.answers(session, held, ANSWERS_MOST)
        found[address] = Share(
            timeouts=tally.timeouts,
            resigned=tally.resigned,
            answers=tuple((answer.asked_at, answer.moved_at) for answer in answers),
            recent=(game.updated_at, game.id, tuple(seat.seat for seat in held)),
        )
    return found


def fresh_totals(address: str) -> PlayerTotals:
    return PlayerTotals(address=address, answers=[], recent=[])


def add_share(totals: PlayerTotals, share: Share) -> None:
    """Fold one game's share into a player's totals (new lists, so that the JSON columns
    are written)."""
    totals.games_finished += 1
    totals.timeouts += share.timeouts
    totals.resigned += share.resigned
    answers = [*totals.answers, *([asked, moved] for asked, moved in share.answers)]
    totals.answers = latest_answers(answers)
    totals.recent = latest_games([*totals.recent, [*share.recent[:2], list(share.recent[2])]])


def latest_answers(answers: list[list[str]]) -> list[list[str]]:
    """The latest `ANSWERS_MOST` of `[asked_at, moved_at]` pairs, latest first."""
    return sorted(answers, key=lambda pair: (pair[1], pair[0]), reverse=True)[:ANSWERS_MOST]


def latest_games(games: list[list[Any]]) -> list[list[Any]]:
    """The latest `RECENT_MOST` of `[finished_at, game_id, seats]`, latest first."""
    return sorted(games, key=lambda game: (game[0], game[1]), reverse=True)[:RECENT_MOST]


def tally_game(session: Session, game: Game) -> None:
    """Add a finished game to its players' totals and mark its seats so (the caller
    marks its `RatedGame`)."""
    found = shares(session, game)
    held = player_totals.of_addresses(session, found)
    for address, share in found.items():
        totals = held.get(address) or fresh_totals(address)
        add_share(totals, share)
        session.add(totals)
    seat_stats.mark_tallied(session, game.id)


def tally_untallied(referee: Referee) -> int:
    """Add to their players' totals the games taken in before the totals were kept;
    how many. Under the ratings' lock, like every writer of the totals."""
    with referee.db.reading() as session:
        if not player_totals.untallied(session, 1):
            return 0
    tallied = 0
    while True:
        with referee.db.transaction() as session:
            rated_games.lock(session)
            batch = player_totals.untallied(session, BATCH)
            games = rated_games.games_by_id(session, [rated.game_id for rated in batch])
            for rated in batch:
                tally_game(session, games[rated.game_id])
                rated.tallied = True
                session.add(rated)
        tallied += len(batch)
        if len(batch) < BATCH:
            return tallied
