"""A player's vacation: set one, end it early, read it with the days left; and what others see.

While a player is away, the clock of every turn it is to act in stands
still (`turn_clock.frozen_due`) and resumes with the time it had left. The
rules kept here:

- One vacation at a time. Setting one while another is planned replaces
  it; while one is under way only its end can change (earlier or later).
- It begins now or later (a few minutes in the past are taken as now, for
  clocks that differ), at most a year ahead, and ends after it begins.
- It may not begin less than 24 hours before one of the player's deadlines
  falls, as that deadline stands now (one that falls before it begins is
  no matter: that turn runs out first).
- At most `REFEREE_VACATION_DAYS` days of vacation in any 365 days in a
  row (`WINDOW`, not a calendar year: a stretch over New Year takes no
  two years' days at once). Each day (UTC) any part of which is on
  vacation counts, a day two vacations touch once. Ending a vacation early
  gives back the days it no longer covers; dropping a planned one gives
  back all of them. The days left (`Standing.days_left`) are the days that
  still fit on any dates from today on: the allowance less the most days
  taken or planned in any such window that ends today or later. More may
  fit on some dates (as days taken fall out of the window); a refusal says
  how long the refused vacation could last from its start.
- Others see a vacation only once it has begun (with when it ends); a
  planned one is its player's own business, and holds no clock before it
  begins.
"""

from __future__ import annotations

from bisect import bisect_left, bisect_right
from collections.abc import Sequence
from dataclasses import dataclass
from datetime import UTC, date, datetime, timedelta
from typing import TYPE_CHECKING

from referee.i18n import _
from referee.service import refusals
from referee.service.turn_clock import Timed, due_at, seats_away_at
from referee.store import bot_seats, player_seats, vacation_rows
from referee.store.clock import parse_stamp, stamp
from referee.store.tables import Game, GameStatus, Vacation

if TYPE_CHECKING:
    from sqlmodel import Session

    from referee.service import Referee
    from referee.service.players import Player

# A `from` this far in the past is taken as now (the clocks of client and server differ).
GRACE = timedelta(minutes=5)
# A vacation begins at least this long before any deadline of its player's.
NOTICE = timedelta(hours=24)
# How far ahead a vacation may begin, and how long it may last.
AHEAD = timedelta(days=366)
LONGEST = timedelta(days=366)
# The allowance holds in any this many days in a row.
WINDOW = 365


@dataclass(frozen=True, slots=True)
class Away:
    """A vacation not yet over: under way (`ongoing`) or planned."""

    starts_at: datetime
    ends_at: datetime
    ongoing: bool
    # The days of the allowance it takes (`days_of`).
    days: int


@dataclass(frozen=True, slots=True)
class Standing:
    """A player's vacation, if one is under way or planned, and its allowance: the days
    left are those that fit on any dates from today on, besides the days taken and planned."""

    vacation: Away | None
    allowance: int
    days_left: int


@dataclass(frozen=True, slots=True)
class GameClock:
    """A game's deadline as it stands, and the seats away now with when they are back."""

    due_at: datetime | None
    away_until: dict[int, datetime]


def days_of(starts_at: datetime, ends_at: datetime) -> set[date]:
    """The days (UTC) a span [starts_at, ends_at) takes of the allowance: every day any
    part of which it covers."""
    if ends_at <= starts_at:
        return set()
    first = starts_at.astimezone(UTC).date()
    last = (ends_at.astimezone(UTC) - timedelta(microseconds=1)).date()
    return {first + timedelta(days=n) for n in range((last - first).days + 1)}


@dataclass(frozen=True, slots=True)
class Fullest:
    """The window of `WINDOW` days that holds the most vacation days, and how many it
    holds; of several, the latest (so a vacation too long alone is named from its first
    day)."""

    first: date
    last: date
    days: int


def fullest(days: set[date], first_end: date, last_end: date) -> Fullest:
    """Of the windows of `WINDOW` days that end from `first_end` to `last_end`, the one
    that holds the most of `days`."""
    taken = sorted(day.toordinal() for day in days)
    best = Fullest(first_end - timedelta(days=WINDOW - 1), first_end, -1)
    for end in range(first_end.toordinal(), last_end.toordinal() + 1):
        held = bisect_right(taken, end) - bisect_left(taken, end - WINDOW + 1)
        if held >= best.days:
            last = date.fromordinal(end)
            best = Fullest(last - timedelta(days=WINDOW - 1), last, held)
    return best


def _fullest_with(used: set[date], wanted: set[date]) -> Fullest:
    """The fullest window that holds a day of `wanted`, `used` counted with it."""
    return fullest(used | wanted, min(wanted), max(wanted) + timedelta(days=WINDOW - 1))


