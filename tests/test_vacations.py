"""Vacations as use cases, without HTTP: the allowance, the 24-hour rule, replacing and
ending one, bad input, and the deadline sweep (with a moved clock) around one."""

from __future__ import annotations

from dataclasses import replace
from datetime import UTC, datetime, timedelta

import pytest
from sqlmodel import select

from referee.service import Referee, refusals
from referee.service.creating import NewGame, create_game
from referee.service.creating import Player as Seated
from referee.service.deadlines import sweep_deadlines
from referee.service.players import MANAGE, Player
from referee.service.vacations import (
    days_by_year,
    end_vacation,
    game_clock,
    set_vacation,
    standing,
)
from referee.store.tables import Game, Outbox, OutboxKind, Submission

DAY = timedelta(days=1)
HOUR = timedelta(hours=1)
NOON = datetime(2026, 3, 2, 12, 0, tzinfo=UTC)


@pytest.fixture
def referee(fresh_referee: Referee) -> Referee:
    return fresh_referee


def player(address: str) -> Player:
    return Player(address, frozenset({MANAGE}))


def new_game(referee: Referee, tag: str, deadline: str | None = "72h") -> Game:
    players = [Seated("Ann", f"ann-{tag}@players.test"), Seated("Bob", f"bob-{tag}@players.test")]
    return create_game(referee, NewGame("subdivision", players, {}, deadline=deadline)).game


def test_days_are_counted_per_calendar_day_touched_in_each_year() -> None:
    assert days_by_year(NOON, NOON + HOUR) == {2026: 1}
    assert days_by_year(NOON, NOON + DAY) == {2026: 2}
    midnight = datetime(2026, 3, 3, tzinfo=UTC)
    assert days_by_year(midnight, midnight + DAY) == {2026: 1}
    new_year = datetime(2027, 1, 1, tzinfo=UTC)
    assert days_by_year(new_year - 2 * DAY, new_year + 3 * DAY + HOUR) == {2026: 2, 2027: 4}
    assert days_by_year(NOON, NOON) == {}


def test_the_allowance_holds_per_year_and_a_new_one_replaces_the_planned(
    referee: Referee,
) -> None:
    ann = player("ann@allowance.test")
    assert standing(referee, ann, NOON).days_left == 30
    planned = set_vacation(referee, ann, NOON + DAY, NOON + 20 * DAY, NOON)
    assert planned.vacation is not None and not planned.vacation.ongoing
    assert (planned.vacation.days, planned.days_left) == (20, 10)
    # Another replaces it: the days of the first come back.
    again = set_vacation(referee, ann, NOON + 2 * DAY, NOON + 31 * DAY, NOON)
    assert again.vacation is not None and again.vacation.days == 30 and again.days_left == 0
    with pytest.raises(refusals.VacationRefused, match="31 days of 2026"):
        set_vacation(referee, ann, NOON + DAY, NOON + 31 * DAY, NOON)
    # Dropped before it begins: every day comes back.
    assert end_vacation(referee, ann, NOON).days_left == 30
    assert standing(referee, ann, NOON).vacation is None


def test_a_vacation_across_new_year_counts_in_each_year(fresh_referee: Referee) -> None:
    referee = Referee(replace(fresh_referee.settings, vacation_days=5), fresh_referee.db)
    bob = player("bob@new-year.test")
    december = datetime(2026, 12, 20, 9, tzinfo=UTC)
    new_year = datetime(2027, 1, 1, tzinfo=UTC)
    with pytest.raises(refusals.VacationRefused, match="6 days of 2027"):
        set_vacation(referee, bob, new_year - 3 * DAY, new_year + 6 * DAY, december)
    taken = set_vacation(referee, bob, new_year - 3 * DAY, new_year + 5 * DAY, december)
    assert taken.vacation is not None and taken.vacation.days == 8
    assert (taken.year, taken.days_left) == (2026, 2)


def test_ending_early_gives_back_the_unused_days_and_only_the_end_of_one_under_way_changes(
    referee: Referee,
) -> None:
    cid = player("cid@early.test")
    set_vacation(referee, cid, NOON, NOON + 10 * DAY, NOON)
    later = NOON + 2 * DAY + HOUR
    under_way = standing(referee, cid, later)
    assert under_way.vacation is not None and under_way.vacation.ongoing
    with pytest.raises(refusals.VacationRefused, match="only its end"):
        set_vacation(referee, cid, later + DAY, later + 3 * DAY, later)
    # Its end moves, with or without its start named again.
    longer = set_vacation(referee, cid, NOON, NOON + 12 * DAY, later)
    assert longer.vacation is not None and longer.vacation.ends_at == NOON + 12 * DAY
    ended = end_vacation(referee, cid, later)
    assert ended.vacation is None and ended.days_left == 30 - 3
    # Over: a new one may be planned, the used days still counted (a day both touch, once).
    assert set_vacation(referee, cid, None, later + 5 * DAY, later).days_left == 30 - 3 - 5


