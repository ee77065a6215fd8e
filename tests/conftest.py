"""The tiers of the suite, marked here so that no test file needs to say it.

`service`: every test that runs real servers or processes — all of
tests/mail, tests/faults and tests/load, and any test using a fixture that
starts PostgreSQL, Redis, `referee serve`, workers, an SMTP server or
Chromium (tests/servers.py starts PostgreSQL and Redis from wheels).
`lint`: ruff, ruff format, mypy --strict and a complexity ceiling over the whole tree
(tests/test_lint.py; mypy alone takes half a minute with a cold cache).
`fast`: the rest — rules, records, pictures, the CLI, the API in-process on
SQLite through Flask's test client, layering, deploy files — which runs
anywhere in about a minute. A test marked by hand keeps its mark.

    uv run --locked pytest -m fast       # the fast tier
    uv run --locked pytest -m lint       # style and types
    uv run --locked pytest -m service    # the service tier
    uv run --locked pytest               # all of them (what CI runs)
"""

from __future__ import annotations

from pathlib import Path

import pytest

from tests import servers

TESTS = Path(__file__).resolve().parent
TIERS = ("fast", "lint", "service")
SERVICE_DIRS = {"mail", "faults", "load"}
# Fixtures that start real servers or processes (tests/service/conftest.py and its users).
SERVICE_FIXTURES = {
    "pg_database",
    "pg_service",
    "embedded_service",
    "mail_service",
    "web_service",
    "browser",
    "service",
    "stack",
}


def tier(item: pytest.Item) -> str:
    path = Path(str(item.path)).resolve()
    parts = path.relative_to(TESTS).parts if path.is_relative_to(TESTS) else ()
    if parts and parts[0] in SERVICE_DIRS:
        return "service"
    if parts == ("test_lint.py",):
        return "lint"
    fixtures = set(getattr(item, "fixturenames", ()))
    if parts and parts[0] == "service" and fixtures & SERVICE_FIXTURES:
        return "service"
    return "fast"


@pytest.hookimpl(tryfirst=True)
def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    for item in items:
        if not any(item.get_closest_marker(name) for name in TIERS):
            item.add_marker(tier(item))


def pytest_sessionfinish() -> None:
    servers.stop_all()
