"""The Celery app and the names of its tasks, shared by the API and the worker.

The API only enqueues by task name; the bodies live in `workers.tasks`,
which the app imports by name when a worker starts (and, in the embedded
default, in the API's own process, where tasks run eagerly). So the two
layers above never import each other.

Without `REDIS_URL` there is no broker: tasks run in-process as they are
enqueued (Celery eager mode), which is the embedded default.
"""

from __future__ import annotations

import logging
import os
import threading
from collections.abc import Callable, Iterator
from contextlib import contextmanager, suppress
from typing import Any

import redis
from celery import Celery

DECIDE = "referee.decide"
SWEEP = "referee.sweep"
NOOP = "referee.noop"
DELIVER = "referee.deliver"
DEADLINES = "referee.deadlines"
# The periodic sweeps: pending submissions, due mail and webhooks, deadlines.
SWEEPS = (SWEEP, DELIVER, DEADLINES)

_log = logging.getLogger(__name__)


def sweep_every() -> float:
    return float(os.environ.get("REFEREE_SWEEP_EVERY", "10"))


def make_app() -> Celery:
    broker = os.environ.get("REDIS_URL")
    app = Celery("referee", include=["workers.tasks", "workers.notify"])
    app.conf.update(
        broker_url=broker or "memory://",
        task_always_eager=not broker,
        task_ignore_result=True,
        # A task is acknowledged once it has run, and requeued if its worker
        # dies: deciding is idempotent, so running one twice is harmless.
        task_acks_late=True,
        task_reject_on_worker_lost=True,
        worker_prefetch_multiplier=1,
        task_default_queue=os.environ.get("REFEREE_QUEUE", "referee"),
        broker_connection_retry_on_startup=True,
        broker_transport_options={"visibility_timeout": 300},
        worker_hijack_root_logger=False,
        # What `referee beat` sends; used only where REFEREE_SWEEPS=beat.
        beat_schedule={task: {"task": task, "schedule": sweep_every()} for task in SWEEPS},
    )
    return app


app = make_app()


def eager() -> bool:
    return bool(app.conf.task_always_eager)


def enqueue(name: str, *args: Any) -> None:
    """Run task `name` soon: on a worker, or right here in the embedded default."""
    if eager():
        app.loader.import_default_modules()
        app.tasks[name].apply(args=args)
    else:
        app.send_task(name, args=args)


_redis: list[redis.Redis] = []


def _client() -> redis.Redis:
    if not _redis:
        _redis.append(redis.Redis.from_url(os.environ["REDIS_URL"]))
    return _redis[0]


def _channel(submission_id: str) -> str:
    return f"referee:decided:{submission_id}"


def announce_decided(submission_id: str) -> None:
    """Tell whoever waits on this submission (`?wait=`) that it has been decided."""
    if not eager():
        _client().publish(_channel(submission_id), b"1")


@contextmanager
def decided_signal(submission_id: str) -> Iterator[Callable[[float], bool]]:
    """Listen for `announce_decided` of one submission; yields `wait(seconds) -> heard`.

    Subscribe before reading the submission's status, so an announcement
    made in between is not missed. In the embedded default decisions are
    made before the request goes on, so `wait` only sleeps.
    """
    if eager():
        yield lambda seconds: threading.Event().wait(seconds)
        return
    pubsub = _client().pubsub(ignore_subscribe_messages=True)  # type: ignore[no-untyped-call]
    listening = True
    try:
        pubsub.subscribe(_channel(submission_id))
    except redis.RedisError as error:
        # Redis out of reach (restarting): the caller reads the database
        # again after each wait, so waiting without listening only costs time.
        _log.warning("cannot listen for decisions (%s); polling instead", error)
        listening = False

    def wait(seconds: float) -> bool:
        nonlocal listening
        if listening:
            try:
                return pubsub.get_message(timeout=seconds) is not None
            except redis.RedisError as error:
                _log.warning("lost the decisions channel (%s); polling instead", error)
                listening = False
        threading.Event().wait(seconds)
        return False

    try:
        yield wait
    finally:
        with suppress(redis.RedisError):
            pubsub.close()


def sweep_after() -> float:
    """How old a pending submission must be before the sweep enqueues it again."""
    return float(os.environ.get("REFEREE_SWEEP_AFTER", "30"))


def sweeps_in_workers() -> bool:
    """Whether each worker runs the sweeps itself (`REFEREE_SWEEPS=worker`, the default).

    With `REFEREE_SWEEPS=beat` one `referee beat` process (Celery beat) sends
    them instead, and workers only run tasks.
    """
    mode = os.environ.get("REFEREE_SWEEPS", "worker")
    if mode not in ("worker", "beat"):
        raise ValueError(f"REFEREE_SWEEPS must be 'worker' or 'beat', not {mode!r}")
    return mode == "worker"


def start_sweeper() -> threading.Thread:
    """A daemon thread that enqueues the sweeps every `REFEREE_SWEEP_EVERY` seconds.

    Like Celery beat, but inside the worker (or `referee serve` alone): the
    sweeps for pending submissions, due outbox rows and deadlines are all
    idempotent, so a sweeper per worker does no harm. Deadlines live in the
    database; nothing waits on the broker with a long ETA.
    """
    stop = threading.Event()

    def loop() -> None:
        while not stop.wait(sweep_every()):
            try:
                for task in SWEEPS:
                    enqueue(task)
            except Exception:
                _log.exception("the sweep could not be enqueued; trying again later")

    thread = threading.Thread(target=loop, name="referee-sweeper", daemon=True)
    thread.start()
    return thread
