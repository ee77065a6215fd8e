"""Digest hours are hours of the player's own day, in its time zone, through the changes
of daylight-saving time, in process on SQLite (tests/live/test_digest_zones_pg.py runs
them on PostgreSQL).

The sweep runs every ten minutes across each of the four changes of Europe/Paris and
America/New_York, for a player there who chose 1, 2, 7 and 19 (2 is skipped when the
clocks go forward, 2 in Paris and 1 in New York are lived twice when they go back) and
a player who chose no zone: each gets exactly one digest per chosen hour and local day.
"""

from __future__ import annotations

from collections import defaultdict
from datetime import UTC, date, datetime, timedelta
from zoneinfo import ZoneInfo

import pytest
import sqlalchemy as sa
from sqlmodel import col, select

from referee.service import Referee
from referee.service.creating import NewGame, create_game
from referee.service.creating import Player as Seated
from referee.service.digests import sweep_digests
from referee.service.players import MANAGE, PLAY, READ, Player
from referee.service.profiles import set_profile
from referee.service.turn_mail import change_settings
from referee.store.clock import parse_stamp
from referee.store.tables import Address, Outbox, OutboxKind

ZONED, PLAIN = "zoned@players.test", "plain@players.test"
ZONED_HOURS, PLAIN_HOURS = [1, 2, 7, 19], [2, 7, 19]
# A year well after the suite's today (tests/clock.py), whatever day it runs on.
YEAR = datetime.now(UTC).year + 5
SWEEP_EVERY = timedelta(minutes=10)
# Each change: the zone, its month, and whether the clocks go forward.
CHANGES = {
    "paris-spring": ("Europe/Paris", 3, True),
    "paris-autumn": ("Europe/Paris", 10, False),
    "new-york-spring": ("America/New_York", 3, True),
    "new-york-autumn": ("America/New_York", 11, False),
}


def _player(address: str) -> Player:
    return Player(address, frozenset({READ, PLAY, MANAGE}))


def _my_turn(referee: Referee, address: str) -> None:
    """A game where it is `address`'s turn for good (no deadline, nobody moves)."""
    players = [Seated("Me", address), Seated("Bob", "bob@players.test")]
    create_game(referee, NewGame("subdivision", players, {}, trusted=True))


def _to_digest(referee: Referee, address: str, hours: list[int] | None) -> None:
    chosen: dict[str, object] = {"turn_mail": "digest"}
    if hours is not None:
        chosen["digest_hours"] = hours
    change_settings(referee, _player(address), chosen)


def _change_day(zone: ZoneInfo, month: int) -> date:
    """The day of `month` whose clocks change in `zone` (found in the zone's own data)."""
    day = date(YEAR, month, 1)
    while day.month == month:
        noon = datetime(day.year, day.month, day.day, 12, tzinfo=zone)
        if noon.utcoffset() != (noon - timedelta(days=1)).utcoffset():
            return day
        day += timedelta(days=1)
    raise AssertionError(f"no change of clocks in {zone} in month {month}")


def _sweep(referee: Referee, start: datetime, end: datetime) -> None:
    moment = start
    while moment < end:
        sweep_digests(referee, moment)
        moment += SWEEP_EVERY


def _digests(referee: Referee, address: str) -> list[Outbox]:
    """The digests written for `address` (its seat 0 of its own game carries them)."""
    with referee.db.reading() as session:
        rows = session.exec(
            select(Outbox).where(Outbox.kind == OutboxKind.DIGEST).order_by(col(Outbox.id))
        )
        return [row for row in rows if _address_of(referee, row) == address]


def _address_of(referee: Referee, row: Outbox) -> str:
    with referee.db.reading() as session:
        found = session.connection().execute(
            sa.text("SELECT email FROM seat WHERE game_id = :game AND seat = :seat"),
            {"game": row.game_id, "seat": row.seat},
        )
        return str(found.scalar_one())


