"""The worker's tasks: decide a submission, sweep up pending ones, and a no-op.

Deciding is `referee.store.deciding.decide`, which is safe to run any number of
times for the same submission. The sweep puts back on the queue every
submission left pending for longer than `REFEREE_SWEEP_AFTER` seconds: a
broker that lost its messages, or an API that could not reach it, only
delays a decision.
"""

from __future__ import annotations

import logging
from dataclasses import asdict
from datetime import UTC, datetime, timedelta

from referee import settings
from referee.queue import (
    DECIDE,
    NOOP,
    SWEEP,
    announce_decided,
    app,
    deliver_soon,
    enqueue,
)
from referee.store import deciding, submissions
from referee.store.clock import stamp
from referee.store.db import transaction

_log = logging.getLogger(__name__)


@app.task(name=DECIDE)
def decide(submission_id: str) -> None:
    decided = deciding.decide(submission_id)
    if decided.submission is None:
        _log.warning("submission %s does not exist", submission_id)
    else:
        announce_decided({**asdict(decided.submission), "game_id": decided.game_id})
        if decided.news_due:
            # Send the news now rather than at the next sweep: on the delivery
            # queue, or the embedded default's delivery threads, never here.
            deliver_soon()


@app.task(name=SWEEP)
def sweep() -> int:
    before = stamp(datetime.now(UTC) - timedelta(seconds=settings.active().sweep_after))
    with transaction() as session:
        pending = submissions.pending_before(session, before)
    for submission_id in pending:
        enqueue(DECIDE, submission_id)
    if pending:
        _log.info("sweep: %d pending submissions enqueued again", len(pending))
    return len(pending)


@app.task(name=NOOP)
def noop(*_args: object) -> None:
    """Does nothing: the benchmark's floor enqueues it."""
