"""Deciding submissions: the one place a move is ever judged and appended to a log.

`decide` locks the game and the submission, takes the state at the head
(kept on the game's row, or rebuilt from the latest snapshot and the log
after it), plays the move, appends it and any moves the referee records by
itself, marks the submission and writes the notices, all in one
transaction (and, in a game with bots' seats, hands over each seat a player
took over whose bot's turn these moves ended: `handovers.hand_over_due`);
then publishes. A submission that is no longer pending when
the lock is held is left alone, so running `decide` twice (a late ack
redelivered, two workers racing, a sweep, a batch) decides it exactly once.
On a worker, the transaction also decides a batch of other games' pending
submissions that no one holds: one commit for several moves. The
deadline sweep judges the moves it plays for seats out of time with the
same `judge`, under the lock it already holds.
"""

from __future__ import annotations

import logging
from collections.abc import Sequence
from dataclasses import dataclass, field
from datetime import UTC, datetime, timedelta
from typing import TYPE_CHECKING, Any

from sqlmodel import Session

from referee.automatic import FORCED
from referee.delivery import reachable
from referee.engine import IllegalMove, Resign
from referee.games import AnyGame
from referee.service import handovers, notifying, refusals, reply_cap
from referee.service.game_states import state_at
from referee.service.publishing import Published, publish
from referee.store import decision_rows, submissions
from referee.store.appending import Logged, log_entries
from referee.store.clock import now, stamp
from referee.store.decision_rows import Batch, Decided, Reach
from referee.store.reads import GameRow, rules_of
from referee.store.tables import GameStatus, Source, SubmissionStatus

if TYPE_CHECKING:
    from referee.service import Referee

_log = logging.getLogger(__name__)


# With a broker, the most pending submissions of other games one decision takes along.
BATCH = 16


def decide(referee: Referee, submission_id: str) -> Decided | None:
    """Decide one submission, exactly once, and publish; None when there is no such submission.

    With a broker (a worker's task), the same transaction also decides up to
    `BATCH` more pending submissions, of games no one else holds (its own game's
    too, after its own submission, as several seats may answer at once): a commit
    waits for the disk, and when moves come faster than a commit each, one commit
    for several keeps the worker up with them. Each of those is decided exactly
    once all the same; a task of its own, if one runs, finds it decided.

    A task decides on, a batch a transaction, while there is more pending,
    whether or not its own submission was decided already: submissions
    recorded while the mark that a task is on its way was up sent no task of
    their own (`Queue.enqueue_decisions`). One whose game another transaction
    holds is passed by, and gets a task of its own.
    """
    # Read before the transactions: the first time, it may be read from the database.
    secret = referee.secret()
    decided = None
    if not referee.queue.eager:
        # First, with the mark still up, so that what is recorded meanwhile sends no
        # task of its own: this task's own submission and a batch, both waiting for no
        # lock (SKIP LOCKED), so that a game another transaction holds keeps no move
        # waiting behind the mark. Under load this is most of the task's work.
        published = Published()
        with referee.db.transaction() as session:
            decided = _own(session, submission_id, secret, published, wait=False)
            _decided_pending(session, secret, published)
        publish(referee, published)
    # What is recorded from now on sends a task of its own; what was recorded before is
    # committed already, so the batches below find it (a no-op in the embedded default).
    referee.queue.decisions_taken()
    with referee.db.transaction() as session:
        published = Published()
        if decided is None:
            decided = _own(session, submission_id, secret, published, wait=True)
            if decided is None:
                return None
        # In the embedded default every submission is decided as it is recorded.
        along = None if referee.queue.eager else _take_along(session, secret, published)
    publish(referee, published)
    while along is not None and along.full:
        published = Published()
        with referee.db.transaction() as session:
            along = _take_along(session, secret, published)
        publish(referee, published)
    if along is not None and along.left is not None:
        referee.queue.enqueue_decisions([along.left])
    return decided


def _own(
    session: Session, submission_id: str, secret: bytes, published: Published, wait: bool
) -> Decided | None:
    """Lock and judge one submission into `published`; one decided already is read and
    told again (its task ran after all). None when there is no such submission, and
    without `wait` also when another transaction holds it or its game, or when it is
    decided already."""
    locked = decision_rows.lock_for_decision(session, submission_id, reachable, wait)
    if locked is None:
        return None
    game, submission = locked.game, locked.submission
    if submission["status"] != SubmissionStatus.PENDING:
        decided = decision_rows.decided(submission)
        published.decided.append((decided, game.id))
        return decided
    return _judged(session, Batch(game, [submission], locked.reach), secret, published)


@dataclass(frozen=True, slots=True)
class _Along:
    """What a batch left: whether it was full (more may be pending); if not, a submission
    still pending that no one is deciding (its game held by another transaction)."""

    full: bool
    left: str | None = None


