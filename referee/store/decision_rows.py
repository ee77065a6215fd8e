"""The rows deciding reads and writes: the game and submission under their locks, the marks.

Deciding runs for every move, so it reads in one statement what it needs
and writes with Core statements built once. The policy (what is refused,
who is told) is the service's (`referee.service.deciding`).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from functools import cache
from typing import Any

import sqlalchemy as sa
from sqlmodel import Session

from referee.store.tables import (
    DECISION_FIELDS,
    Game,
    Seat,
    Submission,
    SubmissionStatus,
    core_table,
)

_GAME = core_table(Game)
_SUBMISSION = core_table(Submission)
_SEAT = core_table(Seat)
_PENDING = _SUBMISSION.c.status == SubmissionStatus.PENDING


@dataclass(frozen=True, slots=True)
class Decided:
    """A submission as deciding left it: its id and the fields deciding sets."""

    id: str
    status: str
    code: str | None
    reason: str | None
    seq: int | None
    decided_at: str | None


@dataclass(frozen=True, slots=True)
class LockedGame:
    """The game's row as deciding reads it (a `GameRow`)."""

    id: str
    name: str
    rules_version: str
    options: dict[str, Any]
    seed: str
    status: str
    version: int
    head_hash: str
    state: dict[str, Any] | None


@dataclass(frozen=True, slots=True)
class Reach:
    """How many seats a game has, which of them news can reach (mail or a webhook),
    and which a bot plays."""

    seat_count: int
    reachable: frozenset[int]
    bots: frozenset[int] = frozenset()


# The columns of a submission that judging reads.
SUBMISSION_READ = (
    "id",
    "seat",
    "move",
    "expected_version",
    "seen_version",
    "source",
    *DECISION_FIELDS,
)
# Whom news can reach: a condition on a row of the `seat` table. The rule is the
# service's (`referee.delivery.reachable`: some channel reaches the seat).
Reaches = Callable[[sa.Table], sa.ColumnElement[bool]]


def _reach_columns(game_id: sa.ColumnElement[str], reaches: Reaches) -> list[sa.Label[Any]]:
    """The number of a game's seats, and the seats news can reach (comma-separated)."""
    seats_of_game = _SEAT.c.game_id == game_id
    return [
        sa.select(sa.func.count())
        .select_from(_SEAT)
        .where(seats_of_game)
        .scalar_subquery()
        .label("seat_count"),
        sa.select(sa.func.aggregate_strings(sa.cast(_SEAT.c.seat, sa.String), ","))
        .where(seats_of_game, reaches(_SEAT))
        .scalar_subquery()
        .label("reachable_seats"),
        sa.select(sa.func.aggregate_strings(sa.cast(_SEAT.c.seat, sa.String), ","))
        .where(seats_of_game, _SEAT.c.bot.is_not(None))
        .scalar_subquery()
        .label("bot_seats"),
    ]


def _seats(listed: str | None) -> frozenset[int]:
    return frozenset(int(seat) for seat in listed.split(",")) if listed else frozenset()


def _reach(row: sa.Row[Any]) -> Reach:
    return Reach(row.seat_count, _seats(row.reachable_seats), _seats(row.bot_seats))


@cache
def _reach_of_game(reaches: Reaches) -> sa.Select[Any]:
    return sa.select(*_reach_columns(sa.bindparam("game_id"), reaches))


def reach(session: Session, game_id: str, reaches: Reaches) -> Reach:
    """How many seats the game has, and which of them news can reach (`reaches`)."""
    query = _reach_of_game(reaches)
    return _reach(session.connection().execute(query, {"game_id": game_id}).one())


# Deciding runs for every move, so it reads in one statement what it needs:
# the game (with the state at its head) and the submission, both locked, the
# number of seats, and the seats news can reach (with mail or a webhook).
# Locking the submission too matters: when another worker decided it while
# this one waited for the lock, PostgreSQL re-reads locked rows at their
# newest version, so the status read here is the one that worker committed.
# Only a pending submission is locked: one decided already (by a batch of another
# worker, `lock_pending`) is read without a lock, so that its task, run after all,
# writes nothing and its commit waits for no disk.
def _decision_read(reaches: Reaches) -> sa.Select[Any]:
    return sa.select(
        *(_GAME.c[name] for name in LockedGame.__dataclass_fields__),
        *(_SUBMISSION.c[name].label(f"submission_{name}") for name in SUBMISSION_READ),
        *_reach_columns(_GAME.c.id, reaches),
    ).select_from(_SUBMISSION.join(_GAME, _GAME.c.id == _SUBMISSION.c.game_id))


