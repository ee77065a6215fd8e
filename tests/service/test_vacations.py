"""Vacations as use cases, without HTTP: the allowance over any 365 days in a row, the
24-hour rule, replacing and ending one, bad input, and the deadline sweep (with a moved
clock) around one."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

import pytest
from sqlmodel import select

from referee.service import Referee, refusals
from referee.service.creating import NewGame, create_game
from referee.service.creating import Player as Seated
from referee.service.deadlines import sweep_deadlines
from referee.service.players import MANAGE, Player
from referee.service.vacations import (
    days_of,
    end_vacation,
    fullest,
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


def at(year: int, month: int, day: int, hour: int = 0) -> datetime:
    return datetime(year, month, day, hour, tzinfo=UTC)


def test_days_are_counted_per_calendar_day_touched() -> None:
    assert days_of(NOON, NOON + HOUR) == {NOON.date()}
    assert len(days_of(NOON, NOON + DAY)) == 2
    midnight = at(2026, 3, 3)
    assert days_of(midnight, midnight + DAY) == {midnight.date()}
    new_year = at(2027, 1, 1)
    assert len(days_of(new_year - 2 * DAY, new_year + 3 * DAY + HOUR)) == 6
    assert days_of(NOON, NOON) == set()


def test_the_fullest_window_is_365_days_in_a_row() -> None:
    days = {at(2026, 1, 1).date() + n * DAY for n in range(10)} | {at(2026, 12, 31).date()}
    # Ending on 31 December 2026: 1 January to 31 December, all eleven days.
    found = fullest(days, at(2026, 12, 1).date(), at(2027, 2, 1).date())
    assert (found.first, found.last, found.days) == (
        at(2026, 1, 1).date(),
        at(2026, 12, 31).date(),
        11,
    )
    # A day later the first of them has left the window.
    assert fullest(days, at(2027, 1, 1).date(), at(2027, 2, 1).date()).days == 10


def test_the_allowance_holds_and_a_new_one_replaces_the_planned(referee: Referee) -> None:
    ann = player("ann@allowance.test")
    assert standing(referee, ann, NOON).days_left == 30
    planned = set_vacation(referee, ann, NOON + DAY, NOON + 20 * DAY, NOON)
    assert planned.vacation is not None and not planned.vacation.ongoing
    assert (planned.vacation.days, planned.days_left) == (20, 10)
    # Another replaces it: the days of the first come back.
    again = set_vacation(referee, ann, NOON + 2 * DAY, NOON + 31 * DAY, NOON)
    assert again.vacation is not None and again.vacation.days == 30 and again.days_left == 0
    with pytest.raises(refusals.VacationRefused) as refused:
        set_vacation(referee, ann, NOON + DAY, NOON + 31 * DAY, NOON)
    assert refused.value.reason == (
        "this vacation takes 31 days, and the 365 days from 2026-03-03 to 2027-03-02 would "
        "hold 31 vacation days of yours: at most 30 fit in any 365 days in a row (each day "
        "any part of which is on vacation counts). So beginning at 2026-03-03 12:00 UTC it "
        "could last until 2026-04-02 00:00 UTC at the latest; without it, 30 of your 30 "
        "vacation days are left to take on any dates from today on"
    )
    # Dropped before it begins: every day comes back.
    assert end_vacation(referee, ann, NOON).days_left == 30
    assert standing(referee, ann, NOON).vacation is None


@pytest.mark.parametrize(
    ("starts", "ends", "days", "latest"),
    [
        (at(2026, 12, 20), at(2027, 1, 20), 31, at(2027, 1, 19)),
        (at(2026, 12, 10, 9), at(2027, 1, 24, 9), 46, at(2027, 1, 9)),
        (at(2026, 12, 2), at(2027, 1, 31), 60, at(2027, 1, 1)),
    ],
)
def test_a_stretch_over_new_year_takes_no_two_years_days(
    fresh_referee: Referee, starts: datetime, ends: datetime, days: int, latest: datetime
) -> None:
    """Each of these took at most 30 days of 2026 and 30 of 2027, and so fitted a calendar
    year's allowance (60 days away in a row): 365 days in a row hold more than 30."""
    bob = player("bob@new-year.test")
    december = at(2026, 12, 1)
    with pytest.raises(refusals.VacationRefused) as refused:
        set_vacation(fresh_referee, bob, starts, ends, december)
    assert f"takes {days} days" in refused.value.reason
    assert f"until {latest:%Y-%m-%d %H:%M} UTC at the latest" in refused.value.reason
    assert standing(fresh_referee, bob, december).vacation is None
    # The longest the refusal names is taken, New Year or not.
    taken = set_vacation(fresh_referee, bob, starts, latest, december)
    assert taken.vacation is not None and taken.vacation.days == 30
    assert taken.days_left == 0


