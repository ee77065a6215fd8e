"""Ratings as use cases: taking finished games in, one at a time and in order, and
working every rating out again from the games (`rebuild`).

Ratings are a projection of the finished games, never a source of truth.
Every finished game is taken in once (a `RatedGame`, its `seq` the order
it was taken in), by when it ended; a game that counts (`counted`) moves
its players' skills at its game by its finishing order (`finishing_order`,
`referee.ratings`) and leaves a `RatingChange` per player. The writers
hold one lock (`rated_games.lock`), so two workers never take games in at
once, and each game's skills start from those the games before it left.

When a game's last move is committed, deciding publishes it
(`Published.finished`) and the queue runs `rate_finished` on a worker,
or in the embedded default on a background thread: never in the request
that made the move. The ratings sweep runs it too, so a task that was
lost only delays a rating.

`rebuild` replays every taken-in game in `seq` order from `START`,
deciding afresh whether it counts from the game's rows and its final
state, and compares what it gets with what is stored: the same results
in the same order give the same figures, bit for bit.
"""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from sqlmodel import Session

from referee.ratings import START, Skill, finishing_ranks, updated
from referee.service import tallying
from referee.service.game_states import state_at
from referee.store import player_totals, rated_games, rating_rows, seat_stats
from referee.store.clock import now
from referee.store.rated_games import GameFacts
from referee.store.reads import rules_of
from referee.store.tables import (
    Game,
    PlayerTotals,
    RatedGame,
    Rating,
    RatingChange,
    Source,
    TimeoutPolicy,
)

if TYPE_CHECKING:
    from referee.service import Referee

# Finished games taken in (or replayed) per transaction.
BATCH = 100


def counted(facts: GameFacts) -> bool:
    """Whether a finished game moves ratings: it came from a rated seek, every seat was
    a different player with a public name, and no bot played a move in it (no bot's
    seat, none handed to a bot or taken over from one, no move the timeout bot played)."""
    if not facts.seek_rated or not facts.seats:
        return False
    addresses = [seat.address for seat in facts.seats]
    if len(set(addresses)) != len(addresses):
        return False
    for seat in facts.seats:
        if seat.address is None or seat.public_name is None:
            return False
        if seat.bot is not None or seat.bot_since is not None:
            return False
    if facts.handed_over or Source.BOT in facts.sources:
        return False
    return not (facts.on_timeout == TimeoutPolicy.BOT and Source.TIMEOUT in facts.sources)


def finishing_order(session: Session, game: Game, facts: GameFacts) -> list[int]:
    """Each seat's place in a finished game: its result's winners first, then by score,
    the seats that resigned (read from its final state) or were handed to a bot after
    timeouts last (`referee.ratings.finishing_ranks`)."""
    assert game.result is not None, "a finished game has a result"
    state = state_at(session, game, game.version)
    last = set(rules_of(game).resigned(state))
    last |= {seat.seat for seat in facts.seats if seat.bot_since is not None}
    return finishing_ranks(game.result["scores"], game.result["winners"], last)


@dataclass(frozen=True, slots=True)
class Outcome:
    """What a finished game does to ratings: whether it counts, and if so its players
    (address by seat) and their places."""

    counted: bool
    addresses: tuple[str, ...] = ()
    ranks: tuple[int, ...] = ()


def _outcomes(session: Session, games: Sequence[Game]) -> Iterator[tuple[Game, Outcome]]:
    found = rated_games.facts(session, games)
    for game in games:
        facts = found[game.id]
        if game.result is None or not counted(facts):
            yield game, Outcome(False)
            continue
        ranks = finishing_order(session, game, facts)
        addresses = tuple(seat.address for seat in facts.seats if seat.address is not None)
        yield game, Outcome(True, addresses, tuple(ranks))


