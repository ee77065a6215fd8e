"""The suite's calendar: `REFEREE_TEST_TODAY` runs the whole suite on another day (a plugin
of tests/conftest.py), and the fixture `now` gives a test one instant to reckon from.

Rules about time (a vacation allowance over 365 days, deadlines, digests at
an hour) can pass on the day they are written and fail on another: on a day
in December, at New Year, on 29 February. So the suite can be run on any
day:

    REFEREE_TEST_TODAY=2027-12-06 uv run --locked pytest -m fast
    REFEREE_TEST_TODAY=2027-12-31T23:59 uv run --locked pytest -m fast

At session start, in the main process and in every xdist worker, the wall
clock (`time.time`, `datetime.now`, `date.today`) moves there with
time-machine and goes on from there (`tick=True`). A date alone keeps the
time of day: the clock moves by whole days, so an hour a test reckons from
is the servers' hour too. A date and time (UTC unless it says otherwise)
moves to that instant. Sleeps and the monotonic clocks (`time.monotonic`,
`time.perf_counter`, which time-machine leaves alone) stay real, so
timeouts and waits measure what they say.

Processes a test starts (`referee serve`, workers, SMTP, PostgreSQL) keep
the real clock: a test that tells a server a time, or reads one it wrote,
reckons from `server_now`, the real clock, not from `now`; and what the
test writes in-process for a server to read (a session opened with
`open_session` on the server's database) is written `on_server_clock()`,
so that it expires when the server thinks it does.
"""

from __future__ import annotations

import os
from collections.abc import Iterator
from contextlib import contextmanager
from datetime import UTC, date, datetime, timedelta

import pytest
import time_machine

VARIABLE = "REFEREE_TEST_TODAY"

_travel: time_machine.travel | None = None


def destination(text: str, real: datetime) -> datetime:
    """Where `text` (a date, or a date and time) moves the clock, the real time being `real`."""
    if "T" not in text and " " not in text.strip():
        day = date.fromisoformat(text.strip())
        return real + timedelta(days=(day - real.astimezone(UTC).date()).days)
    found = datetime.fromisoformat(text.strip())
    return found.replace(tzinfo=UTC) if found.tzinfo is None else found


def pytest_configure(config: pytest.Config) -> None:
    global _travel
    text = os.environ.get(VARIABLE, "").strip()
    if not text:
        return
    try:
        moved = destination(text, datetime.now(UTC))
    except ValueError:
        raise pytest.UsageError(
            f"{VARIABLE}={text!r}: give a date (2027-12-06) or a date and time "
            "(2027-12-31T23:59, UTC unless it names an offset)"
        ) from None
    # A timestamp, not a datetime: an aware one would set TZ in os.environ, which the
    # processes the tests start would inherit.
    _travel = time_machine.travel(moved.timestamp(), tick=True)
    _travel.start()


def pytest_unconfigure(config: pytest.Config) -> None:
    global _travel
    if _travel is not None:
        _travel.stop()
        _travel = None


def pytest_report_header(config: pytest.Config) -> str | None:
    if _travel is None:
        return None
    return f"{VARIABLE}: the clock reads {datetime.now(UTC):%Y-%m-%d %H:%M} UTC"


@pytest.fixture
def now() -> datetime:
    """The instant the test reckons from: this process's clock (moved by `REFEREE_TEST_TODAY`)
    at the test's start, in UTC."""
    return datetime.now(UTC)


@pytest.fixture
def server_now() -> datetime:
    """The real instant at the test's start, as the servers a test starts read it."""
    return real_now()


def _real_time() -> float:
    if not time_machine.escape_hatch.is_travelling():
        return datetime.now(UTC).timestamp()
    return time_machine.escape_hatch.time.time()


def real_now() -> datetime:
    """The real instant, as the processes a test starts read it (they keep the real clock)."""
    return datetime.fromtimestamp(_real_time(), UTC)


@contextmanager
def on_server_clock() -> Iterator[None]:
    """Within it, this process reads the real clock, as the servers a test starts do; the
    moved clock goes on afterwards as if it had never stopped."""
    with time_machine.travel(_real_time(), tick=True):
        yield
