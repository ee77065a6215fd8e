"""Deciding submissions: the one place a move is ever judged and appended to a log.

`decide` locks the game and the submission, takes the state at the head
(kept on the game's row, or rebuilt from the latest snapshot and the log
after it), plays the move, appends it and any moves the referee records by
itself, marks the submission and writes the outbox rows, all in one
transaction. A submission that is no longer pending when the lock is held
is left alone, so running `decide` twice (a late ack redelivered, two
workers racing, a sweep) decides it exactly once. The deadline sweep judges
the moves it plays for seats out of time with the same `judge`, under the
lock it already holds.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import sqlalchemy as sa
from sqlmodel import Session

from referee.delivery import reachable
from referee.engine import IllegalMove
from referee.games import AnyGame
from referee.store.appending import (
    Logged,
    append_to_log,
    outbox_row,
    with_forced_moves,
    write,
)
from referee.store.clock import now
from referee.store.db import transaction
from referee.store.notices import insert_notices
from referee.store.reads import GameRow, rules_of, state_at
from referee.store.tables import (
    DECISION_FIELDS,
    Game,
    GameStatus,
    OutboxKind,
    Seat,
    Source,
    Submission,
    SubmissionStatus,
    core_table,
)

_GAME = core_table(Game)
_SUBMISSION = core_table(Submission)
_SEAT = core_table(Seat)


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
class Decision:
    """A submission as `decide` left it, and whether it wrote news that is due to be sent."""

    submission: Decided | None
    news_due: bool = False
    # The submission's game, so that its followers can be told it changed.
    game_id: str | None = None


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
    """How many seats a game has, and which of them news can reach (mail or a webhook)."""

    seat_count: int
    reachable: frozenset[int]


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
_SEATS_OF_GAME = _SEAT.c.game_id == _GAME.c.id
# Deciding runs for every move, so it reads in one statement what it needs:
# the game (with the state at its head) and the submission, both locked, the
# number of seats, and the seats news can reach (with mail or a webhook).
# Locking the submission too matters: when another worker decided it while
# this one waited for the lock, PostgreSQL re-reads locked rows at their
# newest version, so the status read here is the one that worker committed.
_LOCK_FOR_DECISION = (
    sa.select(
        *(_GAME.c[name] for name in LockedGame.__dataclass_fields__),
        *(_SUBMISSION.c[name].label(f"submission_{name}") for name in SUBMISSION_READ),
        sa.select(sa.func.count())
        .select_from(_SEAT)
        .where(_SEATS_OF_GAME)
        .scalar_subquery()
        .label("seat_count"),
        sa.select(sa.func.aggregate_strings(sa.cast(_SEAT.c.seat, sa.String), ","))
        .where(_SEATS_OF_GAME, reachable(_SEAT))
        .scalar_subquery()
        .label("reachable_seats"),
    )
    .select_from(_SUBMISSION.join(_GAME, _GAME.c.id == _SUBMISSION.c.game_id))
    .where(_SUBMISSION.c.id == sa.bindparam("submission_id"))
    .with_for_update(of=[_GAME, _SUBMISSION], key_share=True)
)
# Built once: the columns an UPDATE sets are the names of the parameters
# it is given (besides the row's id).
_SET_SUBMISSION = sa.update(_SUBMISSION).where(_SUBMISSION.c.id == sa.bindparam("submission_id"))
SET_GAME = sa.update(_GAME).where(_GAME.c.id == sa.bindparam("game_id"))


def decide(submission_id: str) -> Decision:
    """Decide one submission, exactly once; `Decision(None)` when there is no such submission.

    The decision says whether delivery has work now (the worker sends it at once).
    """
    with transaction() as session:
        # Core statements on the session's connection: the ORM's bookkeeping
        # cost more than the statements on this path, run for every move.
        found = (
            session.connection()
            .execute(_LOCK_FOR_DECISION, {"submission_id": submission_id})
            .first()
        )
        if found is None:
            return Decision(None)
        submission = {name: found._mapping[f"submission_{name}"] for name in SUBMISSION_READ}
        game = LockedGame(*found[: len(LockedGame.__dataclass_fields__)])
        if submission["status"] != SubmissionStatus.PENDING:
            return Decision(_decided(submission), game_id=game.id)
        listed = found.reachable_seats
        reach = Reach(
            found.seat_count,
            frozenset(int(seat) for seat in listed.split(",")) if listed else frozenset(),
        )
        decided, news_due = judge(session, game, [submission], reach)
        return Decision(decided[0], news_due, game.id)


def judge(
    session: Session,
    game: GameRow,
    submissions: Sequence[dict[str, Any]],
    reach: Reach,
    changes: dict[str, Any] | None = None,
    at: str | None = None,
) -> tuple[list[Decided], bool]:
    """Decide pending `submissions` of a game locked in `session`, in order.

    Each is played against the position the ones before it left; the
    accepted ones, and the moves the referee records by itself after each,
    are appended together. `changes` are more of the game's fields to set
    in the same statement; `at` is the time to stamp (default: now; the
    deadline sweep gives the time it was handed, from which the next
    turn's clock then starts). Returns the decisions, and whether news is due.
    """
    connection = session.connection()
    rules = rules_of(game)
    stamp = at or now()
    status = game.status
    version = game.version
    state: Any = None
    rounds_before = 0
    logged: list[Logged] = []
    answers: list[dict[str, Any]] = []
    decided: list[Decided] = []
    for submission in submissions:
        try:
            if status != GameStatus.ACTIVE:
                raise IllegalMove("game_over", "the game is over")
            expected = submission["expected_version"]
            if expected is not None and expected != version:
                raise IllegalMove(
                    "stale_version",
                    f"the game is at version {version}, not {expected}: look again and resubmit",
                )
            if state is None:
                state = state_at(session, game, game.version)
                rounds_before = rules.rounds_decided(state)
            if expected is None and _moved_on(session, game, rules, submission, version, state):
                raise IllegalMove(
                    "stale_version",
                    f"the game moved on since version {submission['seen_version']}, which your "
                    f"move answered (it is at version {version} now): look again and resubmit",
                )
            move = rules.move_from_json(submission["move"])
            after = rules.play(state, submission["seat"], move)
        except IllegalMove as refused:
            fields: dict[str, Any] = {"status": SubmissionStatus.REJECTED}
            fields |= {"code": refused.code, "reason": refused.reason}
        else:
            fields = {"status": SubmissionStatus.ACCEPTED, "seq": version + 1}
            logged.append((submission["seat"], move, submission["id"]))
            state = with_forced_moves(rules, after, logged)
            version = game.version + len(logged)
            if rules.result(state) is not None:
                status = GameStatus.OVER
        submission = {**submission, **fields, "decided_at": stamp}
        update = {name: submission[name] for name in DECISION_FIELDS}
        connection.execute(_SET_SUBMISSION, {"submission_id": submission["id"], **update})
        source, seat = submission["source"], submission["seat"]
        # A move that came by mail is answered by mail, accepted or refused;
        # a seat whose move the referee played for it hears of it at once.
        if source == Source.MAIL or (source == Source.TIMEOUT and seat in reach.reachable):
            payload = {"submission": submission["id"]}
            answers.append(outbox_row(game.id, OutboxKind.ANSWER, seat, payload, stamp))
        decided.append(_decided(submission))
    if not logged:
        if answers:
            insert_notices(connection, answers)
        if changes:
            connection.execute(SET_GAME, {"game_id": game.id, **changes})
        return decided, bool(answers)
    appended = append_to_log(
        game,
        rules,
        state,
        logged,
        stamp,
        rounds_before=rounds_before,
        seat_count=reach.seat_count,
        reachable=reach.reachable,
    )
    connection.execute(SET_GAME, {"game_id": game.id, **appended.game, **(changes or {})})
    write(connection, appended, answers=answers)
    return decided, bool(answers or appended.news)


def _moved_on(
    session: Session,
    game: GameRow,
    rules: AnyGame,
    submission: dict[str, Any],
    version: int,
    state: Any,
) -> bool:
    """Whether what the seat answered changed between the version it saw and `state`.

    The rule (docs/design.md, "Stale moves"): a move is judged against the
    position its sender saw. When the game is still at `seen_version`, or
    the changes since left the seat's `Game.decision_key` as it was
    (another seat's answer to the same MaNiKi card), it is played;
    otherwise it is refused as `stale_version`. A timeout's move is chosen
    by the referee from the very position it is played in, under the
    game's lock, so it is never stale; nor is a submission recorded before
    versions were (no `seen_version`).
    """
    seen = submission["seen_version"]
    if seen is None or seen == version or submission["source"] == Source.TIMEOUT:
        return False
    if not 0 <= seen < version:
        return True
    seat = submission["seat"]
    before = state_at(session, game, seen)
    return bool(rules.decision_key(before, seat) != rules.decision_key(state, seat))


def _decided(submission: dict[str, Any]) -> Decided:
    return Decided(**{name: submission[name] for name in ("id", *DECISION_FIELDS)})