def _take_along(session: Session, secret: bytes, published: Published) -> _Along:
    """Decide up to `BATCH` pending submissions of games that no one else holds: this
    transaction's own game's too (several seats may answer at once), as it stands now."""
    if _decided_pending(session, secret, published):
        return _Along(full=True)
    # Those just decided are no longer pending here; those being decided are locked.
    return _Along(full=False, left=decision_rows.pending_unheld(session))


def _decided_pending(session: Session, secret: bytes, published: Published) -> bool:
    """Decide up to `BATCH` pending submissions of games no one else holds; whether
    there were as many (more may be pending)."""
    batches = decision_rows.lock_pending(session, reachable, BATCH)
    for batch in batches:
        _judged(session, batch, secret, published)
    return sum(len(batch.submissions) for batch in batches) == BATCH


def _judged(session: Session, batch: Batch, secret: bytes, published: Published) -> Decided:
    """Judge a locked game's pending submissions into `published`; the first one's decision."""
    game_id = batch.game.id
    judged = judge(session, batch.game, batch.submissions, batch.reach, secret=secret)
    published.decided += [(decided, game_id) for decided in judged.decided]
    published.news = published.news or judged.news
    published.bots += judged.bots(game_id)
    published.finished += judged.finished(game_id)
    return judged.decided[0]


def check_turn(status: str, version: int, expected: int | None) -> None:
    """Refuse a move in a game that is over, or one that expected another version."""
    if status != GameStatus.ACTIVE:
        raise refusals.GameOver()
    if expected is not None and expected != version:
        raise refusals.StaleVersion.expected(version, expected)


def check_seat(to_act: Sequence[int], seat: int, move: Any) -> None:
    """Refuse a move from a seat that may not act now (resigning it always may)."""
    if seat not in to_act and not isinstance(move, Resign):
        raise refusals.NotYourTurn()


def with_forced_moves(rules: AnyGame, state: Any, logged: list[Logged]) -> Any:
    """Log the moves the referee records by itself after `state`; returns the state after them."""
    for seat, move, after in rules.forced_moves(state):
        logged.append((seat, move, FORCED))
        state = after
    return state


@dataclass(frozen=True, slots=True)
class Judged:
    """The decisions of a batch of submissions, and whether news is due."""

    decided: list[Decided]
    news: bool
    # The version after the moves played, when a bot's seat is to act then.
    bot_turn: int | None = None
    # Whether the moves played ended the game.
    over: bool = False

    def bots(self, game_id: str) -> list[tuple[str, int]]:
        """The bots' turn to publish (`Published.bots`), if a bot's seat is to act."""
        return [] if self.bot_turn is None else [(game_id, self.bot_turn)]

    def finished(self, game_id: str) -> list[str]:
        """The game to publish as finished (`Published.finished`), if these moves ended it."""
        return [game_id] if self.over else []


@dataclass(slots=True)
class _Judging:
    """A game locked for judging, as its submissions are played one after the other."""

    session: Session
    game: GameRow
    rules: AnyGame
    reach: Reach
    secret: bytes
    stamp: str
    status: str
    version: int
    state: Any = None
    # The state before the first move played (the game's head when judging began).
    before: Any = None
    rounds_before: int = 0
    logged: list[Logged] = field(default_factory=list)
    answers: list[dict[str, Any]] = field(default_factory=list)
    decided: list[Decided] = field(default_factory=list)
    # Whether a bot's move was refused but for staleness: its turn is played again.
    bot_refused: bool = False

    def head(self) -> Any:
        """The state the next submission is played in (read once, at the first need)."""
        if self.state is None:
            self.state = state_at(self.session, self.game, self.game.version)
            self.before = self.state
            self.rounds_before = self.rules.rounds_decided(self.state)
        return self.state


def judge(
    session: Session,
    game: GameRow,
    submissions: Sequence[dict[str, Any]],
    reach: Reach,
    changes: dict[str, Any] | None = None,
    at: str | None = None,
    *,
    secret: bytes,
) -> Judged:
    """Decide pending `submissions` of a game locked in `session`, in order.

    Each is played against the position the ones before it left; the
    accepted ones, and the moves the referee records by itself after each,
    are appended together. `changes` are more of the game's fields to set
    in the same statement; `at` is the time to stamp (default: now; the
    deadline sweep gives the time it was handed, from which the next
    turn's clock then starts); `secret` derives the token of a seat a player
    takes over from a bot.
    """
    judging = _Judging(
        session, game, rules_of(game), reach, secret, at or now(), game.status, game.version
    )
    for submission in submissions:
        _judge_one(judging, submission)
    return _save(judging, changes or {})


