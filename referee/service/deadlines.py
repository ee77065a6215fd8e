"""Deadlines: reminders at 80% of a turn's time, and the moves the referee plays when it runs out.

The sweep is handed the time, so tests move the clock instead of sleeping.
A timed-out seat's move is recorded and judged like any other submission
(source `timeout`), inside the one transaction that also marks the turn
as timed out; then the change is published. A turn's clock stands still
while a seat to act is on vacation (`turn_clock.frozen_due`), and a game
one of whose seats to act is away is not reminded until that seat is
back, nor timed out but for a turn that ran out before the vacation began.

The move played for a seat out of time is `referee.automatic.timeout_move`,
the function `referee verify` and `referee suggest` work it out again with
(rng `<seed>:timeout:<n>:<seat>`, `n` the moves logged before it). It is
worked out before the game's lock is taken, as `play_bots` does, and the
lock then checks the game is still at that version.

Deadlines stand for people only: a bot's seat is never reminded nor timed
out, and a turn where only bots act has no deadline. With `on_timeout:
bot` the `greedy` bot plays the turn of a seat out of time; a seat that
ran out of time `BOT_AFTER_TIMEOUTS` turns in a row (its latest moves in
the log, so a move of its own resets the count) is handed to that bot for
the rest of the game, and every seat is told (`bot_seat`).
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime
from typing import TYPE_CHECKING, Any

from referee.automatic import timeout_move
from referee.pace import paced
from referee.service import reachability
from referee.service.deciding import Judged, judge, with_forced_moves
from referee.service.game_states import state_at
from referee.service.notifying import write
from referee.service.publishing import Published, publish
from referee.service.submitting import KnownSeat, SubmitMove, record_move
from referee.service.turn_clock import REMIND_AT, SeatsAway, due_at, held, reminder_due
from referee.store import bot_seats, decision_rows, vacation_rows
from referee.store.appending import Logged, outbox_row
from referee.store.clock import now, stamp
from referee.store.due_games import locked, maybe_due
from referee.store.reads import rules_of
from referee.store.tables import (
    BOT_AFTER_TIMEOUTS,
    TIMEOUT_BOT,
    Game,
    OutboxKind,
    Source,
    TimeoutPolicy,
)

if TYPE_CHECKING:
    from referee.service import Referee


@dataclass(frozen=True, slots=True)
class Swept:
    reminded: list[str]
    timed_out: list[str]


def sweep_deadlines(referee: Referee, moment: datetime) -> Swept:
    """Send the reminders due at 80% of a turn's time and apply the timeouts due at `moment`."""
    with referee.db.reading() as session:
        games = maybe_due(session, moment, REMIND_AT)
        levels = bot_seats.levels(session, [game.id for game in games])
        # A turn where only bots act has no deadline.
        games = [game for game in games if not set(game.to_act) <= set(levels.get(game.id, {}))]
        away = vacation_rows.seats_away(session, games, moment)
    reminded, timed_out = [], []
    published = Published()
    for game in games:
        seats_away = away.get(game.id, {})
        due, reminder = due_at(game, seats_away), reminder_due(game, seats_away)
        assert due is not None and reminder is not None
        # A clock stands still while a seat to act is away, so a turn due by now ran out
        # before any such vacation began: it times out, the seat away or not.
        if due <= moment and game.timed_out_version != game.version:
            judged = _time_out(referee, game.id, game.version, moment)
            if judged is not None and judged.decided:
                timed_out.append(game.id)
                published.bots += judged.bots(game.id)
                published.finished += judged.finished(game.id)
        elif (
            not held(game, seats_away, moment)
            and reminder <= moment
            and game.reminded_version != game.version
            and _remind(referee, game.id, game.version, moment)
        ):
            reminded.append(game.id)
    published.changed, published.news = timed_out, bool(reminded or timed_out)
    publish(referee, published)
    return Swept(reminded, timed_out)


def _away(session: Any, game: Game, moment: datetime) -> SeatsAway:
    """The game's seats away as they stand at `moment`, read again under the game's lock."""
    return vacation_rows.seats_away(session, [game], moment).get(game.id, {})


def _remind(referee: Referee, game_id: str, version: int, moment: datetime) -> bool:
    with referee.db.transaction() as session:
        game = locked(session, game_id, version)
        if game is None or game.reminded_version == version:
            return False
        away = _away(session, game, moment)
        if held(game, away, moment):
            return False
        game.reminded_version = version
        session.add(game)
        due = due_at(game, away)
        assert due is not None
        payload = {"version": version, "due_at": stamp(due)}
        robots = bot_seats.levels(session, [game.id]).get(game.id, {})
        reminders = [
            outbox_row(game.id, OutboxKind.REMINDER, seat, payload, now())
            for seat in game.to_act
            if seat not in robots
        ]
        session.flush()
        write(session.connection(), None, reminders)
        return True


