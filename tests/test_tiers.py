"""A test's tier follows from what it uses, and a fast test that starts a server fails.

Small suites of their own run in this process (pytester) with the suite's
tiers plugin: what lands in which tier, and what happens to a fast test
that starts a process or binds a port, caught or not.
"""

from __future__ import annotations

import socket
import subprocess

import pytest

from tests import tiers

SUITE = """
import socket
import subprocess

import pytest

from tests.tiers import starts_servers


@pytest.fixture(scope="module")
@starts_servers
def server():
    yield "a server"


@pytest.fixture
def through(server):
    return server


def test_computes():
    assert sum(range(4)) == 6


def test_uses_a_server(server):
    assert server


def test_uses_a_server_through_another_fixture(through):
    assert through


@pytest.mark.service
def test_marked_by_hand():
    subprocess.run(["true"], check=True)


def test_starts_a_process_unmarked():
    subprocess.run(["true"], check=True)


def test_starts_a_server_and_swallows_the_refusal():
    try:
        socket.create_server(("127.0.0.1", 0)).close()
    except Exception:
        pass
"""


def run(pytester: pytest.Pytester, *args: str) -> pytest.RunResult:
    pytester.makepyfile(test_suite=SUITE)
    return pytester.runpytest_inprocess("-p", "tests.tiers", "-p", "no:cacheprovider", *args)


def test_users_of_a_server_fixture_are_service_the_rest_fast(pytester: pytest.Pytester) -> None:
    service = run(pytester, "-m", "service", "--collect-only", "-q")
    assert sorted(line for line in service.outlines if "::" in line) == [
        "test_suite.py::test_marked_by_hand",
        "test_suite.py::test_uses_a_server",
        "test_suite.py::test_uses_a_server_through_another_fixture",
    ]
    fast = run(pytester, "-m", "fast", "--collect-only", "-q")
    assert sorted(line for line in fast.outlines if "::" in line) == [
        "test_suite.py::test_computes",
        "test_suite.py::test_starts_a_process_unmarked",
        "test_suite.py::test_starts_a_server_and_swallows_the_refusal",
    ]


def test_a_fast_test_that_starts_a_process_or_a_server_fails(pytester: pytest.Pytester) -> None:
    result = run(pytester, "-m", "fast", "-rf")
    result.assert_outcomes(passed=1, failed=2, deselected=3)
    result.stdout.fnmatch_lines(
        [
            "E *StartedInFastTier: a fast test may start no process or server: subprocess.Popen*",
            "test_suite.py::test_starts_a_server_and_swallows_the_refusal is in the fast tier "
            "but started*socket.bind*",
            "FAILED test_suite.py::test_starts_a_process_unmarked *",
            "FAILED test_suite.py::test_starts_a_server_and_swallows_the_refusal *",
        ]
    )


def test_service_tests_may_start_what_they_need(pytester: pytest.Pytester) -> None:
    run(pytester, "-m", "service").assert_outcomes(passed=3, deselected=3)


def test_a_watched_block_refuses_processes_and_ports_and_names_them() -> None:
    with tiers.watching("probe") as tried:
        with pytest.raises(tiers.StartedInFastTier):
            subprocess.run(["true"], check=True)
        with pytest.raises(tiers.StartedInFastTier):
            socket.create_server(("127.0.0.1", 0))
        assert [what.split()[0] for what in tried] == ["subprocess.Popen", "socket.bind"]