def _used(rows: list[Vacation]) -> set[date]:
    """The days vacations took: a day two of them touch counts once."""
    used: set[date] = set()
    for row in rows:
        used |= days_of(parse_stamp(row.starts_at), parse_stamp(row.ends_at))
    return used


def _days_left(allowance: int, used: set[date], moment: datetime) -> int:
    """The days that fit on any dates from `moment`'s day on: a day from then on lies only
    in windows that end then or later."""
    today = moment.astimezone(UTC).date()
    last = max(used, default=today)
    return max(0, allowance - fullest(used, today, max(today, last)).days)


def _not_over(rows: list[Vacation], moment: datetime) -> Vacation | None:
    """The vacation under way or planned, if any (there is at most one)."""
    return next((row for row in rows if parse_stamp(row.ends_at) > moment), None)


def _standing(referee: Referee, rows: list[Vacation], moment: datetime) -> Standing:
    allowance = referee.settings.vacation_days
    current = _not_over(rows, moment)
    away = None
    if current is not None:
        starts, ends = parse_stamp(current.starts_at), parse_stamp(current.ends_at)
        away = Away(starts, ends, starts <= moment, len(days_of(starts, ends)))
    return Standing(away, allowance, _days_left(allowance, _used(rows), moment))


def standing(referee: Referee, player: Player, moment: datetime | None = None) -> Standing:
    """The player's vacation under way or planned, and the vacation days left."""
    moment = moment or datetime.now(UTC)
    with referee.db.reading() as session:
        rows = vacation_rows.of_address(session, player.address)
    return _standing(referee, rows, moment)


def set_vacation(
    referee: Referee,
    player: Player,
    starts_at: datetime | None,
    ends_at: datetime,
    moment: datetime | None = None,
) -> Standing:
    """Plan a vacation from `starts_at` (None: now) until `ends_at`, replacing a planned
    one; or, while one is under way, move its end to `ends_at`."""
    moment = moment or datetime.now(UTC)
    with referee.db.transaction() as session:
        vacation_rows.lock_address(session, player.address)
        rows = vacation_rows.of_address(session, player.address)
        current = _not_over(rows, moment)
        ongoing = current is not None and parse_stamp(current.starts_at) <= moment
        if current is not None and ongoing:
            begins = _ongoing_start(current, starts_at)
        else:
            begins = _planned_start(starts_at, moment)
            _check_notice(session, player.address, begins, moment)
        _check_end(begins, ends_at, moment)
        others = [row for row in rows if row is not current]
        _check_allowance(referee, others, begins, ends_at, moment)
        if current is not None and ongoing:
            vacation_rows.end(session, current, stamp(ends_at))
        else:
            if current is not None:
                vacation_rows.drop(session, current)
            vacation_rows.add(session, player.address, stamp(begins), stamp(ends_at), stamp(moment))
        session.flush()
        rows = vacation_rows.of_address(session, player.address)
    return _standing(referee, rows, moment)


def end_vacation(referee: Referee, player: Player, moment: datetime | None = None) -> Standing:
    """End the vacation under way now, or drop the planned one (none: nothing changes)."""
    moment = moment or datetime.now(UTC)
    with referee.db.transaction() as session:
        vacation_rows.lock_address(session, player.address)
        current = _not_over(vacation_rows.of_address(session, player.address), moment)
        if current is not None and parse_stamp(current.starts_at) <= moment:
            vacation_rows.end(session, current, stamp(moment))
        elif current is not None:
            vacation_rows.drop(session, current)
        session.flush()
        rows = vacation_rows.of_address(session, player.address)
    return _standing(referee, rows, moment)


def _ongoing_start(current: Vacation, starts_at: datetime | None) -> datetime:
    begun = parse_stamp(current.starts_at)
    if starts_at is not None and starts_at != begun:
        raise refusals.VacationRefused(
            _(
                "your vacation began at {begun}: while it is under way only its end "
                "can change (end it first to plan another)"
            ).format(begun=_shown(begun))
        )
    return begun


def _planned_start(starts_at: datetime | None, moment: datetime) -> datetime:
    if starts_at is None:
        return moment
    if starts_at < moment - GRACE:
        raise _bad("from", _("a vacation cannot begin in the past"))
    if starts_at > moment + AHEAD:
        raise _bad("from", _("a vacation begins at most a year ahead"))
    return max(starts_at, moment)


def _check_end(begins: datetime, ends_at: datetime, moment: datetime) -> None:
    if ends_at <= max(begins, moment):
        raise _bad("until", _("a vacation ends after it begins, and after now"))
    # No allowance covers more (and its days are not counted one by one for nothing).
    if ends_at - begins > LONGEST:
        raise _bad("until", _("a vacation lasts at most a year"))


