"""Submitting a move, from any source: REST, a game page, a mail reply, a timeout.

`submit_move` is the one way a move enters the referee from outside: it
reads the move (JSON or notation), refuses at once what cannot be played
now, records the submission as pending, commits, and has it decided
(`referee.service.deciding`) — on the worker, or right here in the
embedded default — and with `wait` it waits for that decision. Mail
replies and timeouts record inside their own transactions with
`record_move`, the same function `submit_move` uses.
"""

from __future__ import annotations

import re
import time
from contextlib import ExitStack
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from sqlmodel import Session

from referee import games
from referee.engine import JSON, IllegalMove
from referee.i18n import N_, _
from referee.queue import Heard
from referee.service import refusals
from referee.service.deciding import check_seat, check_turn
from referee.service.players import PLAY, Player, seat_in
from referee.service.publishing import Published, publish
from referee.store import keys, reads, submissions
from referee.store.creation import new_ordered_id
from referee.store.reads import Turn
from referee.store.tables import DECISION_FIELDS, Source, Submission, SubmissionStatus

if TYPE_CHECKING:
    from referee.service import Referee

_ID = re.compile(r"[0-9a-f]{32}")
# Sources whose sender waits for an answer: what cannot be played now is
# refused at once. A mail reply or a timeout is judged by the worker, which
# answers by mail, with the same refusal in the same words.
_CHECKED_AT_ONCE = frozenset({Source.REST})


NO_TOKEN = N_("this needs a seat's token")


def well_formed(identifier: str) -> bool:
    """Ids are 32 hex digits; anything else is looked up nowhere."""
    return _ID.fullmatch(identifier) is not None


@dataclass(frozen=True, slots=True)
class SeatToken:
    """A seat named by its secret token (a bearer header, a game page's cookie); None
    when the request carried none. `seat`, when given, must be the token's seat."""

    token: str | None
    seat: int | None = None


@dataclass(frozen=True, slots=True)
class KnownSeat:
    """A seat the caller vouches for (a checked reply address, the referee itself)."""

    seat: int


@dataclass(frozen=True, slots=True)
class PlayerSeat:
    """The seat of a player (proved by its player token) in the game: the only one it
    holds there, or `seat` among several."""

    player: Player
    seat: int | None = None


# Whoever a command says acts.
SeatRef = SeatToken | KnownSeat | PlayerSeat


@dataclass(frozen=True, slots=True)
class SubmitMove:
    """A move to submit: whose, what, and against which position."""

    game_id: str
    seat: SeatRef
    # The move's JSON form, or its notation.
    move: JSON | str
    source: Source = Source.REST
    # The version the move must still find when decided (refused otherwise).
    expected_version: int | None = None
    # The version the sender saw (default: `expected_version`, else the game's now).
    seen_version: int | None = None
    # A retry with the same key gets the first submission back.
    idempotency_key: str | None = None


def seat_of(session: Session, game_id: str, seat: SeatRef, scope: str = PLAY) -> int:
    """The seat number a command names; refused for a token that is not a seat here.

    `scope` is what the caller does as that seat: `play` (the default: moves,
    webhooks, rematches) or `read` (views). A seat token may do both; a player
    token what its scopes allow (403 otherwise), and only in its own seats.
    """
    if isinstance(seat, KnownSeat):
        return seat.seat
    if isinstance(seat, PlayerSeat):
        # The seat first: a token of another player's is a stranger here (401).
        found = seat_in(session, seat.player, game_id, seat.seat)
        seat.player.require_as_seat(scope)
        return found
    if seat.token is None:
        raise refusals.Unauthorized(_(NO_TOKEN))
    found_seat = keys.seat_of_token(session, game_id, seat.token)
    if found_seat is None:
        raise refusals.Unauthorized(_("this token is not a seat of this game"))
    if seat.seat is not None and seat.seat != found_seat:
        raise refusals.Unauthorized(
            _("this token is not seat {seat} of this game").format(seat=seat.seat)
        )
    return found_seat


def seat_holding(session: Session, game_id: str, token: str) -> int | None:
    """The seat of `game_id` whose token is `token`, or None: a page shows a browser
    holding no seat as a spectator, where a command would be refused."""
    return keys.seat_of_token(session, game_id, token)