def rate_finished(referee: Referee) -> int:
    """Take in every finished game not taken in yet, in order, adding each to its
    players' totals (`tallying`) too; how many were taken in."""
    tallying.tally_untallied(referee)
    with referee.db.reading() as session:
        if not rated_games.unrated(session, 1):
            return 0
    taken = 0
    while True:
        with referee.db.transaction() as session:
            rated_games.lock(session)
            games = rated_games.unrated(session, BATCH)
            for game, outcome in _outcomes(session, games):
                _take_in(session, game, outcome)
        taken += len(games)
        if len(games) < BATCH:
            return taken


def _take_in(session: Session, game: Game, outcome: Outcome) -> None:
    rated = RatedGame(
        game_id=game.id,
        game=game.name,
        counted=outcome.counted,
        finished_at=game.updated_at,
        applied_at=now(),
        tallied=True,
    )
    seq = rated_games.add_rated_game(session, rated)
    tallying.tally_game(session, game)
    if not outcome.counted:
        return
    held = rating_rows.of_players(session, outcome.addresses, game.name)
    for change in _changes(seq, rated, outcome, _skills_of(held, outcome.addresses)):
        row = held.get(change.address) or Rating(
            address=change.address, game=game.name, mu=0.0, sigma=0.0, last_seq=seq
        )
        _moved(row, change)
        session.add(row)
        session.add(change)


def _skills_of(held: dict[str, Rating], addresses: Sequence[str]) -> list[Skill]:
    return [
        Skill(held[address].mu, held[address].sigma) if address in held else START
        for address in addresses
    ]


def _changes(
    seq: int, rated: RatedGame, outcome: Outcome, before: Sequence[Skill]
) -> list[RatingChange]:
    """Each player's change in a counted game, from the skills it began with."""
    after = updated(before, outcome.ranks)
    return [
        RatingChange(
            seq=seq,
            address=address,
            game=rated.game,
            seat=seat,
            rank=rank,
            mu_before=old.mu,
            sigma_before=old.sigma,
            mu_after=new.mu,
            sigma_after=new.sigma,
            at=rated.finished_at,
        )
        for seat, (address, rank, old, new) in enumerate(
            zip(outcome.addresses, outcome.ranks, before, after, strict=True)
        )
    ]


def _moved(rating: Rating, change: RatingChange) -> None:
    rating.mu, rating.sigma = change.mu_after, change.sigma_after
    rating.games += 1
    rating.wins += 1 if change.rank == 1 else 0
    rating.last_seq = change.seq


@dataclass(slots=True)
class Rebuilt:
    """What `rebuild` replayed, and each stored figure that differed from the replay."""

    games: int = 0
    players: int = 0
    ratings: int = 0
    differences: list[str] = field(default_factory=list)


def rebuild(referee: Referee, *, write: bool = True) -> Rebuilt:
    """Work every rating out again from the games taken in, in order, from `START`, and
    compare with what is stored; with `write`, make the stored figures the replay's."""
    with referee.db.transaction() as session:
        rated_games.lock(session)
        replay = _Replay()
        seq = 0
        while batch := rated_games.rated_games(session, seq, BATCH):
            games = rated_games.games_by_id(session, [rated.game_id for rated in batch])
            read = _outcomes(session, [games[rated.game_id] for rated in batch])
            outcomes = {game.id: outcome for game, outcome in read}
            for rated in batch:
                replay.take(rated, outcomes[rated.game_id])
                replay.tally(tallying.shares(session, games[rated.game_id]))
                if write and not rated.tallied:
                    rated.tallied = True
                    session.add(rated)
                    seat_stats.mark_tallied(session, rated.game_id)
            seq = batch[-1].seq or seq
        found = Rebuilt(replay.games, len({address for address, _ in replay.ratings}))
        found.ratings = len(replay.ratings)
        found.differences = replay.compare(session, write=write)
    return found


