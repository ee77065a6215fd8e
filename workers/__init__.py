"""The Celery worker: the one writer that decides every move."""

from __future__ import annotations

from typing import Any

from celery import signals

from referee.queue import app, start_sweeper
from referee.store import db


@signals.worker_process_init.connect
def _fresh_connections(**_kwargs: Any) -> None:
    # A forked pool process must not share its parent's database connections.
    db.dispose()


@signals.worker_ready.connect
def _sweep(**_kwargs: Any) -> None:
    start_sweeper()


def run(argv: list[str]) -> None:
    """Start a worker with Celery's own command-line arguments."""
    from workers import tasks  # noqa: F401  (registers the tasks)

    app.worker_main(["worker", *argv])
