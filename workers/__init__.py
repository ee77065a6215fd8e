"""The Celery worker: the one writer that decides every move."""

from __future__ import annotations

from typing import Any

from celery import signals

from referee import settings
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


def queues(role: str) -> list[str]:
    """The queues a worker of `role` consumes: deciding, delivery, or both ("all")."""
    chosen = settings.active()
    return {
        "decide": [chosen.queue],
        "deliver": [chosen.delivery_queue],
        "all": [chosen.queue, chosen.delivery_queue],
    }[role]


def run(argv: list[str], role: str = "all") -> None:
    """Start a worker with Celery's own command-line arguments, on `role`'s queues.

    Delivery has its own queue so that a slow mail server or webhook never
    takes a process that decides moves; a worker of role "all" serves both
    from one pool, and a deployment can run delivery-only workers as well.
    """
    from workers import tasks  # noqa: F401  (registers the tasks)

    pool = any(arg in ("-P", "--pool") or arg.startswith("--pool=") for arg in argv)
    given = any(arg in ("-Q", "--queues") or arg.startswith("--queues=") for arg in argv)
    chosen = [] if given else ["--queues", ",".join(queues(role))]
    app.worker_main(["worker", *([] if pool else DEFAULT_POOL), *chosen, *argv])


def run_beat(argv: list[str]) -> None:
    """Start Celery beat, which sends the periodic sweeps (`REFEREE_SWEEPS=beat`)."""
    app.start(["beat", *argv])