def record_move(
    session: Session, command: SubmitMove, submission_id: str | None = None
) -> tuple[Submission, bool]:
    """Record the command's move as pending in `session`, by `submission_id` if given;
    `(earlier, False)` for a retry.

    Raises the refusal of a move that cannot be read, of a retry that is
    not the same request, and, for a sender that waits, of a move that
    cannot be played now. The caller commits, then has it decided.
    """
    game = reads.turn(session, command.game_id) if well_formed(command.game_id) else None
    if game is None:
        raise refusals.NotFound.game()
    seat = seat_of(session, game.id, command.seat)
    rules = games.get(game.name, game.rules_version)
    move = _read(rules, command.move, game.options)
    move_json = rules.move_to_json(move)
    key = command.idempotency_key
    earlier = submissions.find_by_key(session, game.id, seat, key) if key else None
    if earlier is not None:
        return _retried(earlier, move_json, command.expected_version), False
    if command.source in _CHECKED_AT_ONCE:
        check_turn(game.status, game.version, command.expected_version)
        check_seat(game.to_act, seat, move)
    submission, fresh = submissions.record(
        session,
        game.id,
        seat,
        move_json,
        source=command.source,
        seen_version=_seen(command, game),
        expected_version=command.expected_version,
        idempotency_key=key,
        submission_id=submission_id,
    )
    if not fresh:
        # A retry that raced the first request in: it must still be the same request.
        _retried(submission, move_json, command.expected_version)
    return submission, fresh


def _read(rules: games.AnyGame, move: JSON | str, options: JSON) -> Any:
    try:
        return rules.parse(move, options) if isinstance(move, str) else rules.move_from_json(move)
    except IllegalMove as refused:
        raise refusals.from_rules(refused) from None


def _seen(command: SubmitMove, game: Turn) -> int:
    if command.seen_version is not None:
        return min(command.seen_version, game.version)
    return game.version if command.expected_version is None else command.expected_version


def _retried(earlier: Submission, move: JSON, expected: int | None) -> Submission:
    if earlier.request_hash != submissions.request_hash(move, expected):
        raise refusals.IdempotencyConflict()
    return earlier


def submit_move(referee: Referee, command: SubmitMove, wait: float | None = None) -> Submission:
    """Submit a move and have it decided; with `wait`, the submission once decided
    (or as it is after `wait` seconds). Raises the refusals `record_move` raises."""
    submission_id = new_ordered_id()
    with ExitStack() as stack:
        # Listen before recording: a worker's batch may decide the move the moment it
        # is committed, before this request would have begun to listen.
        heard = (
            None
            if wait is None
            else stack.enter_context(referee.queue.decided_signal(submission_id))
        )
        # Recording a move writes one row: it needs no transaction of its own.
        with referee.db.one_write() as session:
            submission, fresh = record_move(session, command, submission_id)
        if fresh:
            publish(referee, Published(to_decide=[submission.id]))
        if heard is not None and wait is not None:
            if not fresh:
                # A retry: the earlier submission's, read before the first wait.
                heard = stack.enter_context(referee.queue.decided_signal(submission.id))
            pending = fresh and not referee.queue.eager
            submission = _await(referee, submission, wait, heard, pending)
    return submission


def refusal_of(rejected: Submission, **extra: Any) -> refusals.Refusal:
    """The refusal a rejected submission records, as the service raises it."""
    return refusals.of_code(rejected.code, rejected.reason, **extra)


def _await(
    referee: Referee, submission: Submission, seconds: float, heard: Heard, pending: bool
) -> Submission:
    """The submission once decided, or as it is after `seconds`.

    `pending` says the submission is known to be undecided (just recorded,
    its task not run here), which saves reading it before the first wait.
    A decision heard from the worker carries the fields it set, so it is
    answered without reading the submission again.
    """
    deadline = time.monotonic() + seconds
    while True:
        if not pending:
            with referee.db.reading() as session:
                submission = session.get(Submission, submission.id) or submission
        pending = False
        left = deadline - time.monotonic()
        if submission.status != SubmissionStatus.PENDING or left <= 0:
            return submission
        # Look again now and then even unannounced: a decision made outside
        # a worker task (a direct `decide`) announces nothing.
        decided = heard(min(left, 0.5))
        if (
            isinstance(decided, dict)
            and decided.get("status", SubmissionStatus.PENDING) != SubmissionStatus.PENDING
        ):
            for name in DECISION_FIELDS:
                setattr(submission, name, decided.get(name))
            return submission