def _check_notice(session: Session, address: str, begins: datetime, moment: datetime) -> None:
    """Refuse a start less than `NOTICE` before a deadline of the player's, as it stands."""
    mine = [
        game
        for game, seat in player_seats.seats_of(session, address)
        if game.status == GameStatus.ACTIVE
        and game.deadline_seconds is not None
        and seat.seat in game.to_act
    ]
    due = due_times(session, mine, moment)
    for game in mine:
        falls = due[game.id]
        if falls is not None and falls - NOTICE < begins <= falls:
            raise refusals.VacationRefused(
                _(
                    "your turn in game {game} runs out at {falls}: a vacation begins "
                    "at least 24 hours before a deadline of yours (by {by}), or after it"
                ).format(game=game.id, falls=_shown(falls), by=_shown(falls - NOTICE))
            )


def _check_allowance(
    referee: Referee, others: list[Vacation], begins: datetime, ends_at: datetime, moment: datetime
) -> None:
    """Refuse a vacation that would put more than the allowance in some window of `WINDOW`
    days, saying which window, how long it could last from its start, and the days left."""
    allowance = referee.settings.vacation_days
    used = _used(others)
    wanted = days_of(begins, ends_at)
    over = _fullest_with(used, wanted)
    if over.days <= allowance:
        return
    first = min(wanted)
    fits = _longest_fit(allowance, used, first, len(wanted) - 1)
    back = first + timedelta(days=fits)
    latest = datetime(back.year, back.month, back.day, tzinfo=UTC)
    could = (
        _("beginning at {begins} it could last until {latest} at the latest").format(
            begins=_shown(begins), latest=_shown(latest)
        )
        if fits
        else _("no vacation can begin on {first}").format(first=first)
    )
    raise refusals.VacationRefused(
        _(
            "this vacation takes {days} days, and the {window} days from {first} to "
            "{last} would hold {held} vacation days of yours: at most {allowance} fit "
            "in any {window} days in a row (each day any part of which is on vacation counts). "
            "So {could}; without it, {left} of your {allowance} "
            "vacation days are left to take on any dates from today on"
        ).format(
            days=len(wanted),
            window=WINDOW,
            first=over.first,
            last=over.last,
            held=over.days,
            allowance=allowance,
            could=could,
            left=_days_left(allowance, used, moment),
        )
    )


def _longest_fit(allowance: int, used: set[date], first: date, most: int) -> int:
    """The most days, up to `most`, that a vacation from `first` may take besides `used`
    (a shorter one takes a subset of a longer one's days: the answer is searched by halves)."""
    fits, shorter, longer = 0, 1, most
    while shorter <= longer:
        days = (shorter + longer) // 2
        span = {first + timedelta(days=n) for n in range(days)}
        if _fullest_with(used, span).days <= allowance:
            fits, shorter = days, days + 1
        else:
            longer = days - 1
    return fits


def game_clock(session: Session, game: Game, moment: datetime | None = None) -> GameClock:
    """The game's deadline as it stands at `moment` (now), with the vacations that hold it,
    and its seats on vacation then, each with when it is back."""
    moment = moment or datetime.now(UTC)
    away = vacation_rows.seats_away(session, [game], moment).get(game.id, {})
    running = game.status == GameStatus.ACTIVE
    # Deadlines stand for people: a turn only bots play has none.
    robots = bot_seats.levels(session, [game.id]).get(game.id, {})
    due = None if game.to_act and set(game.to_act) <= set(robots) else due_at(game, away)
    return GameClock(due, seats_away_at(away, moment) if running else {})


def due_times(
    session: Session, games: Sequence[Timed], moment: datetime | None = None
) -> dict[str, datetime | None]:
    """The deadline of each game as it stands at `moment` (now), vacations counted."""
    moment = moment or datetime.now(UTC)
    away = vacation_rows.seats_away(session, games, moment)
    return {game.id: due_at(game, away.get(game.id, {})) for game in games}


def held_due_times(
    session: Session, address: str, games: Sequence[Timed], moment: datetime | None = None
) -> dict[str, datetime | None]:
    """`due_times` of games that `address` holds a seat in, the vacations
    looked up by the address: a player's list passes hundreds of games."""
    moment = moment or datetime.now(UTC)
    away = vacation_rows.seats_away_held(session, address, moment)
    return {game.id: due_at(game, away.get(game.id, {})) for game in games}


def _bad(field: str, reason: str) -> refusals.BadRequest:
    return refusals.BadRequest(reason, errors={field: [reason]})


def _shown(moment: datetime) -> str:
    return moment.astimezone(UTC).strftime("%Y-%m-%d %H:%M UTC")