@pytest.mark.parametrize(
    ("starts", "ends", "field"),
    [
        (NOON - HOUR, NOON + DAY, "from"),
        (NOON + DAY, NOON + DAY, "until"),
        (NOON + 2 * DAY, NOON + DAY, "until"),
        (NOON + 400 * DAY, NOON + 401 * DAY, "from"),
        (NOON + DAY, datetime(9999, 12, 31, tzinfo=UTC), "until"),
    ],
)
def test_bad_times_are_refused_saying_which(
    referee: Referee, starts: datetime, ends: datetime, field: str
) -> None:
    with pytest.raises(refusals.BadRequest) as refused:
        set_vacation(referee, player("dan@bad.test"), starts, ends, NOON)
    assert field in refused.value.extra["errors"]
    assert standing(referee, player("dan@bad.test"), NOON).vacation is None


def test_a_start_a_few_minutes_ago_is_now(referee: Referee) -> None:
    taken = set_vacation(
        referee, player("eve@grace.test"), NOON - timedelta(minutes=2), NOON + DAY, NOON
    )
    assert taken.vacation is not None and taken.vacation.starts_at == NOON


def test_a_vacation_may_not_begin_less_than_24_hours_before_a_deadline(
    referee: Referee,
) -> None:
    game = new_game(referee, "notice")
    mover = player(f"{('ann', 'bob')[game.to_act[0]]}-notice@players.test")
    now = datetime.now(UTC)
    with referee.db.reading() as session:
        due = game_clock(session, game, now).due_at
    assert due is not None
    with pytest.raises(refusals.VacationRefused, match=f"game {game.id} runs out"):
        set_vacation(referee, mover, due - 20 * HOUR, due + 2 * DAY, now)
    # At least 24 hours before it, or after it: taken.
    set_vacation(referee, mover, due - 25 * HOUR, due + 2 * DAY, now)
    set_vacation(referee, mover, due + HOUR, due + 2 * DAY, now)
    # The seat not to act has no deadline.
    other = player(f"{('ann', 'bob')[1 - game.to_act[0]]}-notice@players.test")
    set_vacation(referee, other, due - HOUR, due + 2 * DAY, now)


def _kinds(referee: Referee, game_id: str) -> list[str]:
    with referee.db.reading() as session:
        rows = session.exec(select(Outbox).where(Outbox.game_id == game_id)).all()
    return [row.kind for row in rows]


def _timeouts(referee: Referee, game_id: str) -> int:
    with referee.db.reading() as session:
        rows = session.exec(select(Submission).where(Submission.game_id == game_id)).all()
    return sum(row.source == "timeout" for row in rows)


def test_the_sweep_never_reminds_nor_times_out_a_seat_away_and_does_on_its_return(
    referee: Referee,
) -> None:
    game = new_game(referee, "sweep")
    mover = player(f"{('ann', 'bob')[game.to_act[0]]}-sweep@players.test")
    leaves = datetime.now(UTC)
    with referee.db.reading() as session:
        before = game_clock(session, game, leaves).due_at
    assert before is not None
    set_vacation(referee, mover, None, leaves + 5 * DAY, leaves)
    back = standing(referee, mover, leaves).vacation
    assert back is not None
    with referee.db.reading() as session:
        frozen = game_clock(session, game, leaves + HOUR)
    assert frozen.away_until == {game.to_act[0]: back.ends_at}
    assert frozen.due_at is not None
    # The time left when it left is the time left when it is back.
    assert frozen.due_at - back.ends_at == before - back.starts_at

    for moment in (leaves + HOUR, before - HOUR, before + HOUR, back.ends_at - HOUR):
        swept = sweep_deadlines(referee, moment)
        assert game.id not in swept.reminded + swept.timed_out, moment
    assert OutboxKind.REMINDER not in _kinds(referee, game.id)
    assert _timeouts(referee, game.id) == 0

    assert game.id in sweep_deadlines(referee, frozen.due_at - HOUR).reminded
    assert game.id not in sweep_deadlines(referee, frozen.due_at - timedelta(seconds=1)).timed_out
    assert sweep_deadlines(referee, frozen.due_at).timed_out == [game.id]
    assert _timeouts(referee, game.id) == 1