@dataclass(slots=True)
class _Replay:
    """The figures the taken-in games give, replayed in order."""

    games: int = 0
    counted: dict[int, tuple[RatedGame, bool]] = field(default_factory=dict)
    ratings: dict[tuple[str, str], Rating] = field(default_factory=dict)
    changes: dict[tuple[int, str], RatingChange] = field(default_factory=dict)
    totals: dict[str, PlayerTotals] = field(default_factory=dict)

    def take(self, rated: RatedGame, outcome: Outcome) -> None:
        assert rated.seq is not None
        self.games += 1
        self.counted[rated.seq] = (rated, outcome.counted)
        if not outcome.counted:
            return
        keys = [(address, rated.game) for address in outcome.addresses]
        held = {key[0]: self.ratings[key] for key in keys if key in self.ratings}
        for change in _changes(rated.seq, rated, outcome, _skills_of(held, outcome.addresses)):
            key = (change.address, rated.game)
            rating = self.ratings.setdefault(
                key,
                Rating(address=key[0], game=key[1], mu=0.0, sigma=0.0, last_seq=rated.seq),
            )
            _moved(rating, change)
            self.changes[(change.seq, change.address)] = change

    def tally(self, shares: dict[str, tallying.Share]) -> None:
        for address, share in shares.items():
            totals = self.totals.setdefault(address, tallying.fresh_totals(address))
            tallying.add_share(totals, share)

    def compare(self, session: Session, *, write: bool) -> list[str]:
        """Each stored figure that differs from the replay's (fixed with `write`)."""
        differences = []
        for seq, (rated, replayed) in self.counted.items():
            if rated.counted != replayed:
                differences.append(
                    f"game #{seq} ({rated.game_id}): stored counted={rated.counted}, "
                    f"replayed counted={replayed}"
                )
                if write:
                    rated.counted = replayed
                    session.add(rated)
        stored = {(row.address, row.game): row for row in rated_games.every_rating(session)}
        differences += _differing(session, "rating", stored, self.ratings, _RATING, write=write)
        changes = {(row.seq, row.address): row for row in rated_games.every_change(session)}
        differences += _differing(session, "change", changes, self.changes, _CHANGE, write=write)
        totals = {(row.address,): row for row in player_totals.every_totals(session)}
        summed = {(address,): row for address, row in self.totals.items()}
        differences += _differing(session, "totals", totals, summed, _TOTALS, write=write)
        return differences


_RATING = ("mu", "sigma", "games", "wins", "last_seq")
_TOTALS = ("games_finished", "timeouts", "resigned", "answers", "recent")
_CHANGE = (
    "game",
    "seat",
    "rank",
    "mu_before",
    "sigma_before",
    "mu_after",
    "sigma_after",
    "at",
)


def _differing(
    session: Session,
    kind: str,
    stored: dict[Any, Any],
    replayed: dict[Any, Any],
    figures: tuple[str, ...],
    *,
    write: bool,
) -> list[str]:
    """The rows of one table whose figures differ between `stored` and `replayed`
    (`==` on floats: the same bits), and those only one of them has."""
    differences = []
    for key in sorted(stored.keys() | replayed.keys(), key=repr):
        old, new = stored.get(key), replayed.get(key)
        named = f"{kind} {' '.join(str(part) for part in key)}"
        if old is None:
            differences.append(f"{named}: missing (replayed {_figures(new, figures)})")
            if write:
                session.add(new)
        elif new is None:
            differences.append(f"{named}: stored {_figures(old, figures)}, not replayed")
            if write:
                session.delete(old)
        elif any(getattr(old, name) != getattr(new, name) for name in figures):
            differences.append(
                f"{named}: stored {_figures(old, figures)}, replayed {_figures(new, figures)}"
            )
            if write:
                for name in figures:
                    setattr(old, name, getattr(new, name))
                session.add(old)
    return differences


def _figures(row: object, figures: tuple[str, ...]) -> str:
    return " ".join(f"{name}={getattr(row, name)!r}" for name in figures)
