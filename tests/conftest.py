"""The suite's plugins: its calendar (tests/clock.py: `REFEREE_TEST_TODAY`, `now`), tiers
(tests/tiers.py) and the shared fixtures (tests/fixtures.py).

No other conftest.py: a test module asks for fixtures by name and imports
helpers from modules named for what they hold (tests/stacks.py,
tests/mailboxes.py, tests/servers.py), never from a conftest.
"""

from __future__ import annotations

from tests import servers

# pytester: tests/test_tiers.py runs small suites of its own.
pytest_plugins = ["tests.clock", "tests.tiers", "tests.fixtures", "pytester"]


def pytest_sessionfinish() -> None:
    servers.stop_all()