def _local_days(rows: list[Outbox], zone: ZoneInfo) -> dict[date, list[int]]:
    """The local hours of the digests, by local day; each written in the hour it is of."""
    days: dict[date, list[int]] = defaultdict(list)
    for row in rows:
        hour, written = parse_stamp(row.payload["hour"]), parse_stamp(row.created_at)
        assert timedelta(0) <= written - hour < timedelta(hours=1)
        local = hour.astimezone(zone)
        days[local.date()].append(local.hour)
    return days


@pytest.mark.parametrize("change", CHANGES)
def test_one_digest_per_chosen_hour_and_local_day_across_a_change_of_clocks(
    fresh_referee: Referee, change: str
) -> None:
    name, month, forward = CHANGES[change]
    zone = ZoneInfo(name)
    day = _change_day(zone, month)
    # The clocks change on a Sunday, by an hour, forward in spring and back in autumn.
    assert day.weekday() == 6
    start = datetime(day.year, day.month, day.day, tzinfo=zone) - timedelta(days=1)
    end = start + timedelta(days=3)
    lived = end.astimezone(UTC) - start.astimezone(UTC) - timedelta(days=2)
    assert lived == timedelta(hours=23 if forward else 25)

    for address, hours in ((ZONED, ZONED_HOURS), (PLAIN, PLAIN_HOURS)):
        _my_turn(fresh_referee, address)
        _to_digest(fresh_referee, address, hours)
    set_profile(fresh_referee, _player(ZONED), time_zone=name)
    # From an hour before the first local day to an hour after the last.
    _sweep(fresh_referee, start.astimezone(UTC) - timedelta(hours=1), end + timedelta(hours=1))

    zoned = _local_days(_digests(fresh_referee, ZONED), zone)
    days = [start.date() + timedelta(days=n) for n in range(3)]
    for each in days:
        # The hour the clocks skip goes out in the first that follows it: 3 o'clock.
        expected = [3 if forward and each == day and h == 2 else h for h in ZONED_HOURS]
        assert sorted(zoned.pop(each)) == expected, each
    assert not zoned

    # The player in UTC keeps its hours, whatever the clocks of Paris or New York do.
    plain = _local_days(_digests(fresh_referee, PLAIN), ZoneInfo("UTC"))
    utc_days = sorted(plain)
    assert len(utc_days) >= 3
    for each in utc_days[1:-1]:
        assert sorted(plain[each]) == PLAIN_HOURS, each


def test_a_zone_that_names_none_is_utc_and_half_hours_stamp_their_own_start(
    fresh_referee: Referee,
) -> None:
    kolkata, mars, paris = "kolkata@players.test", "mars@players.test", "paris@players.test"
    for address in (kolkata, mars, paris, PLAIN):
        _my_turn(fresh_referee, address)
        _to_digest(fresh_referee, address, None)
    set_profile(fresh_referee, _player(kolkata), time_zone="Asia/Kolkata")
    set_profile(fresh_referee, _player(paris), time_zone="Europe/Paris")
    # Refused through the API; should one be stored all the same, it reads as UTC.
    with fresh_referee.db.transaction() as session:
        session.execute(
            sa.update(Address).where(col(Address.address) == mars).values(time_zone="Mars/Base")
        )

    def swept(hour: int, minute: int) -> set[str]:
        before = {row.id for row in _all_digests(fresh_referee)}
        sweep_digests(fresh_referee, datetime(YEAR, 1, 15, hour, minute, tzinfo=UTC))
        fresh = [row for row in _all_digests(fresh_referee) if row.id not in before]
        return {_address_of(fresh_referee, row) for row in fresh}

    # 7 in Paris (UTC+1 in January), 7:00 in Kolkata is 01:30 UTC: each its own default hour.
    assert swept(1, 25) == set()
    assert swept(1, 35) == {kolkata}
    assert swept(6, 5) == {paris}
    assert swept(7, 5) == {mars, PLAIN}
    assert swept(7, 55) == set()
    (kolkata_row,) = _digests(fresh_referee, kolkata)
    assert parse_stamp(kolkata_row.payload["hour"]) == datetime(YEAR, 1, 15, 1, 30, tzinfo=UTC)


def _all_digests(referee: Referee) -> list[Outbox]:
    with referee.db.reading() as session:
        return list(session.exec(select(Outbox).where(Outbox.kind == OutboxKind.DIGEST)))
