"""Expensive reads take turns, so that however many arrive, moves are answered at once.

A game page, a board picture, a record or `verify` is Python work of a few
to hundreds of milliseconds. Threads of one process do not run Python side
by side, and while one computes, every other thread waits for the
interpreter each time it returns from the database or Redis: with many
expensive reads at once, a move's dozen round trips each wait behind them.
So each process computes at most `REFEREE_EXPENSIVE_READS` of them at once
(default 1: more would not run in parallel anyway); the others sleep until
their turn, which costs no CPU, and past `REFEREE_EXPENSIVE_WAIT` seconds
are answered 503 with `Retry-After`. Moves, states and everything else
never wait here.
"""

from __future__ import annotations

import functools
import threading
from collections.abc import Callable
from typing import ParamSpec, TypeVar

from api.http.context import settings
from api.http.errors import Problem

P = ParamSpec("P")
R = TypeVar("R")

# One gate per size asked for: a process has one setting, tests several.
_gates: dict[int, threading.Semaphore] = {}
_gates_lock = threading.Lock()

# What OpenAPI says of the 503 a read that waited too long gets.
BUSY = "busy: too many expensive reads at once on this server; retry after `Retry-After` seconds"


def _gate(size: int) -> threading.Semaphore:
    with _gates_lock:
        return _gates.setdefault(size, threading.Semaphore(size))


def taking_turns(handler: Callable[P, R]) -> Callable[P, R]:
    """Run `handler` only while this process computes fewer expensive reads than allowed."""

    @functools.wraps(handler)
    def waiting_its_turn(*args: P.args, **kwargs: P.kwargs) -> R:
        chosen = settings()
        gate = _gate(chosen.expensive_reads)
        if not gate.acquire(timeout=chosen.expensive_wait):
            raise Problem(
                503,
                "busy",
                "the server is busy with other reads of this kind; try again soon",
                headers={"Retry-After": "1"},
            )
        try:
            return handler(*args, **kwargs)
        finally:
            gate.release()

    return waiting_its_turn
