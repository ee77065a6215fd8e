"""The worker's tasks: each the service's job of the same name, run on this worker's referee.

Deciding (`referee.service.deciding.decide`) is safe to run any number of
times for the same submission; so are the sweeps and delivery.
"""

from __future__ import annotations

from typing import Any

from celery import Celery

from referee.service import Referee
from referee.service.jobs import JOBS


def register(referee: Referee) -> Celery:
    """The referee's Celery app, with every job registered as the task of its name."""
    app = referee.queue.celery
    for name in JOBS:

        def run(*args: Any, _name: str = name) -> Any:
            return referee.run_job(_name, args)

        app.task(name=name)(run)
    return app