@cache
def _lock_for_decision(reaches: Reaches, wait: bool) -> sa.Select[Any]:
    return (
        _decision_read(reaches)
        .where(_SUBMISSION.c.id == sa.bindparam("submission_id"), _PENDING)
        .with_for_update(of=[_GAME, _SUBMISSION], key_share=True, skip_locked=not wait)
    )


@cache
def _read_for_decision(reaches: Reaches) -> sa.Select[Any]:
    return _decision_read(reaches).where(_SUBMISSION.c.id == sa.bindparam("submission_id"))


# Pending submissions of games no other transaction holds, oldest first: a batch
# decided in the transaction that decides one submission, which may hold one of
# those games already. SKIP LOCKED makes the batch wait for no lock, so it can never
# close a cycle of waits with another transaction.
@cache
def _lock_pending(reaches: Reaches) -> sa.Select[Any]:
    return (
        _decision_read(reaches)
        .where(_PENDING)
        .order_by(_SUBMISSION.c.created_at, _SUBMISSION.c.id)
        .limit(sa.bindparam("most"))
        .with_for_update(of=[_GAME, _SUBMISSION], key_share=True, skip_locked=True)
    )


# A pending submission whose row no transaction holds (one being decided is locked,
# and passed by).
_PENDING_UNHELD = (
    sa.select(_SUBMISSION.c.id).where(_PENDING).limit(1).with_for_update(skip_locked=True)
)


def pending_unheld(session: Session) -> str | None:
    """A submission still pending that no transaction is deciding (its game may be held
    by one), if there is one."""
    found = session.connection().execute(_PENDING_UNHELD).first()
    return None if found is None else str(found.id)


# Built once: the columns an UPDATE sets are the names of the parameters
# it is given (besides the row's id).
_SET_SUBMISSION = sa.update(_SUBMISSION).where(_SUBMISSION.c.id == sa.bindparam("submission_id"))
SET_GAME = sa.update(_GAME).where(_GAME.c.id == sa.bindparam("game_id"))


@dataclass(frozen=True, slots=True)
class Locked:
    """A submission and its game, both locked for deciding, and the game's reach."""

    game: LockedGame
    submission: dict[str, Any]
    reach: Reach


def lock_for_decision(
    session: Session, submission_id: str, reaches: Reaches, wait: bool = True
) -> Locked | None:
    """Lock a pending submission and its game, with the seats news can reach (`reaches`);
    a submission decided already is read as it is, unlocked; None when there is no such
    submission. Without `wait`: None at once too when another transaction holds either,
    and when it is decided already."""
    # Core statements on the session's connection: the ORM's bookkeeping
    # cost more than the statements on this path, run for every move.
    connection = session.connection()
    found = connection.execute(
        _lock_for_decision(reaches, wait), {"submission_id": submission_id}
    ).first()
    if not wait:
        return None if found is None else _locked(found)
    found = found or (
        connection.execute(_read_for_decision(reaches), {"submission_id": submission_id}).first()
    )
    return None if found is None else _locked(found)


def lock_pending(session: Session, reaches: Reaches, most: int) -> list[Batch]:
    """Lock up to `most` pending submissions of games that no other transaction holds,
    with their games as they stand in this one: each game once, with its submissions in
    the order they came."""
    query = _lock_pending(reaches)
    found = session.connection().execute(query, {"most": most})
    games: dict[str, Batch] = {}
    for row in found:
        locked = _locked(row)
        batch = games.setdefault(locked.game.id, Batch(locked.game, [], locked.reach))
        batch.submissions.append(locked.submission)
    return list(games.values())


def _locked(row: sa.Row[Any]) -> Locked:
    return Locked(
        LockedGame(*row[: len(LockedGame.__dataclass_fields__)]),
        {name: row._mapping[f"submission_{name}"] for name in SUBMISSION_READ},
        _reach(row),
    )


@dataclass(frozen=True, slots=True)
class Batch:
    """A game locked for deciding, with its pending submissions locked, in order."""

    game: LockedGame
    submissions: list[dict[str, Any]]
    reach: Reach


def set_submission(connection: sa.Connection, submission: dict[str, Any]) -> None:
    """Write the fields deciding set on a submission."""
    update = {name: submission[name] for name in DECISION_FIELDS}
    connection.execute(_SET_SUBMISSION, {"submission_id": submission["id"], **update})


def set_game(connection: sa.Connection, game_id: str, changes: dict[str, Any]) -> None:
    """Write new values of a game's fields."""
    if changes:
        connection.execute(SET_GAME, {"game_id": game_id, **changes})


def decided(submission: dict[str, Any]) -> Decided:
    return Decided(**{name: submission[name] for name in ("id", *DECISION_FIELDS)})
