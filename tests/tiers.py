"""The tiers of the suite: a test's tier follows from what it uses, wherever it lives.

`service`: the test uses a fixture that starts a server or a process
(PostgreSQL, Redis, `referee serve`, workers, SMTP, webhook servers,
Chromium...), directly or through the fixtures it asks for; such a
fixture says so with `@starts_servers` under its `@pytest.fixture`. A
test that starts one in its own body is marked `@pytest.mark.service`.
`lint`: ruff, ruff format and mypy --strict over the tree (tests/test_lint.py).
`fast`: the rest, which runs in the test's own process alone — rules,
records, pictures, the CLI, the API in-process on SQLite — anywhere, in
about a minute.

The fast tier is held to it: while a fast test runs (its fixtures too),
starting a process or binding a socket fails it, naming what it started.

    uv run --locked pytest -m fast       # the fast tier
    uv run --locked pytest -m lint       # style and types
    uv run --locked pytest -m service    # the service tier
    uv run --locked pytest               # all of them (what CI runs)
"""

from __future__ import annotations

import sys
import threading
from collections.abc import Callable, Generator, Iterator
from contextlib import contextmanager
from typing import Any, TypeVar

import pytest

TIERS = ("fast", "lint", "service")
STARTS_SERVERS = "starts_servers"
# Audit events (docs.python.org/3/library/audit_events.html) of a process or server started.
STARTING = {"subprocess.Popen", "os.posix_spawn", "os.fork", "os.forkpty", "os.system"}
BINDING = "socket.bind"

Function = TypeVar("Function", bound=Callable[..., Any])


def starts_servers(function: Function) -> Function:
    """Declare a fixture that starts servers or processes: its users are in the service tier.

    Put it under `@pytest.fixture`, so that it marks the function pytest keeps.
    """
    setattr(function, STARTS_SERVERS, True)
    return function


def tier(item: pytest.Item) -> str:
    """The tier `item` belongs in, from its own mark or from the fixtures it uses."""
    for name in TIERS:
        if item.get_closest_marker(name):
            return name
    if isinstance(item, pytest.Function):
        for definitions in item._fixtureinfo.name2fixturedefs.values():
            if any(getattr(each.func, STARTS_SERVERS, False) for each in definitions):
                return "service"
    return "fast"


@pytest.hookimpl(tryfirst=True)
def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    for item in items:
        found = tier(item)
        if not item.get_closest_marker(found):
            item.add_marker(found)
    _longest_files_first(items)


# The fixtures whose stack a process keeps for its next file asking for the same
# (tests/shared_stacks.py), in the order their files go within a rank.
SHARED_STACKS = ("pg_service", "mail_service")


def _longest_files_first(items: list[pytest.Item]) -> None:
    """Order the files so that the suite's processes run out of work together.

    With `--dist=loadfile` each process takes the next whole file when it is
    done: a file of minutes taken last keeps one process busy while the other
    idles. So the files marked `long` go first, then the rest of the service
    and lint tiers, and the fast tier's many short files fill in at the end.
    Among the rest, the files on a shared stack come first, those of each
    stack together: a process taking them one after the other keeps its stack
    instead of starting another (a start takes 20 to 40 s). The long files keep
    their order, so that the longest of them still start first.
    Files keep their tests' order (a module's fixtures are set up once).
    """
    rank: dict[str, int] = {}
    stack: dict[str, int] = {}
    for item in items:
        own = 0 if item.get_closest_marker("long") else 2 if item.get_closest_marker("fast") else 1
        path = item.nodeid.split("::", 1)[0]
        rank[path] = min(rank.get(path, own), own)
        stack[path] = min(stack.get(path, len(SHARED_STACKS) + 1), _shared_stack(item))

    def order(item: pytest.Item) -> tuple[int, int]:
        path = item.nodeid.split("::", 1)[0]
        return rank[path], stack[path] if rank[path] == 1 else 0

    items.sort(key=order)


def _shared_stack(item: pytest.Item) -> int:
    """Which of `SHARED_STACKS` the test takes (one past them: another shared stack,
    with settings of its own; two past: none)."""
    names = getattr(item, "fixturenames", ())
    if "shared_stacks" not in names:
        return len(SHARED_STACKS) + 1
    return next((n for n, name in enumerate(SHARED_STACKS) if name in names), len(SHARED_STACKS))


class StartedInFastTier(RuntimeError):
    """A fast test started a process or a server."""


# What runs now, innermost last (a test may run a pytest of its own): a watched name,
# or None for a test of another tier; and what each watched one started.
_WATCHED: list[str | None] = []
_STARTED: dict[str, list[str]] = {}
_LOCK = threading.Lock()


def _audit(event: str, args: tuple[Any, ...]) -> None:
    # Called for every audited event of the process (each open, each import): first
    # the cheap test of whether it is one of ours.
    if event not in STARTING and not (event == BINDING and _binds_a_port(args)):
        return
    with _LOCK:
        name = _WATCHED[-1] if _WATCHED else None
        if name is None:
            return
        what = f"{event} {args[1] if event == BINDING else args[:2]!r}"
        _STARTED.setdefault(name, []).append(what)
    raise StartedInFastTier(f"a fast test may start no process or server: {what}")


def _binds_a_port(args: tuple[Any, ...]) -> bool:
    # An address of (host, port): TCP or UDP. A Unix socket's is a path.
    return isinstance(args[1], tuple)


@contextmanager
def watching(name: str | None) -> Iterator[list[str]]:
    """Refuse any process or bound socket while the block runs (None: allow them);
    yields what was tried."""
    with _LOCK:
        _WATCHED.append(name)
        tried = _STARTED.setdefault(name, []) if name is not None else []
    try:
        yield tried
    finally:
        with _LOCK:
            _WATCHED.pop()
            if name is not None:
                _STARTED.pop(name, None)


def _watched(item: pytest.Item) -> Generator[None, object, object]:
    with watching(item.nodeid if item.get_closest_marker("fast") else None) as tried:
        result = yield
        started = list(tried)
    if started:
        # Raised inside the test, StartedInFastTier may have been caught there.
        pytest.fail(
            f"{item.nodeid} is in the fast tier but started {started}: use a fixture "
            "declared @starts_servers, or mark the test service",
            pytrace=False,
        )
    return result


@pytest.hookimpl(wrapper=True)
def pytest_runtest_setup(item: pytest.Item) -> Generator[None, object, object]:
    return (yield from _watched(item))


@pytest.hookimpl(wrapper=True)
def pytest_runtest_call(item: pytest.Item) -> Generator[None, object, object]:
    return (yield from _watched(item))


@pytest.hookimpl(wrapper=True)
def pytest_runtest_teardown(item: pytest.Item) -> Generator[None, object, object]:
    return (yield from _watched(item))


# Audit hooks stay for the life of the process (this module is imported once): idle unless
# a test is being watched.
sys.addaudithook(_audit)
