"""Deadlines: reminders at 80% of a turn's time, and the moves the referee plays when it runs out.

Deadlines live on the game row and are applied by a sweep that is handed
the time, so tests move the clock instead of sleeping. A timed-out seat's
move is recorded and judged like any other submission (source `timeout`),
inside the one transaction that also marks the turn as timed out.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from datetime import datetime, timedelta
from typing import Any

from sqlmodel import Session, col, select

from referee.engine import Resign
from referee.games import AnyGame
from referee.rng import Rng
from referee.store import submissions
from referee.store.appending import outbox_row, with_forced_moves
from referee.store.clock import now, parse_stamp, stamp
from referee.store.db import engine, transaction
from referee.store.deciding import SUBMISSION_READ, Reach, judge
from referee.store.notices import insert_notices, reachable_seats
from referee.store.reads import rules_of, seats, state_at
from referee.store.tables import Game, GameStatus, OutboxKind, Source, TimeoutPolicy

_DURATION = re.compile(r"([0-9]{1,6}(?:\.[0-9]{1,6})?) ?([smhd]?)")


def parse_deadline(text: str) -> int:
    """Seconds from `72h`, `90m`, `2d`, `45s` or a bare number of hours; ValueError otherwise."""
    text = text.strip().lower()
    units = {"s": 1, "m": 60, "h": 3600, "d": 86400}
    # ASCII digits only: float() would also take "inf", "1e9", "nan" and other scripts' digits.
    found = _DURATION.fullmatch(text)
    if found is None:
        raise ValueError(f"{text[:20]!r} is not a duration such as 72h, 90m or 2d")
    seconds = round(float(found.group(1)) * units[found.group(2) or "h"])
    if not 60 <= seconds <= 366 * 86400:
        raise ValueError("a deadline lies between 1 minute and 366 days")
    return seconds


def due_at(game: Game) -> datetime | None:
    """When the seats to act now run out of time (None: no deadline)."""
    if game.deadline_seconds is None or game.status != GameStatus.ACTIVE:
        return None
    return parse_stamp(game.updated_at) + timedelta(seconds=game.deadline_seconds)


@dataclass(frozen=True, slots=True)
class Swept:
    reminded: list[str]
    timed_out: list[str]


def sweep_deadlines(moment: datetime) -> Swept:
    """Send the reminders due at 80% of a turn's time and apply the timeouts due at `moment`."""
    with Session(engine()) as session:
        games = list(
            session.exec(
                select(Game).where(
                    Game.status == GameStatus.ACTIVE, col(Game.deadline_seconds).is_not(None)
                )
            )
        )
    reminded, timed_out = [], []
    for game in games:
        due = due_at(game)
        assert due is not None and game.deadline_seconds is not None
        if due <= moment and game.timed_out_version != game.version:
            if _time_out(game.id, game.version, moment):
                timed_out.append(game.id)
        elif (
            due - timedelta(seconds=game.deadline_seconds * 0.2) <= moment
            and game.reminded_version != game.version
            and _remind(game.id, game.version)
        ):
            reminded.append(game.id)
    return Swept(reminded, timed_out)


def _locked(session: Session, game_id: str, version: int) -> Game | None:
    """The game under its lock, if it is still at `version` and running."""
    game = session.exec(
        select(Game).where(Game.id == game_id).with_for_update(key_share=True)
    ).first()
    if game is None or game.version != version or game.status != GameStatus.ACTIVE:
        return None
    return game


def _remind(game_id: str, version: int) -> bool:
    with transaction() as session:
        game = _locked(session, game_id, version)
        if game is None or game.reminded_version == version:
            return False
        game.reminded_version = version
        session.add(game)
        due = due_at(game)
        assert due is not None
        payload, at = {"version": version, "due_at": stamp(due)}, now()
        reminders = [outbox_row(game.id, OutboxKind.REMINDER, s, payload, at) for s in game.to_act]
        insert_notices(session.connection(), reminders)
        return True


def timeout_move(
    rules: AnyGame, state: Any, seat: int, policy: TimeoutPolicy, seed: str, version: int
) -> Any:
    """The move the referee plays for a seat out of time.

    `pass` where the rules have one and allow it now (`Game.pass_move`),
    `random` otherwise; `random` draws from an rng seeded with the
    secret seed, the version and the seat, so it is fixed by stored data.
    """
    if policy == TimeoutPolicy.FORFEIT:
        return Resign()
    passing = rules.pass_move(state, seat) if policy == TimeoutPolicy.PASS else None
    if passing is not None:
        return passing
    return rules.random_move(state, seat, Rng(f"{seed}:timeout:{version}:{seat}"))


def _time_out(game_id: str, version: int, moment: datetime) -> bool:
    with transaction() as session:
        game = _locked(session, game_id, version)
        if game is None or game.timed_out_version == version:
            return False
        due = due_at(game)
        if due is None or due > moment:
            return False
        rules = rules_of(game)
        state = state_at(session, game, version)
        policy = TimeoutPolicy(game.on_timeout or TimeoutPolicy.RANDOM)
        recorded = []
        for seat in game.to_act:
            if rules.result(state) is not None or seat not in rules.actors(state):
                continue
            move = timeout_move(rules, state, seat, policy, game.seed, version)
            state = with_forced_moves(rules, rules.play(state, seat, move), [])
            submission, _fresh = submissions.record(
                session,
                game.id,
                seat,
                rules.move_to_json(move),
                source=Source.TIMEOUT,
                seen_version=version,
                # Once per seat and turn, whoever sweeps.
                idempotency_key=f"timeout:{version}",
            )
            recorded.append(submission.model_dump(include=set(SUBMISSION_READ)))
        game_seats = seats(session, game.id)
        reach = Reach(len(game_seats), reachable_seats(session.connection(), game.id))
        decided, _news = judge(
            session, game, recorded, reach, {"timed_out_version": version}, at=stamp(moment)
        )
        return bool(decided)
