"""HTTP load against gunicorn and two workers on loopback (bench/load.py, Python engine).

Bounded: a few seconds of moves, then of reads, from 8 keep-alive
connections, only to 127.0.0.1. Every answer must be a success (201 for a
move: accepted once decided; 200 for a read), and every accepted move must
be in the log. The load comes from Python threads, not wrk, so the test
needs nothing the environment lacks; PostgreSQL and Redis are the
session's, from wheels (tests/servers.py).
"""

from __future__ import annotations

import os
from collections.abc import Iterator

import pytest

from bench.load import load
from bench.service import Stack, start_stack
from tests.servers import pg_admin, redis_url
from tests.tiers import starts_servers

SECONDS = 4
THREADS = 8


@pytest.fixture(scope="module")
@starts_servers
def stack() -> Iterator[Stack]:
    with pytest.MonkeyPatch.context() as patch:
        patch.setenv("REFEREE_BENCH_PG", pg_admin())
        patch.setenv("REFEREE_BENCH_REDIS", redis_url())
        # The workers' default pool: a process per core.
        started = start_stack(2, "prefork", os.cpu_count() or 1, workers=2)
        yield started
        started.stop()


def test_http_load_has_no_errors(stack: Stack) -> None:
    result = load(stack, SECONDS, THREADS, games_count=48, engine="python")
    print("\n" + "\n".join(result.lines()))
    assert result.errors() == 0, (result.moves, result.reads)
    assert result.moves["pending"] == result.moves["refused"] == result.moves["failed"] == 0
    assert result.moves["accepted"] >= 20, "too few moves to say anything"
    assert result.reads["requests"] >= 100
    # Moves still in flight when the load stopped are accepted too, but unseen by it.
    accepted = result.moves["accepted"]
    assert accepted <= result.accepted_in_database <= accepted + THREADS
