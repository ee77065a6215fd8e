"""The Celery worker: the one writer that decides every move."""

from __future__ import annotations

from typing import Any

from celery import signals

from referee.queue import app, start_sweeper, sweeps_in_workers
from referee.store import db


@signals.worker_process_init.connect
def _fresh_connections(**_kwargs: Any) -> None:
    # A forked pool process must not share its parent's database connections.
    db.dispose()


@signals.worker_ready.connect
def _sweep(**_kwargs: Any) -> None:
    if sweeps_in_workers():
        start_sweeper()


# One process per core (Celery's prefork default): once deciding became a
# handful of Core statements, threads spent more on contending for the GIL
# than on waiting for the database. bench/service.py on 2 cores: 2 processes
# gave 49% of the floor's throughput, 8 threads 29-33%, 4 processes 39%.
DEFAULT_POOL = ["--pool", "prefork"]


def run(argv: list[str]) -> None:
    """Start a worker with Celery's own command-line arguments."""
    from workers import tasks  # noqa: F401  (registers the tasks)

    chosen = any(arg in ("-P", "--pool") or arg.startswith("--pool=") for arg in argv)
    app.worker_main(["worker", *([] if chosen else DEFAULT_POOL), *argv])


def run_beat(argv: list[str]) -> None:
    """Start Celery beat, which sends the periodic sweeps (`REFEREE_SWEEPS=beat`)."""
    app.start(["beat", *argv])
