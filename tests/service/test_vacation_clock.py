"""A turn's clock stands still while a seat to act is away (`turn_clock.frozen_due`): its
properties, drawn by hypothesis, and how a game's seats to act hold it."""

from __future__ import annotations

import itertools
from datetime import UTC, datetime, timedelta

from hypothesis import given
from hypothesis import strategies as st

from referee.service.turn_clock import due_at, frozen_due, held, reminder_due
from referee.store.tables import Game, GameStatus
from referee.store.vacation_rows import Span

START = datetime(2026, 3, 1, 12, 0, tzinfo=UTC)
HOUR = timedelta(hours=1)

seconds = st.integers(min_value=60, max_value=30 * 86400)


@st.composite
def spans(draw: st.DrawFn) -> Span:
    """A span of time away somewhere from ten days before the start to sixty after."""
    begins = START + timedelta(seconds=draw(st.integers(-10 * 86400, 60 * 86400)))
    return begins, begins + timedelta(seconds=draw(st.integers(1, 20 * 86400)))


def running(start: datetime, until: datetime, away: list[Span]) -> timedelta:
    """How long the clock ran between `start` and `until`: the time no span covers."""
    edges = sorted({start, until, *(t for span in away for t in span if start < t < until)})
    return sum(
        (
            right - left
            for left, right in itertools.pairwise(edges)
            if not any(b <= left and right <= e for b, e in away)
        ),
        timedelta(),
    )


@given(seconds)
def test_without_vacations_the_deadline_is_as_before(length: int) -> None:
    assert frozen_due(START, length, []) == START + timedelta(seconds=length)


@given(seconds, st.lists(spans(), max_size=5))
def test_a_vacation_never_brings_a_deadline_forward_and_the_clock_runs_its_whole_time(
    length: int, away: list[Span]
) -> None:
    due = frozen_due(START, length, away)
    assert due >= START + timedelta(seconds=length)
    # The clock ran exactly the turn's time, and the deadline falls in no span.
    assert running(START, due, away) == timedelta(seconds=length)
    assert not any(begins <= due < ends for begins, ends in away)
    # The order the spans come in changes nothing.
    assert frozen_due(START, length, list(reversed(away))) == due


@given(seconds, st.integers(0, 30 * 86400), st.integers(1, 20 * 86400))
def test_the_time_left_on_return_is_the_time_left_at_departure(
    length: int, after: int, away_for: int
) -> None:
    leaves = START + timedelta(seconds=after)
    back = leaves + timedelta(seconds=away_for)
    due = frozen_due(START, length, [(leaves, back)])
    without = START + timedelta(seconds=length)
    if without < leaves:
        assert due == without  # the turn ran out before the vacation began
    else:
        assert due - back == without - leaves


def test_a_vacation_under_way_when_the_turn_begins_holds_it_until_its_end() -> None:
    away = [(START - 2 * HOUR, START + 5 * HOUR)]
    assert frozen_due(START, 3600, away) == START + 6 * HOUR
    # One that ended before the turn began changes nothing.
    assert frozen_due(START, 3600, [(START - 5 * HOUR, START)]) == START + HOUR


def _game(to_act: list[int], hours: int = 10) -> Game:
    return Game(
        id="g",
        name="maniki",
        rules_version="2",
        seed="s",
        seed_commitment="c",
        options={},
        status=GameStatus.ACTIVE,
        to_act=to_act,
        version=3,
        head_hash="c",
        created_at=START.isoformat(),
        updated_at=START.isoformat(),
        deadline_seconds=hours * 3600,
    )


def test_any_seat_to_act_away_holds_the_games_clock_and_others_do_not() -> None:
    bob_away = {1: [(START + HOUR, START + 4 * HOUR)]}
    # Bob acts (alone or beside Ann in a simultaneous round): the clock stands still.
    for to_act in ([1], [0, 1]):
        game = _game(to_act)
        assert due_at(game, bob_away) == START + 13 * HOUR
        assert reminder_due(game, bob_away) == START + 11 * HOUR
        assert held(game, bob_away, START + 2 * HOUR)
        assert not held(game, bob_away, START + 4 * HOUR)
    # Bob does not act: his vacation changes nothing.
    game = _game([0, 2])
    assert due_at(game, bob_away) == due_at(game) == START + 10 * HOUR
    assert reminder_due(game, bob_away) == START + 8 * HOUR
    assert not held(game, bob_away, START + 2 * HOUR)