def _judge_one(judging: _Judging, submission: dict[str, Any]) -> None:
    try:
        move, after = _played(judging, submission)
    except refusals.Refusal as refused:
        fields: dict[str, Any] = {"status": SubmissionStatus.REJECTED}
        fields |= {"code": refused.code, "reason": refused.reason}
        # A bot refused but for staleness plays its turn again (`service.bots`).
        if submission["source"] == Source.BOT and refused.code != refusals.StaleVersion.code:
            judging.bot_refused = True
    else:
        fields = {"status": SubmissionStatus.ACCEPTED, "seq": judging.version + 1}
        judging.logged.append((submission["seat"], move, submission["source"]))
        judging.state = with_forced_moves(judging.rules, after, judging.logged)
        judging.version = judging.game.version + len(judging.logged)
        if judging.rules.result(judging.state) is not None:
            judging.status = GameStatus.OVER
    submission = {**submission, **fields, "decided_at": judging.stamp}
    decision_rows.set_submission(judging.session.connection(), submission)
    answer = notifying.answer(judging.game.id, submission, judging.reach, judging.stamp)
    if answer is not None and submission["source"] == Source.MAIL:
        played = fields["status"] == SubmissionStatus.ACCEPTED
        answer = reply_cap.mail_answer(judging.session, answer, played)
    if answer is not None:
        judging.answers.append(answer)
    judging.decided.append(decision_rows.decided(submission))


def _played(judging: _Judging, submission: dict[str, Any]) -> tuple[Any, Any]:
    """The submission's move and the state after it; raises the refusal that stops it."""
    check_turn(judging.status, judging.version, submission["expected_version"])
    state = judging.head()
    if submission["expected_version"] is None and _moved_on(judging, submission):
        raise refusals.StaleVersion.moved_on(judging.version, submission["seen_version"])
    try:
        move = judging.rules.move_from_json(submission["move"])
        return move, judging.rules.play(state, submission["seat"], move)
    except IllegalMove as refused:
        raise refusals.from_rules(refused) from None


def _moved_on(judging: _Judging, submission: dict[str, Any]) -> bool:
    """Whether what the seat answered changed between the version it saw and now.

    The rule (docs/design.md, "Stale moves"): a move is judged against the
    position its sender saw. When the game is still at `seen_version`, or
    the changes since left the seat's `Game.decision_key` as it was
    (another seat's answer to the same MaNiKi card), it is played;
    otherwise it is refused as `stale_version`. A timeout's move is chosen
    by the referee from the very position it is played in, under the
    game's lock, so it is never stale; nor is a submission recorded before
    versions were (no `seen_version`).
    """
    seen, version = submission["seen_version"], judging.version
    if seen is None or seen == version or submission["source"] == Source.TIMEOUT:
        return False
    if not 0 <= seen < version:
        return True
    seat, rules = submission["seat"], judging.rules
    before = state_at(judging.session, judging.game, seen)
    return bool(rules.decision_key(before, seat) != rules.decision_key(judging.state, seat))


def _save(judging: _Judging, changes: dict[str, Any]) -> Judged:
    """Append what was accepted, mark the game, write the notices."""
    connection = judging.session.connection()
    game = judging.game
    if not judging.logged:
        notifying.write(connection, None, judging.answers)
        decision_rows.set_game(connection, game.id, changes)
        again = game.version if judging.bot_refused else None
        return Judged(judging.decided, bool(judging.answers), again)
    appended = log_entries(game, judging.rules, judging.state, judging.logged, judging.stamp)
    notices = notifying.after_moves(
        game.id,
        game.seed,
        judging.rules,
        judging.state,
        appended,
        rounds_before=judging.rounds_before,
        reach=judging.reach,
        stamp=judging.stamp,
        asked_before=notifying.asked(judging.rules, judging.before),
    )
    decision_rows.set_game(connection, game.id, {**appended.game, **changes})
    # The seats change hands before the notices are written: theirs go to the newcomers.
    handed = handovers.hand_over_due(
        connection, judging.secret, game.id, appended.game, judging.reach, judging.stamp
    )
    notifying.write(connection, appended, [*judging.answers, *notices, *handed])
    bot_turn = appended.game["version"] if bots_to_act(appended.game, judging.reach) else None
    news = bool(judging.answers or notices or handed)
    over = appended.game["status"] == GameStatus.OVER
    return Judged(judging.decided, news, bot_turn, over)


def bots_to_act(game: dict[str, Any], reach: Reach) -> bool:
    """Whether a bot's seat is among those to act in a game (its new fields) still running."""
    return game["status"] == GameStatus.ACTIVE and not reach.bots.isdisjoint(game["to_act"])


def sweep_pending(referee: Referee) -> int:
    """Enqueue again the submissions left pending longer than `REFEREE_SWEEP_AFTER` seconds
    (with a broker, one task takes them all in); how many there were.

    A broker that lost its messages, or an API that could not reach it,
    only delays a decision.
    """
    after = timedelta(seconds=referee.settings.sweep_after)
    with referee.db.reading() as session:
        pending = submissions.pending_before(session, stamp(datetime.now(UTC) - after))
    publish(referee, Published(to_decide=pending))
    if pending:
        _log.info("sweep: %d pending submissions enqueued again", len(pending))
    return len(pending)
