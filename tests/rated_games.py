"""Rated games played through the service, for the ratings' tests: named players, a game
made from an open game they fill, and random legal moves to its end."""

from __future__ import annotations

import random
from collections.abc import Sequence
from typing import Any, TypeVar

from sqlmodel import col, select

from referee.engine import Resign
from referee.rng import Rng
from referee.service import Referee, profiles
from referee.service.creating import NewGame, create_game
from referee.service.creating import Player as Seated
from referee.service.game_states import state_at
from referee.service.players import MANAGE, PLAY, READ, Player
from referee.service.seeks import NewSeek, join_seek, post_seek
from referee.service.submitting import KnownSeat, SubmitMove, submit_move
from referee.store.reads import rules_of
from referee.store.tables import (
    Game,
    GameStatus,
    RatedGame,
    Rating,
    RatingChange,
    Seat,
    Seek,
    Submission,
    SubmissionStatus,
)

NAMES = {
    f"{name.lower()}@x.test": name
    for name in ("Ann", "Bob", "Cyd", "Dee", "Eve", "Fay", "Gus", "Hal")
}
ADDRESSES = list(NAMES)
Row = TypeVar("Row", Rating, RatingChange, RatedGame, Seek)


def player(address: str) -> Player:
    return Player(address, frozenset({READ, PLAY, MANAGE}))


def name_players(referee: Referee) -> Referee:
    """`referee`, the players of `NAMES` known to it (seated once by a trusted client) and
    named."""
    seated = [Seated(f"p{n}", email=address) for n, address in enumerate(NAMES)]
    for pair in range(0, len(seated), 2):
        create_game(referee, NewGame("subdivision", seated[pair : pair + 2], {}, trusted=True))
    for address, name in NAMES.items():
        profiles.set_profile(referee, player(address), name)
    return referee


def seek_game(referee: Referee, game: str, addresses: Sequence[str], **terms: Any) -> str:
    """A game from an open game posted by the first of `addresses` and filled by the
    others (the last join starts it): its id."""
    count = len(addresses)
    new = NewSeek(game, min_players=count, max_players=count, **terms)
    seek = post_seek(referee, player(addresses[0]), new)
    for address in addresses[1:]:
        seek = join_seek(referee, player(address), seek.id)
    assert seek.game_id is not None, seek
    return seek.game_id


def game_row(referee: Referee, game_id: str) -> Game:
    with referee.db.reading() as session:
        game = session.get(Game, game_id)
        assert game is not None
        return game


def seat_of(referee: Referee, game_id: str, address: str) -> int:
    with referee.db.reading() as session:
        seats = session.exec(select(Seat).where(Seat.game_id == game_id)).all()
    return next(seat.seat for seat in seats if seat.email == address)


def addresses_by_seat(referee: Referee, game_id: str) -> list[str]:
    with referee.db.reading() as session:
        query = select(Seat.email).where(Seat.game_id == game_id).order_by(col(Seat.seat))
        return [email or "" for email in session.exec(query)]


def play(referee: Referee, game: Game, seat: int, move: Any) -> None:
    """Submit the seat's move in the game as it stands (`game` as last read): decided as it
    is submitted (the embedded default), and played."""
    rules = rules_of(game)
    command = SubmitMove(
        game.id, KnownSeat(seat), rules.move_to_json(move), expected_version=game.version
    )
    submitted = submit_move(referee, command)
    with referee.db.reading() as session:
        decided = session.get(Submission, submitted.id)
    assert decided is not None and decided.status == SubmissionStatus.ACCEPTED, decided


def play_out(referee: Referee, game_id: str, rng: random.Random, moves: int | None = None) -> Game:
    """Random legal moves by the seats to act until the game ends (or `moves` are made)."""
    made = 0
    while moves is None or made < moves:
        with referee.db.reading() as session:
            game = session.get(Game, game_id)
            assert game is not None
            if game.status == GameStatus.OVER:
                return game
            state = state_at(session, game, game.version)
        rules = rules_of(game)
        seat = rng.choice(sorted(rules.actors(state)))
        play(referee, game, seat, rules.random_move(state, seat, Rng(f"{rng.random()}")))
        made += 1
    return game_row(referee, game_id)


def rows(referee: Referee, table: type[Row]) -> list[Row]:
    with referee.db.reading() as session:
        return list(session.exec(select(table)))


def resign(referee: Referee, game_id: str, address: str) -> None:
    play(referee, game_row(referee, game_id), seat_of(referee, game_id, address), Resign())