def test_the_window_slides_day_by_day(fresh_referee: Referee) -> None:
    """30 days taken in January 2026 leave no day until they begin to leave the window; then
    each day that leaves it makes room for one."""
    cid = player("cid@slide.test")
    set_vacation(fresh_referee, cid, at(2026, 1, 1), at(2026, 1, 31), at(2025, 12, 1))
    # 31 December 2026: the 365 days that end then hold all of January's 30.
    eve = at(2026, 12, 31, 9)
    assert standing(fresh_referee, cid, at(2026, 12, 30)).days_left == 0
    with pytest.raises(refusals.VacationRefused, match="no vacation can begin on 2026-12-31"):
        set_vacation(fresh_referee, cid, eve, eve + HOUR, at(2026, 12, 30))
    # 1 January 2027: 2 to 30 January 2026 are 29 days of the window; the 30th fits.
    assert standing(fresh_referee, cid, at(2027, 1, 1)).days_left == 1
    # As each day of 2027 comes in, one of 2026 leaves: the same 30 days a year later fit.
    taken = set_vacation(fresh_referee, cid, at(2027, 1, 1), at(2027, 1, 31), at(2026, 12, 30))
    assert taken.vacation is not None and taken.vacation.days == 30
    assert taken.days_left == 0
    # Ended early, on its tenth day: the days after it come back, as the window slides on
    # past the days of January 2026 (20 of them are still in the 365 days ending today).
    ended = end_vacation(fresh_referee, cid, at(2027, 1, 10, 9))
    assert (ended.vacation, ended.days_left) == (None, 0)
    assert standing(fresh_referee, cid, at(2027, 1, 20)).days_left == 30 - 20
    assert standing(fresh_referee, cid, at(2027, 2, 1)).days_left == 30 - 10


def test_days_taken_in_the_365_days_before_shorten_a_vacation(fresh_referee: Referee) -> None:
    dee = player("dee@slide.test")
    set_vacation(fresh_referee, dee, at(2026, 1, 11), at(2026, 1, 31), at(2025, 12, 1))
    christmas = at(2026, 12, 25, 9)
    with pytest.raises(refusals.VacationRefused) as refused:
        set_vacation(fresh_referee, dee, christmas, christmas + 20 * DAY, at(2026, 12, 20))
    # 20 days of January 2026 and 17 to 21 of this one fall in the same 365 days; from
    # Christmas, 10 days fit (until the window ending 10 January 2027 holds 30).
    assert "from 2026-01-15 to 2027-01-14 would hold 37 vacation days" in refused.value.reason
    assert "until 2027-01-04 00:00 UTC at the latest" in refused.value.reason
    assert "without it, 10 of your 30 vacation days are left" in refused.value.reason
    taken = set_vacation(fresh_referee, dee, christmas, at(2027, 1, 4), at(2026, 12, 20))
    assert taken.vacation is not None and taken.vacation.days == 10
    assert taken.days_left == 0


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
    referee: Referee, now: datetime
) -> None:
    game = new_game(referee, "notice")
    mover = player(f"{('ann', 'bob')[game.to_act[0]]}-notice@players.test")
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