def _time_out(referee: Referee, game_id: str, version: int, moment: datetime) -> Judged | None:
    # Worked out before the lock is taken (a bot may take a while): the moves
    # follow from the game at `version`, which the lock then checks it still is.
    planned = _timeout_moves(referee, game_id, version)
    secret = referee.secret()
    with referee.db.transaction() as session:
        game = locked(session, game_id, version)
        if game is None or game.timed_out_version == version:
            return None
        due = due_at(game, _away(session, game, moment))
        if due is None or due > moment:
            return None
        recorded = [
            submission.model_dump(include=set(decision_rows.SUBMISSION_READ))
            for submission in _record_timeouts(session, game, planned)
        ]
        return judge(
            session,
            game,
            recorded,
            reachability.reach(session, game.id),
            {"timed_out_version": version},
            at=stamp(moment),
            secret=secret,
        )


def _timeout_moves(referee: Referee, game_id: str, version: int) -> list[tuple[int, Any]]:
    """Each seat out of time at `version` with the move its game's policy plays for it, in
    seat order, each played on the state the seats before left."""
    with referee.db.reading() as session:
        game = session.get(Game, game_id)
        if game is None or game.version != version:
            return []
        state = state_at(session, game, version)
        robots = bot_seats.levels(session, [game.id]).get(game.id, {})
        players = reachability.reach(session, game.id).seat_count
    rules = rules_of(game)
    policy = TimeoutPolicy(game.on_timeout or TimeoutPolicy.RANDOM)
    planned: list[tuple[int, Any]] = []
    # The moves logged before each seat's: the ones before it in this sweep and
    # the forced ones after them count, as the record will show them.
    moves = version
    for seat in game.to_act:
        # Deadlines stand for people: a bot's seat plays its own turn.
        if seat in robots or rules.result(state) is not None or seat not in rules.actors(state):
            continue
        move = timeout_move(
            rules,
            state,
            seat,
            policy,
            game.seed,
            moves,
            players=players,
            options=game.options,
            bot_seconds=paced(game.bot_seconds or referee.settings.bot_seconds, game.bot_pace),
        )
        forced: list[Logged] = []
        state = with_forced_moves(rules, rules.play(state, seat, move), forced)
        moves += 1 + len(forced)
        planned.append((seat, move))
    return planned


def _record_timeouts(session: Any, game: Game, planned: list[tuple[int, Any]]) -> list[Any]:
    """Record the moves played for the seats out of time; with `on_timeout: bot`, hand to
    the bot each seat out of time too many turns in a row."""
    rules = rules_of(game)
    version = game.version
    policy = TimeoutPolicy(game.on_timeout or TimeoutPolicy.RANDOM)
    players = reachability.reach(session, game.id).seat_count
    recorded = []
    for seat, move in planned:
        submission, _fresh = record_move(
            session,
            SubmitMove(
                game.id,
                KnownSeat(seat),
                rules.move_to_json(move),
                source=Source.TIMEOUT,
                seen_version=version,
                # Once per seat and turn, whoever sweeps.
                idempotency_key=f"timeout:{version}",
            ),
        )
        recorded.append(submission)
        if policy == TimeoutPolicy.BOT:
            _hand_over_if_due(session, game, seat, players)
    return recorded


def _hand_over_if_due(session: Any, game: Game, seat: int, players: int) -> None:
    """Hand the seat to the `greedy` bot when this timeout is its `BOT_AFTER_TIMEOUTS`th in
    a row, and tell every seat."""
    before = bot_seats.latest_sources(session, game.id, seat, BOT_AFTER_TIMEOUTS - 1)
    if len(before) < BOT_AFTER_TIMEOUTS - 1 or any(s != Source.TIMEOUT for s in before):
        return
    bot_seats.hand_to_bot(session, game.id, seat, TIMEOUT_BOT, game.version)
    payload = {"seat": seat, "level": TIMEOUT_BOT, "timeouts": BOT_AFTER_TIMEOUTS}
    session.flush()
    notices = [
        outbox_row(game.id, OutboxKind.BOT_SEAT, number, payload, now())
        for number in range(players)
    ]
    write(session.connection(), None, notices)
