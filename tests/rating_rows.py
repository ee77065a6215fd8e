"""Rows written straight into the store for the tests of profiles and leaderboards: games
with seats and moves at chosen times, and ratings with their history, as the rating job
would leave them (the tests of what is read need not play games to the end)."""

from __future__ import annotations

import itertools
from collections.abc import Sequence
from datetime import datetime, timedelta
from typing import Any

from sqlmodel import Session

from referee.store.clock import stamp
from referee.store.tables import (
    Game,
    Move,
    RatedGame,
    Rating,
    RatingChange,
    Seat,
    Submission,
)

_ids = itertools.count()


def game(
    session: Session,
    seats: Sequence[str | None],
    made: datetime,
    *,
    name: str = "subdivision",
    status: str = "over",
    result: dict[str, Any] | None = None,
    finished: datetime | None = None,
    bots: Sequence[int] = (),
    game_id: str | None = None,
) -> str:
    """A game whose seats are given these addresses (None: no address), made at `made`."""
    game_id = game_id or f"{next(_ids):032x}"
    session.add(
        Game(
            id=game_id,
            name=name,
            rules_version="test",
            options={},
            seed="s",
            seed_commitment="c",
            status=status,
            head_hash="h",
            to_act=[],
            result=result,
            created_at=stamp(made),
            updated_at=stamp(finished or made),
        )
    )
    session.flush()
    for number, address in enumerate(seats):
        session.add(
            Seat(
                game_id=game_id,
                seat=number,
                name=f"Seat name {number}",
                email=address,
                token_hash=f"{game_id}-{number}",
                bot="greedy" if number in bots else None,
            )
        )
    session.flush()
    return game_id


def move(
    session: Session,
    game_id: str,
    seq: int,
    seat: int,
    at: datetime,
    *,
    source: str = "rest",
    notation: str = "m",
) -> None:
    """Move `seq` of a game, by `seat`, logged at `at`, from a submission of `source`."""
    # An id of its own, as the game's (hex digits, which PostgreSQL holds as a uuid).
    submission = f"{seq:04x}{game_id[4:]}"
    session.add(
        Submission(
            id=submission,
            game_id=game_id,
            seat=seat,
            move={},
            request_hash="0" * 64,
            status="accepted",
            seq=seq,
            created_at=stamp(at),
            source=source,
        )
    )
    session.add(
        Move(
            game_id=game_id,
            seq=seq,
            seat=seat,
            notation=notation,
            created_at=stamp(at),
            hash="0" * 64,
            source=source,
        )
    )
    session.flush()


def rated(
    session: Session,
    address: str,
    game_name: str,
    skills: Sequence[tuple[float, float]],
    start: datetime,
    *,
    wins: int = 0,
    every: timedelta = timedelta(days=1),
) -> None:
    """A player's history at a game: one counted game per skill (mu, sigma) in turn,
    a day apart from `start`, and its rating the last of them."""
    before = (25.0, 25 / 3)
    seq = 0
    for n, (mu, sigma) in enumerate(skills):
        at = start + n * every
        # A game of no one's: the history alone is what is read of it.
        game_id = game(session, [None, None], at, name=game_name, finished=at)
        row = RatedGame(
            game_id=game_id,
            game=game_name,
            counted=True,
            finished_at=stamp(at),
            applied_at=stamp(at),
        )
        session.add(row)
        session.flush()
        assert row.seq is not None
        seq = row.seq
        session.add(
            RatingChange(
                seq=seq,
                address=address,
                game=game_name,
                seat=0,
                rank=1,
                mu_before=before[0],
                sigma_before=before[1],
                mu_after=mu,
                sigma_after=sigma,
                at=stamp(at),
            )
        )
        before = (mu, sigma)
    session.add(
        Rating(
            address=address,
            game=game_name,
            mu=before[0],
            sigma=before[1],
            games=len(skills),
            wins=wins,
            last_seq=seq,
        )
    )
    session.flush()
